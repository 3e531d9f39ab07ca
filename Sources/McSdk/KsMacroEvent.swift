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
    public let tenantId: String
    public let userId: String

    public init(tenantId: String, userId: String) {
        self.tenantId = tenantId
        self.userId = userId
    }

    public var description: String { "\(tenantId)/\(userId)" }
}

/// The Java name of the user identifier.
public typealias UserIdentifier = KsUserIdentifier

/// An activated user as the Start result lists it.
public struct KsUserDetails: Sendable, Hashable {
    public let userIdentifier: KsUserIdentifier
    public let displayUsername: String
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

    public static let NO = KSMAuthenticationMode.no
    public static let BIOMETRIC = KSMAuthenticationMode.biometric
    public static let PASSWORD = KSMAuthenticationMode.password
    public static let PIN = KSMAuthenticationMode.pin
    /// The Objective-C spellings.
    public static let KSMAuthenticationModeNo = KSMAuthenticationMode.no
    public static let KSMAuthenticationModeBiometric = KSMAuthenticationMode.biometric
    public static let KSMAuthenticationModePassword = KSMAuthenticationMode.password
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

    public static let UNINITIALISED = KSMSdkState.uninitialised
    public static let ACTIVATION_REQUIRED = KSMSdkState.activationRequired
    public static let LOGIN_REQUIRED = KSMSdkState.loginRequired
    public static let UNIDENTIFIED = KSMSdkState.unidentified
    public static let KSMUninitialised = KSMSdkState.uninitialised
    public static let KSMActivationRequired = KSMSdkState.activationRequired
    public static let KSMLoginRequired = KSMSdkState.loginRequired
    public static let KSMUnidentified = KSMSdkState.unidentified
}

/// The Java name of the SDK state.
public typealias SdkState = KSMSdkState
