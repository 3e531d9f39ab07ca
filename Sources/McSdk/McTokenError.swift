import IdpPrimitives
import IdpWireFormats

/// Why the MC has no valid access token to use (for ``KSMExchangeIamTokenEvent`` and OfflineLogin).
public struct McTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why there is no valid token, case by case.
    public enum Reason: Sendable, Equatable {
        /// The user is not logged in on this MasterController (or not activated).
        case loginRequired
        /// No refresh or offline token is stored (cleared, or never received).
        case noTokenData
        /// The IDP refused the refresh (its OAuth error code): expired, revoked, or reused.
        case refused(String)
        /// The IDP refused because the account is locked.
        case locked(LockoutInformation)
        /// The IDP did not answer within the configured refresh timeout.
        case timedOut
        /// The waiting caller was cancelled (the refresh goes on for the others).
        case cancelled
        /// The IDP could not be reached or the connection was lost.
        case unreachable
        /// The IDP's answer could not be read.
        case protocolError
    }

    /// Why there is no valid token.
    public let reason: Reason
    /// The documented status this maps to (``KSMEventStatusType/kTemporaryLocked`` for a lock, …).
    public let status: KSMEventStatusType
    /// What went wrong; never contains a token.
    public let errorDescription: String

    init(_ reason: Reason, status: KSMEventStatusType, _ errorDescription: String) {
        self.reason = reason
        self.status = status
        self.errorDescription = errorDescription
    }

    static func locked(_ lockout: LockoutInformation) -> McTokenError {
        McTokenError(.locked(lockout), status: KSMEventStatusType(lockout: lockout), "the account is \(lockout)")
    }

    static let cancelled = McTokenError(.cancelled, status: .kUserCancel, "the caller was cancelled while waiting for the refresh")

    /// The status and the error description, e.g. `McTokenError(kTemporaryLocked, …)`.
    public var description: String { "McTokenError(\(status), \(errorDescription))" }
}

extension KSMEventStatusType {
    /// The MC's status for an account lock: ``kPinBlocked`` when permanent, else
    /// ``kTemporaryLocked``.
    public init(lockout: LockoutInformation) {
        self = lockout.isPermanent ? .kPinBlocked : .kTemporaryLocked
    }
}
