import IdpPrimitives

/// Turns 0, 1, 2, … taken one after another by OS threads: a thread waits for a turn of its own,
/// does its part and passes the turn on, so everything done in one turn happens before the next.
///
/// ```swift
/// let turns = Turns()
/// await onOSThreads(2) { side in
///     for turn in stride(from: side, to: 100, by: 2) {
///         guard turns.wait(for: turn) else { return }
///         append(turn)
///         turns.pass()
///     }
/// }
/// ```
public final class Turns: Sendable {
    private let current = ConditionLockedValue(0)

    public init() {}

    /// Blocks the calling thread (never a Swift task's) until turn `turn` has come, for at most
    /// `limit`; returns whether it came.
    public func wait(for turn: Int, within limit: Duration = .seconds(600)) -> Bool {
        let deadline = ContinuousClock.now + limit
        return current.wait { current, _ in
            if current == turn { return .done(true) }
            let left = deadline - ContinuousClock.now
            return left > .zero ? .wait(timeout: left) : .done(false)
        }
    }

    /// Ends the current turn: the next one comes.
    public func pass() {
        current.withLock { $0 += 1 }
        current.broadcast()
    }
}
