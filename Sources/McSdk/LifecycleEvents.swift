/// Reinitialises the MasterController, as after an app restart; answered by
/// ``KSMRestartResultEvent``. Every user is then LOGIN_REQUIRED again; stored tokens are kept, so
/// ``KSMOfflineLoginEvent`` can log the user back in.
public final class KSMRestartEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The app's language tag, such as `"de"` or `"de-CH"`; Restart fails with `kInvalidParameter`
    /// for anything else.
    public let locale: String
    /// The app's name, 1 to 32 UTF-8 bytes; Restart fails with `kInvalidParameter` otherwise.
    public let appName: String

    /// A Restart event.
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

/// The state of the SDK after Restart, as ``KSMStartResultEvent`` reports it after Start.
public final class KSMRestartResultEvent: KSMResultEvent {
    /// ``KSMEventStatusType/kOk`` if Restart succeeded, else why it failed.
    public let status: KSMEventStatusType
    public let errorCode: Int
    public let errorDescription: String
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// Whether the app must activate a user or can log one in.
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

/// Logs a user in with the stored tokens, without credentials ("Stay Logged In"); answered by
/// ``KSMOfflineLoginResultEvent``.
///
/// A live access token is enough; else the MC refreshes it with the refresh token, else with the
/// offline token (after the biometric prompt for ``KSMAuthenticationMode/biometric``). Not for
/// users in ``KSMAuthenticationMode/password`` or ``KSMAuthenticationMode/pin``.
///
/// Result statuses, only those the documents list for OfflineLoginResult:
/// - ``KSMEventStatusType/kOk``: logged in;
/// - ``KSMEventStatusType/kInvalidState``: no Start or Restart yet;
/// - ``KSMEventStatusType/kInvalidParameter``: a user identifier without tenant or user id;
/// - ``KSMEventStatusType/kInvalidUserId``: the user is not activated here, or no user was given
///   and none has logged in yet;
/// - ``KSMEventStatusType/kOfflineNotActivated``: the user's mode is PASSWORD or PIN;
/// - ``KSMEventStatusType/kNoTokenDataAvailable``: no tokens are stored (after `CLEAR_ALL`);
/// - ``KSMEventStatusType/kLoginRequired``: the IDP refused the tokens (expired — Offline Session
///   Max —, revoked, reused): log in at the IDP;
/// - ``KSMEventStatusType/kTemporaryLocked`` / ``KSMEventStatusType/kPinBlocked``: the account is
///   locked for now / for good;
/// - ``KSMEventStatusType/kFailed``: the biometric prompt was cancelled or failed (`errorCode` is
///   `802000000 +` the ``BiometricPromptError`` code), or no prompt is configured (`publicKeyInconsistent`);
/// - ``KSMEventStatusType/kCannotAcquireTokenData``: the IDP did not answer, the connection broke
///   (after one retry), or the refresh timed out;
/// - ``KSMEventStatusType/kInternalError``: the device storage fails.
public final class KSMOfflineLoginEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The user to log in; `nil`: the user of the last successful login.
    public let userIdentifier: KsUserIdentifier?

    /// An OfflineLogin event.
    ///
    /// - Parameters:
    ///   - userIdentifier: The user to log in; `nil`: the user of the last successful login.
    ///   - traceContext: The W3C trace context to continue; `nil` starts a new trace.
    public init(userIdentifier: KsUserIdentifier? = nil, traceContext: TraceContext? = nil) {
        self.userIdentifier = userIdentifier
        self.trace = TraceContextSlot(traceContext)
    }
}

/// The outcome of an OfflineLogin; see ``KSMOfflineLoginEvent`` for the statuses.
public final class KSMOfflineLoginResultEvent: KSMResultEvent {
    /// ``KSMEventStatusType/kOk`` if the user is logged in with the stored tokens, else why not.
    public let status: KSMEventStatusType
    public let errorCode: Int
    public let errorDescription: String
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The user logged in, on success.
    public let userIdentifier: KsUserIdentifier?

    init(status: KSMEventStatusType, errorCode: Int? = nil, errorDescription: String = "", userIdentifier: KsUserIdentifier? = nil) {
        self.trace = TraceContextSlot()
        self.status = status
        self.errorCode = errorCode ?? (status == .kOk ? 0 : status.rawValue)
        self.errorDescription = errorDescription
        self.userIdentifier = userIdentifier
    }
}

/// Clears a user's locally cached IAM tokens (logout); answered by
/// ``KSMClearIamTokenCacheResultEvent``. The documents suggest a ``KSMRestartEvent`` afterwards.
public final class KSMClearIamTokenCacheEvent: KsMacroEvent {
    /// Which tokens to clear.
    public enum ClearBehavior: Sendable, CaseIterable {
        /// Access, refresh and offline token: the next OfflineLogin fails with
        /// ``KSMEventStatusType/kNoTokenDataAvailable``; the user must log in at the IDP.
        case CLEAR_ALL
        /// Access and refresh token: the next OfflineLogin uses the offline token (and asks the
        /// biometric prompt in BIOMETRIC mode).
        case CLEAR_ACCESS_AND_REFRESH
        /// The offline token only; the user stays logged in while the access token lives.
        case CLEAR_OFFLINE
    }

    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The user whose tokens to clear.
    public let userIdentifier: KsUserIdentifier
    /// Which of the user's tokens to clear.
    public let clearBehavior: ClearBehavior

    /// The default signature clears all tokens.
    public init(userIdentifier: KsUserIdentifier, clearBehavior: ClearBehavior = .CLEAR_ALL, traceContext: TraceContext? = nil) {
        self.userIdentifier = userIdentifier
        self.clearBehavior = clearBehavior
        self.trace = TraceContextSlot(traceContext)
    }
}

/// The outcome of ClearIamTokenCache: ``KSMEventStatusType/kOk``, or
/// ``KSMEventStatusType/kInvalidUserId`` for a user not activated here, or
/// ``KSMEventStatusType/kInvalidState`` before Start.
public final class KSMClearIamTokenCacheResultEvent: KSMResultEvent {
    /// ``KSMEventStatusType/kOk`` when the tokens are cleared, else why not.
    public let status: KSMEventStatusType
    public let errorCode: Int
    public let errorDescription: String
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot

    init(status: KSMEventStatusType, errorDescription: String = "") {
        self.trace = TraceContextSlot()
        self.status = status
        self.errorCode = status == .kOk ? 0 : status.rawValue
        self.errorDescription = errorDescription
    }
}
