/// Any event (the documents' root `KsEvent`): every event has a settable W3C ``TraceContext``.
///
/// Events are classes shared between the app and the MasterController's threads; their values
/// are immutable but for the trace context, which lives behind a lock.
public protocol KsEvent: AnyObject, Sendable {
    /// The event's W3C trace context; `nil` until set (the MC then starts a new trace).
    var traceContext: TraceContext? { get set }
}

/// An event of the MC's event API (the samples' `event as? KSMEvent`).
public protocol KSMEvent: KsEvent {}

/// An event of the MC's macro API: what `receive(_:)` takes and returns, and what the
/// `sendEvent2MasterController` completion delivers for the caller to downcast.
public protocol KsMacroEvent: KSMEvent {}

/// A result event: every result carries a status and, on failure, an error description.
public protocol KSMResultEvent: KsMacroEvent {
    /// ``KSMEventStatusType/kOk`` on success, else the documented status of the failure.
    var status: KSMEventStatusType { get }
    /// The error code if an error occurred, else 0.
    var errorCode: Int { get }
    /// What went wrong, or empty.
    var errorDescription: String { get }
}

extension KSMResultEvent {
    /// Whether an error occurred (the status is not ``KSMEventStatusType/kOk``).
    public var hasErrorOccurred: Bool { status != .kOk }
}

/// Identifies a user: the tenant and the user's id.
public struct KsUserIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The tenant the user belongs to.
    public let tenantId: String
    /// The user's id at the IDP; empty before activation has named the user.
    public let userId: String

    /// A user of a tenant.
    ///
    /// - Parameters:
    ///   - tenantId: The tenant the user belongs to.
    ///   - userId: The user's id at the IDP; empty at activation.
    public init(tenantId: String, userId: String) {
        self.tenantId = tenantId
        self.userId = userId
    }

    /// `tenant/user`, as logs and test failures show it.
    public var description: String { "\(tenantId)/\(userId)" }
}

/// The Java name of the user identifier.
public typealias UserIdentifier = KsUserIdentifier

/// An activated user as the Start result lists it.
public struct KsUserDetails: Sendable, Hashable {
    /// Who the user is.
    public let userIdentifier: KsUserIdentifier
    /// The name to show for the user; this simulation shows the user id.
    public let displayUsername: String
    /// The user's e-mail address to show; empty in this simulation.
    public let displayEmail: String
}

/// How the user's credentials on the device are protected.
public enum KSMAuthenticationMode: Int, Sendable, CaseIterable {
    /// No interactive authentication is required to access user credentials.
    case no
    /// Biometric authentication is required.
    case biometric
    /// Password authentication is required.
    case password
    /// Device PIN authentication is required.
    case pin

    /// The documents' Java spelling of ``no``.
    public static let NO = KSMAuthenticationMode.no
    /// The documents' Java spelling of ``biometric``.
    public static let BIOMETRIC = KSMAuthenticationMode.biometric
    /// The documents' Java spelling of ``password``.
    public static let PASSWORD = KSMAuthenticationMode.password
    /// The documents' Java spelling of ``pin``.
    public static let PIN = KSMAuthenticationMode.pin
    /// The Objective-C spellings.
    public static let KSMAuthenticationModeNo = KSMAuthenticationMode.no
    /// The Objective-C spelling of ``biometric``.
    public static let KSMAuthenticationModeBiometric = KSMAuthenticationMode.biometric
    /// The Objective-C spelling of ``password``.
    public static let KSMAuthenticationModePassword = KSMAuthenticationMode.password
    /// The Objective-C spelling of ``pin``.
    public static let KSMAuthenticationModePin = KSMAuthenticationMode.pin
}

/// The Java name of the authentication mode.
public typealias AuthenticationMode = KSMAuthenticationMode

/// The state of the SDK after Start.
public enum KSMSdkState: Int, Sendable, CaseIterable {
    /// The SDK failed to initialise.
    case uninitialised
    /// Initialised, with no activated users: activate one.
    case activationRequired
    /// Initialised, with activated users (listed in the result): log one in.
    case loginRequired
    /// Initialised, but an internal error occurred during activation or deactivation.
    case unidentified

    /// The documents' Java spelling of ``uninitialised``.
    public static let UNINITIALISED = KSMSdkState.uninitialised
    /// The documents' Java spelling of ``activationRequired``.
    public static let ACTIVATION_REQUIRED = KSMSdkState.activationRequired
    /// The documents' Java spelling of ``loginRequired``.
    public static let LOGIN_REQUIRED = KSMSdkState.loginRequired
    /// The documents' Java spelling of ``unidentified``.
    public static let UNIDENTIFIED = KSMSdkState.unidentified
    /// The Objective-C spelling of ``uninitialised``.
    public static let KSMUninitialised = KSMSdkState.uninitialised
    /// The Objective-C spelling of ``activationRequired``.
    public static let KSMActivationRequired = KSMSdkState.activationRequired
    /// The Objective-C spelling of ``loginRequired``.
    public static let KSMLoginRequired = KSMSdkState.loginRequired
    /// The Objective-C spelling of ``unidentified``.
    public static let KSMUnidentified = KSMSdkState.unidentified
}

/// The Java name of the SDK state.
public typealias SdkState = KSMSdkState
