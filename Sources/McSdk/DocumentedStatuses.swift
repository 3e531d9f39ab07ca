import IdpSdk

/// A result event whose statuses the documents list (`ast_event_list`, `base_event`): the MC
/// answers it with those statuses only.
public protocol KSMDocumentedResultEvent: KSMResultEvent {
    /// The statuses the documents list for this result, in their order; `nil` where the
    /// documents list none (then the type's documentation says which it uses and why).
    static var documentedStatuses: [KSMEventStatusType]? { get }
}

extension KSMStartResultEvent: KSMDocumentedResultEvent {
    public static let documentedStatuses: [KSMEventStatusType]? = [.kOk, .kInternalError, .kInvalidState, .kInvalidParameter, .kFailed]
}

extension KSMRestartResultEvent: KSMDocumentedResultEvent {
    public static let documentedStatuses: [KSMEventStatusType]? = [.kOk, .kInternalError, .kInvalidState, .kInvalidParameter, .kFailed]
}

extension KSMGetAstClientDataResultEvent: KSMDocumentedResultEvent {
    public static let documentedStatuses: [KSMEventStatusType]? = [.kOk, .kInternalError, .kInvalidState, .kFailed]
}

extension KSMSetAuthorisationCodeResultEvent: KSMDocumentedResultEvent {
    public static let documentedStatuses: [KSMEventStatusType]? = [.kOk, .kInternalError, .kInvalidState, .kFailed, .kCannotAcquireTokenData]
}

extension KSMOfflineLoginResultEvent: KSMDocumentedResultEvent {
    public static let documentedStatuses: [KSMEventStatusType]? = [
        .kOk, .kInternalError, .kInvalidState, .kInvalidParameter, .kFailed, .kInvalidUserId, .kTemporaryLocked,
        .kPinBlocked, .kLoginRequired, .kOfflineNotActivated, .kNoTokenDataAvailable, .kCannotAcquireTokenData,
    ]
}

extension KSMStatusResultEvent: KSMDocumentedResultEvent {
    public static let documentedStatuses: [KSMEventStatusType]? = [.kOk, .kNotSupported, .kInvalidParameter, .kFailed]
}

extension KSMLoginResultEvent: KSMDocumentedResultEvent {
    public static let documentedStatuses: [KSMEventStatusType]? = [
        .kOk, .kInternalError, .kInvalidState, .kInvalidParameter, .kFailed, .kUpdateAvailable, .kUpdateNecessary,
        .kUnknownVersion, .kUnknownClientType, .kWrongCredentials, .kUnknownCertificate, .kLockedCertificate,
        .kLockedUser, .kRegisterApp, .kTemporaryLocked, .kNotReachable, .kNoTokenDataAvailable, .kCannotAcquireTokenData,
    ]
}

extension KSMClearIamTokenCacheResultEvent: KSMDocumentedResultEvent {
    /// None: the documents give this result no status. It is always `kOk`.
    public static let documentedStatuses: [KSMEventStatusType]? = nil
}

extension KSMExchangeIamTokenResultEvent: KSMDocumentedResultEvent {
    /// None: the documents give only the token and the error code 800000287; the statuses used
    /// are listed on the type.
    public static let documentedStatuses: [KSMEventStatusType]? = nil
}

extension KSMGetInformationResultEvent: KSMDocumentedResultEvent {
    /// None: the documents give this result no status. It is always `kOk`.
    public static let documentedStatuses: [KSMEventStatusType]? = nil
}

extension KSMEventStatusType {
    /// An MC status for how an IdpSdk flow failed, for apps that report IdpSdk and MC failures
    /// alike (``MasterController/loginAfterRestart(_:authenticationMode:idpSdk:clientId:interactionInterface:traceParent:)``
    /// uses it): a lock is ``kTemporaryLocked`` / ``kPinBlocked``; wrong answers
    /// ``kWrongCredentials``; an expired activation code ``kActivationCodeExpired``; an IDP out of
    /// reach ``kNotReachable``, a broken connection ``kConnectionLost``; a cancelled flow
    /// ``kUserCancel``; anything else ``kCannotAcquireAuthorizationCode``.
    public init(idpSdkError error: IdpSdkError) {
        if let lockout = error.lockoutInformation {
            self.init(lockout: lockout)
            return
        }
        guard error.subsystem == IdpSdkError.sdkSubsystem, let code = error.code else {
            self = .kCannotAcquireAuthorizationCode
            return
        }
        self = switch code {
        case .credentialsRejected, .tooManyAttempts: .kWrongCredentials
        case .activationCodeExpired: .kActivationCodeExpired
        case .idpUnreachable, .certificatePinning: .kNotReachable
        case .connectionLost: .kConnectionLost
        case .cancelled: .kUserCancel
        default: .kCannotAcquireAuthorizationCode
        }
    }
}
