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
/// No wall clock decides that a run is stuck: the OS does. The run's async participants (its MC
/// events, and every task they start) run on an executor of the kit's own threads (``executor``),
/// not on the Swift concurrency pool, so a pool kept busy by other work (the rest of a test suite)
/// cannot hold the run back. The quiet world is stuck only when every job of that executor has a
/// thread, and no thread of the process is running or runnable
/// (``ThreadActivity/noOtherThreadRuns(excluding:)``), twice in a row with nothing moved
/// between. A thread that is slow, however long, keeps the run going. Where the OS gives no such
/// view (Apple platforms), or something keeps running without moving the run, only the
/// last-resort guard ends it: nothing moved for ``guardLimit``, and the run is undecided
/// (``undecided``), never stuck.
///
/// The world reports its work: ``beginWork()`` and ``endWork()`` around what is under way (a
/// provider call, a request at the IDP), ``progressed()`` for what happens between. A participant
/// waits through ``wait(_:on:)`` and says when it is done (``finished(_:)``).
package final class FreeRunMonitor: Sendable {
    private struct State {
        var live: Int
        var waiting: [Int: DispatchSemaphore] = [:]
        var abandoned = false
        var ended = false
        /// Why the guard ended the run, or `nil`.
        var undecided: String?
    }

    private let state: LockedValue<State>
    private let busy = Atomic<Int>(0)
    private let stamp = Atomic<UInt64>(0)
    /// The threads the run's async participants and the tasks they start run on.
    let executor = RunExecutor()
    /// Signalled when the last live participant starts to wait, and when the run ends.
    private let quietMaybe = DispatchSemaphore(value: 0)
    /// How long nothing at all may move before the run ends undecided: the last-resort guard.
    let guardLimit: Duration
    #if DEBUG
    /// The bug planted in the watchdog: the one of the task that made it.
    let planted = PlantedBugSwitch.inTask
    #endif

    init(participants: Int, guardLimit: Duration) {
        state = LockedValue(State(live: participants))
        self.guardLimit = guardLimit
    }

    /// The executor the run's tasks prefer: the MC events' tasks and those the MC starts itself.
    var taskExecutor: (any TaskExecutor)? { plantedRunsTasksOnThePool ? nil : executor }

    func beginWork() {
        busy.add(1, ordering: .relaxed)
        stamp.add(1, ordering: .relaxed)
    }

    func endWork() {
        stamp.add(1, ordering: .relaxed)
        busy.subtract(1, ordering: .relaxed)
    }

    func progressed() { stamp.add(1, ordering: .relaxed) }

    /// Whether the watchdog ended the participants' waits because the run was stuck.
    var wasStuck: Bool { state.withLock { $0.abandoned && $0.undecided == nil } }

    /// Why the last-resort guard ended the run, or `nil`: the kit could not decide whether it was
    /// stuck.
    var undecided: String? { state.withLock { $0.undecided } }

    /// Participant `participant` waits on `semaphore` until the delivery signals it or the
    /// watchdog ends the wait; `false` when the watchdog ended it (the run was stuck, or undecided).
    func wait(_ participant: Int, on semaphore: DispatchSemaphore) -> Bool {
        let allWaiting = state.withLock { state -> Bool? in
            guard !state.abandoned else { return nil }
            state.waiting[participant] = semaphore
            return state.waiting.count >= state.live
        }
        guard let allWaiting else { return false }
        if allWaiting { quietMaybe.signal() }
        semaphore.wait()
        let abandoned = state.withLock { state -> Bool in
            state.waiting[participant] = nil
            return state.abandoned
        }
        progressed()
        return !abandoned
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

    /// Ends every participant's wait; `undecided`: why the guard did (else the run was stuck).
    private func abandon(undecided: String?) {
        let waits = state.withLock { state -> [DispatchSemaphore] in
            state.abandoned = true
            state.undecided = undecided
            return Array(state.waiting.values)
        }
        waits.forEach { $0.signal() }
    }

    /// The watchdog's loop, on a thread of its own until ``end()``: when every live participant
    /// waits and nothing is under way, and nothing moves for `confirmation`, calls `quiesce`; when
    /// `quiesce` did nothing and the OS shows nothing of the process running (see the type's
    /// description), ends every wait: a stuck run. When nothing moves for ``guardLimit``, ends every
    /// wait undecided.
    func watch(confirmation: Duration = .microseconds(100), quiesce: () -> Bool) {
        let watchdog = ThreadActivity.currentThreadID
        var lastStamp = stamp.load(ordering: .relaxed)
        var lastMove = ContinuousClock.now
        /// The stamp at which the world was last found quiet and unable to act.
        var quietAt: UInt64?
        while true {
            _ = quietMaybe.wait(timeout: .now(plus: .milliseconds(1)))
            let (ended, allWaiting) = state.withLock { ($0.ended, $0.live > 0 && $0.waiting.count >= $0.live) }
            if ended { return }
            let now = ContinuousClock.now
            let current = stamp.load(ordering: .relaxed)
            if current != lastStamp {
                (lastStamp, lastMove) = (current, now)
            } else if now - lastMove >= guardLimit {
                abandon(undecided: "nothing moved for \(guardLimit)\(allWaiting ? ", every unfinished flow waiting" : "")")
                return
            }
            guard allWaiting, busy.load(ordering: .relaxed) == 0 else {
                quietAt = nil
                continue
            }
            // Everyone waits and nothing is under way: confirm that nothing moves for a moment
            // (work between two counted steps, an SDK hand-off say), then let the world act.
            let before = stamp.load(ordering: .relaxed)
            Thread.sleep(forTimeInterval: confirmation.timeInterval)
            guard stamp.load(ordering: .relaxed) == before, busy.load(ordering: .relaxed) == 0,
                  state.withLock({ $0.live > 0 && $0.waiting.count >= $0.live }) else {
                quietAt = nil
                continue
            }
            if quiesce() {
                quietAt = nil
                continue
            }
            // The quiet world can do nothing. It is stuck when, twice in a row with nothing moved
            // between, every job of the run's executor has a thread and the OS shows no thread of
            // the process running.
            if !plantedTakesRunnableForBlocked {
                guard executor.unstarted == 0, ThreadActivity.noOtherThreadRuns(excluding: watchdog),
                      stamp.load(ordering: .relaxed) == before else {
                    quietAt = nil
                    continue
                }
            }
            guard quietAt == before else {
                quietAt = before
                continue
            }
            abandon(undecided: nil)
            return
        }
    }
}
