import Dispatch
import Foundation
import IdpPrimitives
import Synchronization

/// The watchdog of a free run: it tells when the system has gone quiet — every participant waits
/// for a delivery, no work the world counts is under way, and nothing has moved for a moment —
/// so the world may act as it does when a controlled run is quiet (move the clock past the flow
/// timeout, send on held responses), and when a quiet world that can do nothing stays so, it ends
/// the participants' waits: a stuck run.
///
/// The world reports its work: ``beginWork()`` and ``endWork()`` around what is under way (a
/// provider call, a request at the IDP), ``progressed()`` for what happens between. A participant
/// waits through ``wait(_:on:limit:)`` and says when it is done (``finished(_:)``).
final class FreeRunMonitor: Sendable {
    private struct State {
        var live: Int
        var waiting: [Int: DispatchSemaphore] = [:]
        var abandoned = false
        var ended = false
    }

    private let state: LockedValue<State>
    private let busy = Atomic<Int>(0)
    private let stamp = Atomic<UInt64>(0)
    /// Signalled when the last live participant starts to wait, and when the run ends.
    private let quietMaybe = DispatchSemaphore(value: 0)
    /// How long the quiet world may find nothing to do, with the Swift concurrency pool free,
    /// before the run is called stuck.
    let stuckTimeout: Duration

    init(participants: Int, stuckTimeout: Duration) {
        state = LockedValue(State(live: participants))
        self.stuckTimeout = stuckTimeout
    }

    func beginWork() {
        busy.add(1, ordering: .relaxed)
        stamp.add(1, ordering: .relaxed)
    }

    func endWork() {
        stamp.add(1, ordering: .relaxed)
        busy.subtract(1, ordering: .relaxed)
    }

    func progressed() { stamp.add(1, ordering: .relaxed) }

    /// Whether the watchdog ended the participants' waits: the run was stuck.
    var wasStuck: Bool { state.withLock { $0.abandoned } }

    /// Participant `participant` waits on `semaphore` for at most `limit` of time in which the
    /// Swift concurrency pool ran work promptly (an MC event's task cannot run while other work
    /// holds every pool thread: that time is not this run's stall); `false` when it timed out or
    /// the watchdog found the run stuck.
    func wait(_ participant: Int, on semaphore: DispatchSemaphore, limit: Duration) -> Bool {
        let allWaiting = state.withLock { state -> Bool? in
            guard !state.abandoned else { return nil }
            state.waiting[participant] = semaphore
            return state.waiting.count >= state.live
        }
        guard let allWaiting else { return false }
        if allWaiting { quietMaybe.signal() }
        var counted = Duration.zero
        var delivered = false
        let slice = min(limit, .seconds(1))
        // A pool blocked for ever must not hold the run for ever either.
        let giveUp = ContinuousClock.now + limit * 10
        while !delivered, counted < limit, ContinuousClock.now < giveUp {
            delivered = semaphore.wait(timeout: .now(plus: slice)) == .success
            if !delivered, poolRunsPromptly() { counted += slice }
        }
        let abandoned = state.withLock { state -> Bool in
            state.waiting[participant] = nil
            return state.abandoned
        }
        progressed()
        return delivered && !abandoned
    }

    /// Participant `participant` is done.
    func finished(_ participant: Int) {
        let allWaiting = state.withLock { state -> Bool in
            state.live -= 1
            return state.live > 0 && state.waiting.count >= state.live
        }
        progressed()
        if allWaiting { quietMaybe.signal() }
    }

    /// Ends the watchdog's loop.
    func end() {
        state.withLock { $0.ended = true }
        quietMaybe.signal()
    }

    /// The CPU time the whole process has used, in seconds.
    private static func processCPUTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Whether a task started now runs within a second: the pool has a thread for the run's MC
    /// events.
    private func poolRunsPromptly() -> Bool {
        let ran = DispatchSemaphore(value: 0)
        Task.detached { ran.signal() }
        return ran.wait(timeout: .now(plus: .seconds(1))) == .success
    }

    /// The watchdog's loop, on a thread of its own until ``end()``: when every live participant
    /// waits and nothing is under way, and nothing moves for `confirmation`, calls `quiesce`; when
    /// `quiesce` did nothing and the run stays quiet for ``stuckTimeout``, ends every wait.
    func watch(confirmation: Duration = .microseconds(100), quiesce: () -> Bool) {
        var quietSince: ContinuousClock.Instant?
        var quietCPU = 0.0
        while true {
            _ = quietMaybe.wait(timeout: .now(plus: .milliseconds(1)))
            let (ended, allWaiting) = state.withLock { ($0.ended, $0.live > 0 && $0.waiting.count >= $0.live) }
            if ended { return }
            guard allWaiting, busy.load(ordering: .relaxed) == 0 else {
                quietSince = nil
                continue
            }
            // Everyone waits and nothing is under way: confirm that nothing moves for a moment
            // (work between two counted steps, an SDK hand-off say), then let the world act.
            let before = stamp.load(ordering: .relaxed)
            Thread.sleep(forTimeInterval: confirmation.timeInterval)
            guard stamp.load(ordering: .relaxed) == before, busy.load(ordering: .relaxed) == 0,
                  state.withLock({ $0.live > 0 && $0.waiting.count >= $0.live }) else {
                quietSince = nil
                continue
            }
            if quiesce() {
                quietSince = nil
                continue
            }
            let now = ContinuousClock.now
            let since = quietSince ?? now
            quietSince = since
            if quietSince == now { quietCPU = Self.processCPUTime() }
            // Stuck only if the process was idle meanwhile and the Swift concurrency pool is free:
            // on a loaded machine a participant may be waiting for work that has not had a thread
            // yet (an MC event's task, an SDK completion job); then the participants' own wait
            // limits tell a stuck run, later.
            if now - since >= stuckTimeout, Self.processCPUTime() - quietCPU < 0.2 * (now - since).timeInterval, poolRunsPromptly(),
               stamp.load(ordering: .relaxed) == before {
                let waits = state.withLock { state -> [DispatchSemaphore] in
                    state.abandoned = true
                    return Array(state.waiting.values)
                }
                waits.forEach { $0.signal() }
                return
            }
        }
    }
}
