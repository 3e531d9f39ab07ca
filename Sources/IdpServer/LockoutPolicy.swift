import Foundation
import IdpPrimitives
import IdpWireFormats

/// When wrong secrets lock an account (the lockout rules of the XignIn documents, Keycloak's
/// brute-force detection).
///
/// ```swift
/// // 3 wrong secrets lock for 1 min, then 2 min, 4 min, …; the 9th wrong secret in all locks for good.
/// let policy = LockoutPolicy(maximumFailures: 3, lockoutDuration: .seconds(60),
///                            durationMultiplier: 2, permanentLockoutAfterTotalFailures: 9)
/// let idp = IdpServer(configuration: .init(lockout: policy))
/// ```
///
/// Only wrong secrets count (password, activation code, checked attributes), never a missing field
/// or an unknown user name. An attempt while locked is refused before its answers are looked at
/// and is not counted — so a right password during the lock is refused too. A success clears all
/// counts. The decision (locked? evaluate, count, lock) is made under the server's one lock, so a
/// burst of parallel guesses gets exactly ``maximumFailures`` evaluations, never more.
public struct LockoutPolicy: Sendable, Equatable {
    /// Wrong secrets in a row (since the last success or lockout) that lock the account; 0 turns
    /// lockout off.
    public var maximumFailures: Int
    /// How long the first lockout lasts.
    public var lockoutDuration: Duration
    /// Each further lockout (since the last success) lasts this many times the one before; 1 keeps
    /// it constant.
    public var durationMultiplier: Int
    /// The longest temporary lockout.
    public var maximumLockoutDuration: Duration
    /// The total of wrong secrets since the last success at which the lock becomes permanent (at
    /// least 1); `nil`: never permanent.
    public var permanentLockoutAfterTotalFailures: Int?

    /// Out-of-range values are raised to the nearest sensible one: counts below 0 (failures) or 1
    /// (multiplier, total) and negative durations.
    public init(
        maximumFailures: Int,
        lockoutDuration: Duration = .seconds(60),
        durationMultiplier: Int = 1,
        maximumLockoutDuration: Duration = .seconds(24 * 3600),
        permanentLockoutAfterTotalFailures: Int? = nil
    ) {
        self.maximumFailures = max(0, maximumFailures)
        self.lockoutDuration = max(.zero, lockoutDuration)
        self.durationMultiplier = max(1, durationMultiplier)
        self.maximumLockoutDuration = max(.zero, maximumLockoutDuration)
        self.permanentLockoutAfterTotalFailures = permanentLockoutAfterTotalFailures.map { max(1, $0) }
    }

    /// No lockout: wrong secrets are only counted.
    public static let disabled = LockoutPolicy(maximumFailures: 0)

    /// How long lockout number `lockout` (from 1) lasts.
    func duration(ofLockout lockout: Int) -> Duration {
        var duration = lockoutDuration
        for _ in 1..<max(1, lockout) {
            duration *= durationMultiplier
            if duration >= maximumLockoutDuration { return maximumLockoutDuration }
        }
        return min(duration, maximumLockoutDuration)
    }
}

extension UserRecord {
    /// The lock in force at `now`, if any.
    func lockout(at now: Date) -> LockoutInformation? {
        if permanentlyLocked { return .permanent }
        if let lockedUntil, lockedUntil > now { return .temporary(until: lockedUntil) }
        return nil
    }

    /// Counts one evaluated wrong secret; returns the lock it starts, if any.
    mutating func recordFailure(at now: Date, policy: LockoutPolicy) -> LockoutInformation? {
        failedAttempts += 1
        totalFailedAttempts += 1
        if let total = policy.permanentLockoutAfterTotalFailures, totalFailedAttempts >= total {
            permanentlyLocked = true
            lockouts += 1
            failedAttempts = 0
            return .permanent
        }
        guard policy.maximumFailures > 0, failedAttempts >= policy.maximumFailures else { return nil }
        lockouts += 1
        failedAttempts = 0
        let until = now.addingTimeInterval(policy.duration(ofLockout: lockouts).timeInterval)
        lockedUntil = until
        return .temporary(until: until)
    }

    /// What the lockout policy decides on: the counts and the lock.
    struct LockState: Sendable {
        var failedAttempts: Int
        var totalFailedAttempts: Int
        var lockouts: Int
        var lockedUntil: Date?
        var permanentlyLocked: Bool
    }

    /// The counts and the lock, read or written together.
    var lockState: LockState {
        get { LockState(failedAttempts: failedAttempts, totalFailedAttempts: totalFailedAttempts, lockouts: lockouts, lockedUntil: lockedUntil,
                        permanentlyLocked: permanentlyLocked) }
        set {
            failedAttempts = newValue.failedAttempts
            totalFailedAttempts = newValue.totalFailedAttempts
            lockouts = newValue.lockouts
            lockedUntil = newValue.lockedUntil
            permanentlyLocked = newValue.permanentlyLocked
        }
    }

    /// Numbers a decision on a form step naming this user; returns its number.
    mutating func nextDecision() -> UInt64 {
        decisions += 1
        return decisions
    }

    /// A successful authentication (or an administrator's unlock): all counts and locks cleared.
    mutating func recordSuccess() {
        failedAttempts = 0
        totalFailedAttempts = 0
        lockouts = 0
        lockedUntil = nil
        permanentlyLocked = false
    }
}
