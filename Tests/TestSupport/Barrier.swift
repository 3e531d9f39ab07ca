import IdpPrimitives

/// A meeting point for a fixed number of OS threads, used again and again: each waits at it until
/// all have arrived, and then all go on together. For threads that take turns in phases (readers
/// warm their caches, then a writer writes, then the readers check), where each phase must see
/// everything the phase before it did.
///
/// A thread that waits past its deadline breaks the barrier: every wait at it, then and later,
/// returns `false` at once, so one stuck thread does not keep the others waiting for a deadline each.
public final class Barrier: Sendable {
    private struct State {
        var arrived = 0
        var round = 0
        var broken = false
    }

    private let parties: Int
    private let state = ConditionLockedValue(State())

    /// A barrier for `parties` threads.
    public init(parties: Int) {
        precondition(parties > 0, "a barrier needs at least one party")
        self.parties = parties
    }

    /// Blocks the calling thread (never a Swift task's) until every party has arrived, for at
    /// most `limit`; returns whether they all did.
    @discardableResult
    public func arriveAndWait(within limit: Duration = .seconds(600)) -> Bool {
        let deadline = ContinuousClock.now + limit
        var myRound: Int?
        // Whether this thread ended the round or broke the barrier: then it wakes the others.
        var wakesOthers = false
        let passed: Bool = state.wait { state, _ in
            if state.broken { return .done(false) }
            guard let round = myRound else {
                state.arrived += 1
                if state.arrived == parties {
                    state.arrived = 0
                    state.round += 1
                    wakesOthers = true
                    return .done(true)
                }
                myRound = state.round
                return .wait(timeout: deadline - ContinuousClock.now)
            }
            if state.round != round { return .done(true) }
            let left = deadline - ContinuousClock.now
            if left > .zero { return .wait(timeout: left) }
            state.broken = true
            wakesOthers = true
            return .done(false)
        }
        if wakesOthers { state.broadcast() }
        return passed
    }
}
