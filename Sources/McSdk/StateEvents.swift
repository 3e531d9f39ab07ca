import Foundation

/// The answer to an event that cannot be handled in the MasterController's current state
/// (`KSMInvalidStateEvent`): for example ``KSMExchangeIamTokenEvent`` before a login, or any event
/// but Start and the tracing configuration before Start, where the event's documented result has
/// no ``KSMEventStatusType/kInvalidState``. Post ``KSMGetStateEventEvent`` to learn what the MC
/// waits for.
public final class KSMInvalidStateEvent: KsMacroEvent, CustomStringConvertible {
    /// The trace context of the event that caused it.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// What the MC could not do, and why.
    public let errorMessage: String

    init(errorMessage: String) {
        self.errorMessage = errorMessage
        self.trace = TraceContextSlot()
    }

    /// `KSMInvalidStateEvent(<errorMessage>)`, for logs.
    public var description: String { "KSMInvalidStateEvent(\(errorMessage))" }
}

/// Asks the MasterController for the event it is waiting for (`KSMGetStateEventEvent`, sic): a
/// ``KSMStartLoginEvent`` while activated users wait for a login, else the current state as a
/// ``KSMStartResultEvent``; a ``KSMInvalidStateEvent`` before Start.
public final class KSMGetStateEventEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// A GetState event.
    public init() { trace = TraceContextSlot() }
}

/// An information event: after a successful Start or Restart with activated users, the SDK is
/// ready for a login (`StartLoginEvent`). Delivered to the registered ``KSMEventListener``s — not
/// on the first start with no user, and not after an activation (which is a login already).
public final class KSMStartLoginEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The activated users, in activation order.
    public let userList: [KsUserIdentifier]
    /// The activated users as the documents' `userDetailsList`, in activation order; this
    /// simulation knows no display name (it shows the user id) and no e-mail (empty).
    public let userDetailsList: [KsUserDetails]

    init(userList: [KsUserIdentifier]) {
        self.userList = userList
        self.userDetailsList = userList.map { KsUserDetails(userIdentifier: $0, displayUsername: $0.userId, displayEmail: "") }
        self.trace = TraceContextSlot()
    }
}

/// The state of the MC's connection to its server (`ConnectionState`).
public enum KSMConnectionState: Sendable, Equatable, CaseIterable {
    /// The connection broke during a request; the MC retries once.
    case CONNECTION_LOST
    /// The retry failed too (or the server was never reached); the MC restarts itself.
    case NOT_REACHABLE
    /// The server ended the session; the MC restarts at once. (Not produced by the in-process
    /// IDP, which has no sessions to end.)
    case DISCONNECTED
}

/// Tells the app that the connection to the IDP changed (`ServerConnectionEvent`); delivered to
/// the registered ``KSMEventListener``s. `CONNECTION_LOST`, then on a failed retry
/// `NOT_REACHABLE` followed by an automated restart (a ``KSMRestartResultEvent`` to the listeners).
public final class KSMServerConnectionEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// How the connection to the IDP changed.
    public let connectionState: KSMConnectionState

    init(connectionState: KSMConnectionState) {
        self.connectionState = connectionState
        self.trace = TraceContextSlot()
    }
}

/// The result of an SSMS login (`KSMLoginResultEvent`). This Maverick simulation never sends
/// one; the stay-logged-in sample builds one itself from a GetInformation result, so it exists
/// with the documented initialiser.
public final class KSMLoginResultEvent: KSMResultEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The login's status (the initialiser's `loginStatus`).
    public let status: KSMEventStatusType
    public let errorCode: Int
    public let errorDescription: String
    /// The one-time password of the SSMS login, as passed in; empty if none.
    public let otp: String
    /// The user who logged in; `nil` if unknown.
    public let userIdentifier: KsUserIdentifier?
    /// How many attempts are left before the user is locked, as passed in; the MC never reads it.
    public let retryCounter: Int
    /// How long to wait before the next attempt, as passed in; the MC never reads it, so its unit
    /// is the caller's.
    public let retryDelay: Int

    /// The Objective-C initialiser, as the stay-logged-in sample calls it.
    public init(loginStatus: KSMEventStatusType, andOtp otp: String, with userIdentifier: KsUserIdentifier?,
                withRetryCounter retryCounter: Int, withRetryDelay retryDelay: Int) {
        self.status = loginStatus
        self.errorCode = loginStatus == .kOk ? 0 : loginStatus.rawValue
        self.errorDescription = ""
        self.otp = otp
        self.userIdentifier = userIdentifier
        self.retryCounter = retryCounter
        self.retryDelay = retryDelay
        self.trace = TraceContextSlot()
    }
}

