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
    /// The system's clock.
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
    private struct State {
        var now: Date
        /// Told after every move; each returns whether to keep it.
        var observers: [(id: Int, tell: @Sendable () -> Bool)] = []
        var nextObserver = 0
    }

    private let current: LockedValue<State>

    /// Starts at `start` (by default 2026-01-01T00:00:00Z, so test output is reproducible).
    public init(start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        current = LockedValue(State(now: start))
    }

    public func now() -> Date { current.withLock { $0.now } }

    /// Moves the clock forward by `duration` (a negative duration moves it back).
    public func advance(by duration: Duration) {
        move { $0 = $0.addingTimeInterval(duration.timeInterval) }
    }

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        move { $0 = date }
    }

    /// Calls `observer` after every later move of the clock, on the thread that moved it, until it
    /// returns `false`. How a timer on this clock (the IdpSdk's flow timeouts) learns that it may
    /// have expired without polling.
    /// - Warning: `observer` must not block or move the clock.
    public func whenMoved(_ observer: @escaping @Sendable () -> Bool) {
        current.withLock { state in
            state.observers.append((state.nextObserver, observer))
            state.nextObserver += 1
        }
    }

    private func move(_ change: (inout Date) -> Void) {
        let observers = current.withLock { state in
            change(&state.now)
            return state.observers
        }
        guard !observers.isEmpty else { return }
        // Called after the lock is released; the ones that asked to stop are dropped afterwards.
        let stopped = Set(observers.filter { !$0.tell() }.map(\.id))
        guard !stopped.isEmpty else { return }
        current.withLock { $0.observers.removeAll { stopped.contains($0.id) } }
    }
}

extension Duration {
    /// The duration as a `TimeInterval` (seconds).
    public var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
