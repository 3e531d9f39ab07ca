/// Exchanges the logged-in user's access token for a token for another audience
/// (`KSMExchangeIamTokenEvent`; Java `ExchangeIamTokenEvent`): the only way an app gets a token,
/// as the MC never hands out its own. Answered by ``KSMExchangeIamTokenResultEvent`` after a
/// successful SetAuthorisationCode or OfflineLogin, by a ``KSMInvalidStateEvent`` before.
///
/// The MC refreshes its access token first if it has expired (or always, with `forceUpdate`),
/// once however many exchanges wait at the same moment, then asks the IDP for an RFC 8693 token
/// exchange.
public final class KSMExchangeIamTokenEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The client the new token is for; must differ from the client of the login.
    public let audience: String
    /// Refresh the MC's access token even if it is still valid.
    public let forceUpdate: Bool

    /// An ExchangeIamToken event.
    ///
    /// - Parameters:
    ///   - audience: The service the exchanged token is for.
    ///   - forceUpdate: Refresh the MC's access token even if it is still valid.
    ///   - traceContext: The W3C trace context to continue; `nil` starts a new trace.
    public init(audience: String, forceUpdate: Bool = false, traceContext: TraceContext? = nil) {
        self.audience = audience
        self.forceUpdate = forceUpdate
        self.trace = TraceContextSlot(traceContext)
    }
}

/// The Java name of ``KSMExchangeIamTokenEvent``.
public typealias ExchangeIamTokenEvent = KSMExchangeIamTokenEvent

/// The exchanged token, or why there is none (`KSMExchangeIamTokenResultEvent`).
///
/// The documents list no statuses for it; these are chosen:
/// - ``KSMEventStatusType/kOk``: ``token`` is the new token;
/// - ``KSMEventStatusType/kInvalidParameter``: the audience is empty or contains spaces;
/// - ``KSMEventStatusType/kFailed`` with `errorCode` 800000287: the audience is the login's own
///   client, whose token would carry the 'ast-client' role (the documented error code);
/// - ``KSMEventStatusType/kNoTokenDataAvailable``: the tokens were cleared (logout);
/// - ``KSMEventStatusType/kTokenDataIsOutdated``: the access token expired and the IDP refused the
///   refresh (expired, revoked, reused): log in again;
/// - ``KSMEventStatusType/kTemporaryLocked`` / ``KSMEventStatusType/kPinBlocked``: the account is locked;
/// - ``KSMEventStatusType/kCannotAcquireTokenData``: the IDP could not be reached, the refresh
///   timed out, or the IDP refused the exchange.
public final class KSMExchangeIamTokenResultEvent: KSMResultEvent, CustomStringConvertible {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// ``KSMEventStatusType/kOk`` with a token, else why there is none.
    public let status: KSMEventStatusType
    public let errorCode: Int
    public let errorDescription: String
    /// The token for the audience; empty on failure.
    public let token: String

    /// The documented error code of an audience whose token would carry the 'ast-client' role.
    public static let astClientRoleErrorCode = 800_000_287

    init(status: KSMEventStatusType, errorCode: Int? = nil, errorDescription: String = "", token: String = "") {
        self.status = status
        self.errorCode = errorCode ?? (status == .kOk ? 0 : status.rawValue)
        self.errorDescription = errorDescription
        self.token = token
        self.trace = TraceContextSlot()
    }

    /// Never shows the token.
    public var description: String { "KSMExchangeIamTokenResultEvent(\(status)\(errorDescription.isEmpty ? "" : ", \(errorDescription)"))" }
}