/// Asks for information about the SDK and the logged-in user (`KSMGetInformationEvent`);
/// answered by ``KSMGetInformationResultEvent`` after Start, a ``KSMInvalidStateEvent`` before.
public final class KSMGetInformationEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// A GetInformation event.
    ///
    /// - Parameter traceContext: The W3C trace context to continue; `nil` starts a new trace.
    public init(traceContext: TraceContext? = nil) { trace = TraceContextSlot(traceContext) }
}

/// The IDP configuration the MC uses (`KsIamConfigurationData`).
public struct KsIamConfigurationData: Sendable, Hashable {
    /// The IDP client of the MC's own token requests: the client of the last login, or empty.
    public let clientId: String
    /// The IDP's base URL (``MasterController/Configuration/idpUrl``).
    public let serverUrl: String
    /// The pinned certificate chain (``MasterController/Configuration/certificateChain``); empty if
    /// none.
    public let certificateChain: Data
    /// The redirect URI of the MC's token requests.
    public let redirectUri: String
}

/// Information about the SDK (`KSMGetInformationResultEvent`). The documents give it no status
/// list; it is always ``KSMEventStatusType/kOk``.
public final class KSMGetInformationResultEvent: KSMResultEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// Always ``KSMEventStatusType/kOk``: GetInformation cannot fail after Start.
    public let status: KSMEventStatusType = .kOk
    public let errorCode = 0
    public let errorDescription = ""
    /// Empty with the Maverick backend, as documented.
    public let serialNumber = ""
    /// The MC's version, ``MasterController/sdkVersion``.
    public let sdkVersion: String
    /// What the last Start/Restart passed (a plain Start passes its locale and app name).
    public let ssmsAppConfiguration: KSMSsmsAppConfiguration?
    /// The user of the last successful SetAuthorisationCode or OfflineLogin since Start, if any.
    public let loggedInUser: KsUserIdentifier?
    /// Where the MC gets its tokens: the IDP, its certificate chain, the redirect URI and the
    /// client of the last login.
    public let iamConfigurationData: KsIamConfigurationData

    /// The Java name of ``loggedInUser``.
    public var loggedInUserIdentifier: KsUserIdentifier? { loggedInUser }

    init(sdkVersion: String, ssmsAppConfiguration: KSMSsmsAppConfiguration?, loggedInUser: KsUserIdentifier?, iamConfigurationData: KsIamConfigurationData) {
        self.sdkVersion = sdkVersion
        self.ssmsAppConfiguration = ssmsAppConfiguration
        self.loggedInUser = loggedInUser
        self.iamConfigurationData = iamConfigurationData
        self.trace = TraceContextSlot()
    }
}

/// Receives the events the MasterController sends on its own — ``KSMStartLoginEvent``,
/// ``KSMServerConnectionEvent``, the ``KSMRestartResultEvent`` of an automated restart — as the
/// documents' `executeEvent` of the `SynchronousEventHandler`. Register it with
/// ``MasterController/register(_:)``.
///
/// Called on a Swift concurrency thread, never on the MC's actor, one event at a time in the
/// order the MC sent them. Do not block in it.
public protocol KSMEventListener: Sendable {
    /// Receives one event the MC sent on its own; called on a Swift concurrency thread, never on
    /// the MC's actor. Do not block.
    ///
    /// - Parameter event: A ``KSMStartLoginEvent``, a ``KSMServerConnectionEvent`` or a
    ///   ``KSMRestartResultEvent``; downcast it.
    func executeEvent(_ event: any KsEvent)
}
