/// Initialises the MasterController; answered by ``KSMStartResultEvent``. Post it before any
/// other event.
public final class KSMStartEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The app's language tag, such as `"de"` or `"de-CH"`; Start fails with `kInvalidParameter`
    /// for anything else.
    public let locale: String
    /// The app's name, 1 to 32 UTF-8 bytes; Start fails with `kInvalidParameter` otherwise.
    public let appName: String

    /// A Start event.
    ///
    /// - Parameters:
    ///   - traceContext: The W3C trace context to continue; `nil` starts a new trace.
    ///   - locale: The app's language tag, such as `"de"` or `"de-CH"`.
    ///   - appName: The app's name, 1 to 32 UTF-8 bytes.
    public init(traceContext: TraceContext? = nil, locale: String = "en", appName: String = "IdpHarness") {
        self.trace = TraceContextSlot(traceContext)
        self.locale = locale
        self.appName = appName
    }
}

/// The state of the SDK after Start: whether to activate or log in, and the activated users.
public final class KSMStartResultEvent: KSMResultEvent {
    /// ``KSMEventStatusType/kOk`` if Start succeeded, else why it failed.
    public let status: KSMEventStatusType
    public let errorCode: Int
    public let errorDescription: String
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// Whether the app must activate a user or can log one in; ``KSMSdkState/uninitialised`` when
    /// the first Start failed.
    public let sdkState: KSMSdkState
    /// The activated users, in activation order.
    public let userList: [KsUserIdentifier]
    /// The activated users as the documents' `userDetailsList`, in activation order; this
    /// simulation knows no display name (it shows the user id) and no e-mail (empty).
    public let userDetailsList: [KsUserDetails]

    init(status: KSMEventStatusType, errorDescription: String = "", sdkState: KSMSdkState, userList: [KsUserIdentifier]) {
        self.trace = TraceContextSlot()
        self.status = status
        self.errorCode = status == .kOk ? 0 : status.rawValue
        self.errorDescription = errorDescription
        self.sdkState = sdkState
        self.userList = userList
        self.userDetailsList = userList.map { KsUserDetails(userIdentifier: $0, displayUsername: $0.userId, displayEmail: "") }
    }
}

/// Asks for AST client data and a fresh PKCE challenge; answered by
/// ``KSMGetAstClientDataResultEvent``.
public final class KSMGetAstClientDataEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The user the data is for; the user id is empty at activation.
    public let userIdentifier: KsUserIdentifier

    /// The IdpSdk samples' form (no user id).
    public init(tenantId: String, traceContext: TraceContext? = nil) {
        self.userIdentifier = KsUserIdentifier(tenantId: tenantId, userId: "")
        self.trace = TraceContextSlot(traceContext)
    }

    /// The TWV samples' form; pass an empty user id at activation.
    public init(userIdentifier: KsUserIdentifier, traceContext: TraceContext? = nil) {
        self.userIdentifier = userIdentifier
        self.trace = TraceContextSlot(traceContext)
    }

    /// The tenant of ``userIdentifier``.
    public var tenantId: String { userIdentifier.tenantId }
}

/// AST client data and the PKCE challenge of a verifier the MC keeps.
public final class KSMGetAstClientDataResultEvent: KSMResultEvent {
    /// ``KSMEventStatusType/kOk`` if the data and the challenge are there, else why not.
    public let status: KSMEventStatusType
    public let errorCode: Int
    public let errorDescription: String
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The opaque AST client data (`X-KOBIL-ASTCLIENTDATA`).
    public let clientData: String
    /// The AST client id (`X-KOBIL-ASTCLIENTID`); all zeros for a new user.
    public let astClientId: String
    /// The RFC 7636 S256 challenge of the verifier the MC keeps for SetAuthorisationCode.
    public let codeChallenge: String
    /// `S256`.
    public let codeChallengeMethod: String

