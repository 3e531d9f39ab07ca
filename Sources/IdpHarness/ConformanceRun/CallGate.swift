import Foundation
import IdpPrimitives
import Synchronization

/// Holds the engine's provider calls at the kit's probe until `together` of them wait, or the
/// first has waited `window`, then lets them into the provider together.
///
/// The engine spends most of a flow outside the provider (requests, parsing, the IDP), so calls
/// that arrive as the flows happen to reach them rarely meet inside it. Gathered, they do: that is
/// where a provider's shared state is contended. Each waiting call holds only its own SDK thread
/// (a provider call may block), for at most `window`.
///
/// The gate's state is one `LockedValue`: which batch is open and how many wait in it. The call
/// that fills the batch, or the first whose wait runs out, closes it and signals the others after
/// releasing the lock. Woken one by one, the released calls would reach a fast provider one after
/// another; so each then spins (briefly, on relaxed atomics) until every call of its batch is
/// awake, and they go in together.
final class CallGate: Sendable {
    /// One batch of waiting calls and the semaphore they wait on.
    private final class Batch: Sendable {
        let release = DispatchSemaphore(value: 0)
        /// The batch's calls, set as it closes.
        let size = Atomic<Int>(0)
        let awake = Atomic<Int>(0)

        /// A released call waits here for the rest of its batch to wake, for at most 5 ms.
        func go() {
            let size = self.size.load(ordering: .relaxed)
            awake.add(1, ordering: .relaxed)
            let deadline = ContinuousClock.now + .milliseconds(5)
            while awake.load(ordering: .relaxed) < size, ContinuousClock.now < deadline { sched_yield() }
        }
    }

    private struct State {
        var batch = Batch()
        var waiting = 0
    }

    private let state = LockedValue(State())
    let together: Int
    let window: Duration

    init(together: Int, window: Duration) {
        self.together = max(1, together)
        self.window = window
    }

    /// Waits, on the calling SDK thread, until the batch this call joins is released.
    func pass() {
        guard together > 1 else { return }
        let (batch, released) = state.withLock { state -> (Batch, Int?) in
            state.waiting += 1
            let batch = state.batch
            guard state.waiting >= together else { return (batch, nil) }
            return (batch, Self.close(&state))
        }
        if let released {
            for _ in 0..<released { batch.release.signal() }
            return batch.go()
        }
        guard batch.release.wait(timeout: .now(plus: window)) == .timedOut else { return batch.go() }
        // The window ran out: close the batch unless another call already did, in which case a
        // signal for this call is on its way.
        let closed = state.withLock { state -> Int? in state.batch === batch ? Self.close(&state) : nil }
        if let closed {
            for _ in 0..<closed { batch.release.signal() }
        } else {
            batch.release.wait()
        }
        batch.go()
    }

    /// Opens a new batch; returns how many calls of the old one, besides the closing one, to
    /// release.
    private static func close(_ state: inout State) -> Int {
        state.batch.size.store(state.waiting, ordering: .relaxed)
        let others = state.waiting - 1
        state = State()
        return others
    }
}

/// Counts the calls inside the provider right now, over every probe of a run: each call notes
/// how many it found there (itself included) as it entered. Relaxed atomics, which order nothing
/// for ThreadSanitizer, so the count adds no ordering between the provider's calls.
final class CallOverlap: Sendable {
    private let inside = Atomic<Int>(0)

    /// A call enters the provider; returns the calls inside now, itself included.
    func enter() -> Int { inside.add(1, ordering: .relaxed).newValue }

    /// A call leaves the provider.
    func leave() { inside.subtract(1, ordering: .relaxed) }
}
