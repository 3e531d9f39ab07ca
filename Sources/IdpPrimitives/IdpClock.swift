import Foundation

/// Where the IDP and the MC read the time from: expiry of codes and tokens, lockout.
///
/// Inject a ``ManualClock`` in tests so expiry is exercised without sleeping.
public protocol IdpClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date
}

/// The system's wall clock.
public struct SystemClock: IdpClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that moves only when told to. Thread-safe: any thread may read or advance it.
///
/// ```swift
/// let clock = ManualClock()
/// clock.advance(by: .seconds(61)) // the authorization code is now expired
/// ```
public final class ManualClock: IdpClock {
    private let current: LockedValue<Date>

    /// Starts at `start` (by default 2026-01-01T00:00:00Z, so test output is reproducible).
    public init(start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        current = LockedValue(start)
    }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward by `duration` (a negative duration moves it back).
    public func advance(by duration: Duration) {
        current.withLock { $0 = $0.addingTimeInterval(duration.timeInterval) }
    }

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}

extension Duration {
    /// The duration as a `TimeInterval` (seconds).
    public var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