    /// The TWV sample's name of ``astClientId``.
    public var clientId: String { astClientId }
    /// The ObjC header's spelling of ``codeChallenge``.
    public var codeChallange: String { codeChallenge }
    /// The ObjC header's spelling of ``codeChallengeMethod``.
    public var codeChallangeMethod: String { codeChallengeMethod }

    init(status: KSMEventStatusType, errorDescription: String = "", clientData: String = "", astClientId: String = "", codeChallenge: String = "", codeChallengeMethod: String = "",
         traceContext: TraceContext? = nil) {
        self.trace = TraceContextSlot(traceContext)
        self.status = status
        self.errorCode = status == .kOk ? 0 : status.rawValue
        self.errorDescription = errorDescription
        self.clientData = clientData
        self.astClientId = astClientId
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
    }
}

/// Exchanges an authorization code (with the kept PKCE verifier) for tokens at the IDP, and
/// activates or logs the user in; answered by ``KSMSetAuthorisationCodeResultEvent``.
public final class KSMSetAuthorisationCodeEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The user the code was issued for; the user id is empty at activation.
    public let userIdentifier: KsUserIdentifier
    /// How the user unlocks the stored tokens later (``KSMAuthenticationMode/biometric`` asks the
    /// biometric prompt first).
    public let authenticationMode: KSMAuthenticationMode
    /// The authorization code the IDP redirected with (the IdpSdk result's code).
    public let authorisationCode: String
    /// The IDP client the code was issued to.
    public let clientId: String

    /// The IdpSdk samples' form.
    public init(tenantId: String, authenticationMode: KSMAuthenticationMode, authorisationCode: String, clientId: String, traceContext: TraceContext? = nil) {
        self.userIdentifier = KsUserIdentifier(tenantId: tenantId, userId: "")
        self.authenticationMode = authenticationMode
        self.authorisationCode = authorisationCode
        self.clientId = clientId
        self.trace = TraceContextSlot(traceContext)
    }

    /// The TWV samples' form. A non-empty user id must be the user the code was issued for.
    public init(userIdentifier: KsUserIdentifier, authenticationMode: KSMAuthenticationMode, authorisationCode: String, clientId: String, traceContext: TraceContext? = nil) {
        self.userIdentifier = userIdentifier
        self.authenticationMode = authenticationMode
        self.authorisationCode = authorisationCode
        self.clientId = clientId
        self.trace = TraceContextSlot(traceContext)
    }

    /// The tenant of ``userIdentifier``.
    public var tenantId: String { userIdentifier.tenantId }
}

/// The outcome of SetAuthorisationCode: ``KSMEventStatusType/kOk`` when the user is activated or
/// logged in.
public final class KSMSetAuthorisationCodeResultEvent: KSMResultEvent {
    public let status: KSMEventStatusType
    public let errorCode: Int
    public let errorDescription: String
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The user the tokens belong to, on success.
    public let userIdentifier: KsUserIdentifier?

    init(status: KSMEventStatusType, errorCode: Int? = nil, errorDescription: String = "", userIdentifier: KsUserIdentifier? = nil, traceContext: TraceContext? = nil) {
        self.trace = TraceContextSlot(traceContext)
        self.status = status
        self.errorCode = errorCode ?? (status == .kOk ? 0 : status.rawValue)
        self.errorDescription = errorDescription
        self.userIdentifier = userIdentifier
    }
}

/// The answer to an event the MasterController does not handle.
public final class KSMStatusResultEvent: KSMResultEvent {
    /// The status of the unhandled event (``KSMEventStatusType/kOk`` only for one the MC ignores on
    /// purpose).
    public let status: KSMEventStatusType
    public let errorCode: Int
    public let errorDescription: String
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot

    init(status: KSMEventStatusType, errorDescription: String) {
        self.trace = TraceContextSlot()
        self.status = status
        self.errorCode = status.rawValue
        self.errorDescription = errorDescription
    }
}
