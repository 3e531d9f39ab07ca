import Dispatch
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

    /// Where a clock starts unless told otherwise: 2026-01-01T00:00:00Z, so test output is
    /// reproducible.
    public static let defaultStart = Date(timeIntervalSince1970: 1_767_225_600)

    /// Starts at `start` (by default ``defaultStart``).
    public init(start: Date = ManualClock.defaultStart) {
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
    package func whenMoved(_ observer: @escaping @Sendable () -> Bool) {
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

extension IdpClock {
    /// Runs `action` once, when `delay` has passed on this clock, on a thread of its own choosing.
    ///
    /// - ``SystemClock``: a Dispatch timer (monotonic time, so a wall-clock change does not move it).
    /// - ``ManualClock``: when a move of the clock reaches the deadline, on the thread that moved it
    ///   (no wall time passes: a test advances the clock past a timeout and sees it fire).
    /// - any other clock: the clock is looked at every 10 ms until it reaches the deadline.
    ///
    /// - Parameters:
    ///   - delay: How long from now, on this clock.
    ///   - action: What to run; it must not block (on a ``ManualClock`` it runs inside a move) and
    ///     must not move the clock.
    /// - Returns: A handle whose ``ClockTimer/cancel()`` keeps `action` from running if it has not.
    @discardableResult
    package func runAfter(_ delay: Duration, _ action: @escaping @Sendable () -> Void) -> ClockTimer {
        let timer = ClockTimer(action)
        if self is SystemClock {
            DispatchQueue.global().asyncAfter(deadline: .now(plus: delay)) { timer.fire() }
            return timer
        }
        let deadline = now().addingTimeInterval(max(0, delay.timeInterval))
        if let manual = self as? ManualClock {
            manual.whenMoved { [weak manual] in
                guard !timer.isDone, let manual else { return false }
                guard manual.now() >= deadline else { return true }
                timer.fire()
                return false
            }
            if manual.now() >= deadline { timer.fire() }
            return timer
        }
        @Sendable func look() {
            guard !timer.isDone else { return }
            if now() >= deadline { return timer.fire() }
            DispatchQueue.global().asyncAfter(deadline: .now(plus: .milliseconds(10))) { look() }
        }
        look()
        return timer
    }
}

/// A timer set with ``IdpClock/runAfter(_:_:)``: its action runs at most once, and not at all
/// after ``cancel()``.
package final class ClockTimer: Sendable {
    private let action: LockedValue<(@Sendable () -> Void)?>

    init(_ action: @escaping @Sendable () -> Void) { self.action = LockedValue(action) }

    /// Whether the action ran or the timer was cancelled.
    package var isDone: Bool { action.withLock { $0 == nil } }

    /// Keeps the action from running, if it has not run yet.
    package func cancel() { action.withLock { $0 = nil } }

    /// Runs the action if nothing ran or cancelled it before (taken under the lock, run after it).
    func fire() {
        let run = action.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        run?()
    }
}

extension Duration {
    /// The duration as a `TimeInterval` (seconds).
    package var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole nanoseconds (what is left below a nanosecond is dropped).
    package var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
