import Foundation

/// Why an account refuses authentication for now: the `lockoutInformation` of the documents'
/// `AuthenticationResult.lockout(lockoutInformation:…)` (Kotlin: `LockoutAttemptInformation`).
///
/// ```swift
/// if case .lockout(let lockoutInformation) = result.authenticationResult {
///     if lockoutInformation.isPermanent { /* tell the user; an administrator must unlock */ }
///     else { /* wait until */ _ = lockoutInformation.lockedUntil }
/// }
/// ```
///
/// The IDP sends it in its error redirect (`error=account_temporarily_locked&locked_until=…` or
/// `error=account_permanently_locked`) and in refused token responses; the IdpSdk engine and the
/// MC read it from there.
public struct LockoutInformation: Sendable, Hashable, CustomStringConvertible {
    /// Whether the lock never lifts by itself.
    public let isPermanent: Bool
    /// When the lock lifts; `Date.distantFuture` for a permanent lock.
    public let lockedUntil: Date

    /// A temporary lock until `lockedUntil`.
    public static func temporary(until lockedUntil: Date) -> LockoutInformation {
        LockoutInformation(isPermanent: false, lockedUntil: lockedUntil)
    }

    /// A permanent lock.
    public static let permanent = LockoutInformation(isPermanent: true, lockedUntil: .distantFuture)

    /// The OAuth error code of a temporary lock.
    package static let temporaryErrorCode = "account_temporarily_locked"
    /// The OAuth error code of a permanent lock.
    package static let permanentErrorCode = "account_permanently_locked"

    private init(isPermanent: Bool, lockedUntil: Date) {
        self.isPermanent = isPermanent
        self.lockedUntil = lockedUntil
    }

    /// Reads the wire form: `error` is one of the two lockout codes; `lockedUntil` is the
    /// `locked_until` value (seconds since 1970) a temporary lock needs. `nil` if `error` is not a
    /// lockout or the time is missing or malformed.
    package init?(error: String, lockedUntil: String?) {
        switch error {
        case Self.permanentErrorCode:
            self = .permanent
        case Self.temporaryErrorCode:
            guard let text = lockedUntil, let seconds = Double(text), seconds.isFinite else { return nil }
            self = .temporary(until: Date(timeIntervalSince1970: seconds))
        default:
            return nil
        }
    }

    /// The OAuth error code of this lock.
    package var errorCode: String { isPermanent ? Self.permanentErrorCode : Self.temporaryErrorCode }

    /// `error`, and `locked_until` for a temporary lock, for a redirect or a JSON error body.
    package var redirectParameters: [(String, String)] {
        var parameters = [("error", errorCode)]
        if !isPermanent { parameters.append(("locked_until", String(lockedUntil.timeIntervalSince1970))) }
        return parameters
    }

    /// `locked permanently`, or `locked until <date>`.
    public var description: String {
        isPermanent ? "locked permanently" : "locked until \(lockedUntil)"
    }
}
