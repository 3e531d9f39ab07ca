import Dispatch
import Foundation
import IdpPrimitives

/// Runs participants (real OS threads) one at a time between seams, choosing who goes next by a
/// ``ScheduleStrategy`` or by a recorded decision log, and records every decision so that a run
/// can be replayed.
///
/// A participant calls ``seam(_:_:)`` at each point where another participant may run instead, and
/// ``finish(_:)`` when done. The first decision waits until every participant has reached its first
/// seam, so the set to choose from is the same in every run. The running participant passes the
/// turn on at its next seam (baton passing: no scheduler thread sits in the middle).
///
/// No clock decides whether a participant left its control: a participant is set aside (the run
/// is then ``Outcome/partiallyControlled`` and another gets the turn) only when the OS shows it
/// blocked outside a seam — its thread asleep in a wait only another thread can end
/// (``ThreadActivity``), or, for an async participant, none of its jobs queued or running on the
/// run's executor (its task suspended on something outside the run). One that is slow, runnable
/// or asleep in a wait with a timeout is waited for, however long. A deadlock is judged when
/// nobody can go on and the quiet world can do nothing. A run in which nothing moves for the
/// last-resort guard ends undecided (``Outcome/undecided``), never as a verdict.
///
/// Async participants' tasks prefer the run's own executor (``RunExecutor``): their jobs run on
/// the kit's threads, so a Swift concurrency pool kept busy by other work (a test suite's
/// CPU-bound tests beside the stress) does not hold them back.
///
/// Its decisions are a plain value's (`ControlledSchedulerMachine`), taken under one lock; what
/// they call for — a thread's turn signalled, an async participant's task started or resumed, the
/// quiet world let act, the outcome's waiters resumed — is done after the lock is released.
///
/// Threading: ``seam(_:_:)`` blocks its OS thread; call it only from participant threads, never from
/// a Swift concurrency thread. ``outcome()`` suspends without blocking.
package final class ControlledScheduler: Sendable {
    private typealias Machine = ControlledSchedulerMachine
    private typealias Job = @Sendable () -> Void
    /// What the quiet world did when nobody could go on.
    package enum Quiet: Sendable, Equatable {
        /// It changed something (moved a clock, fired a timer, ended a timed wait).
        case acted
        /// It could do nothing: with nobody else to go on, the run is a deadlock.
        case idle
        /// It could do nothing, but work the run does not schedule may still wake a participant
        /// (a thread or a queue it handed work to): no deadlock is judged; the run waits.
        case awaitingOutside
    }

    /// What the lock guards: the machine, and beside it what a value cannot hold, each keyed by
    /// participant. One lock for both: a start or a delivery is filed in the same critical section
    /// as the decision that makes its participant ready, so the wake that follows always finds it.
    private struct Guarded {
        var machine: Machine
        /// Each thread participant's turn: its OS thread waits on it until chosen.
        var turns: [Int: DispatchSemaphore]
        /// Each async participant's start, run when it is first chosen.
        var starts: [Int: Job] = [:]
        /// Deliveries to parked async participants, run when they are chosen: each resumes its task.
        var deliveries: [Int: Job] = [:]
        /// Deliveries that came before their async participant parked (it was set aside meanwhile
        /// and its job ran): its park runs them at once.
        var earlyDeliveries: [Int: Job] = [:]
        /// What runs once the run has ended, with its outcome (``whenEnded(_:)``).
        var waiters: [@Sendable (Outcome) -> Void] = []
        /// Each thread participant's OS thread id, for the watchdog's look at its state.
        var threadIDs: [Int: Int32] = [:]
        /// Thread participants inside the scheduler's own wait for their turn: a thread asleep
        /// there is not blocked outside a seam, even once chosen and not yet woken.
        var awaitingTurn: Set<Int> = []
        /// Starts and deliveries of async participants taken out and not yet run: until they have
        /// run, the chosen participant's task has no job queued yet, and is not suspended outside.
        var handingOver = 0

        /// The threads of participants that cannot go on until the run lets them — waiting or
        /// parked at a seam, or in the scheduler's own wait for their turn — or that the OS
        /// already showed blocked outside a seam (set aside).
        var heldThreads: Set<Int32> {
            var held = Set<Int32>()
            for participant in threadIDs.keys {
                guard let tid = threadIDs[participant], machine.participants.indices.contains(participant) else { continue }
                switch machine.participants[participant].status {
                case .waiting, .parked, .overdue: held.insert(tid)
                default: if awaitingTurn.contains(participant) { held.insert(tid) }
                }
            }
            return held
        }

        /// `job` as an effect that hands an async participant its turn, counted until it has run.
        mutating func handOver(_ job: Job?) -> Effect {
            guard let job else { return .none }
            handingOver += 1
            return .run(job)
        }

        /// What performing `action` needs from the side tables, taken out now.
        mutating func effect(of action: Machine.Action) -> Effect {
            switch action {
            case .none, .goOn, .holdDelivery: return .none
            case .wake(.thread(let participant)): return turns[participant].map(Effect.signal) ?? .none
            case .wake(.task(let participant)):
                return handOver(starts.removeValue(forKey: participant) ?? deliveries.removeValue(forKey: participant))
            case .quiesce(let judgingDeadlock): return .quiesce(judgingDeadlock: judgingDeadlock)
            case .end(let outcome):
                defer { waiters = [] }
                return .end(outcome, waiters)
            }
        }
    }

    /// A machine action with what performing it takes, done after the lock is released.
    private enum Effect {
        case none
        case signal(DispatchSemaphore)
        case run(Job)
        case quiesce(judgingDeadlock: Bool)
        case end(Outcome, [@Sendable (Outcome) -> Void])
    }

    private let guarded: LockedValue<Guarded>
    /// Which participant each controlled OS thread is running (set by the thread itself).
    private let threads = LockedValue<[UInt: Int]>([:])
    /// Called when no participant can go on but some are parked: what the world does when it is
    /// quiet (a watchdog moving the clock so timeouts fire).
    private let onQuiescence: (@Sendable () -> Quiet)?
    /// What the OS says a participant's thread does (``ThreadActivity/read(_:)``).
    private let observe: @Sendable (_ participant: Int, _ tid: Int32) -> ThreadActivity
    #if DEBUG
    /// The bug planted in the scheduler: the one of the task that made it.
    let planted = PlantedBugSwitch.inTask
    #endif
    /// The executor async participants' tasks prefer.
    private let executor = RunExecutor()
    /// Signalled when the run is done, so its watchdog thread exits at once instead of at its
    /// next period (a suite runs hundreds of runs; their watchdogs would otherwise pile up).
    private let ended = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - participants: How many participants will call ``seam(_:_:)``, numbered from 0.
    ///   - strategy: How to choose; `seed` makes the choice repeatable.
    ///   - seed: Seeds the strategy's random choices: the same seed, the same schedule.
    ///   - replay: A recorded schedule to follow first; after it, the strategy decides.
    ///   - guardLimit: How long nothing may move before the run ends undecided: the last-resort
    ///     guard, never a verdict.
    ///   - onQuiescence: Called when no participant can go on and some are parked (waiting for a
    ///     delivery that nobody controlled will make); returns whether it changed anything (moved
    ///     a clock, say) or waits for work outside the run. If it did neither, and nobody runs
    ///     outside control, the run is a deadlock.
    ///   - preemptionSeams: Name prefixes of the seams where a PCT change point may fall (the
    ///     decisions a run's bugs hinge on: the product's decision points); the strategy's
    ///     `steps` count those decisions only. `nil`, the default: every decision counts.
    ///   - observe: What the OS says a thread does, given the participant and its thread's id:
    ///     ``ThreadActivity/read(_:)`` by default.
    package init(participants: Int, strategy: ScheduleStrategy, seed: UInt64, replay: [Int] = [], guardLimit: Duration = .seconds(60),
                onQuiescence: (@Sendable () -> Quiet)? = nil, preemptionSeams: [String]? = nil,
                observe: @escaping @Sendable (_ participant: Int, _ tid: Int32) -> ThreadActivity = { ThreadActivity.read($1) }) {
        self.observe = observe
        let machine = Machine(participants: participants, strategy: strategy, seed: seed, replay: replay,
                              guardLimit: guardLimit, now: .now, preemptionSeams: preemptionSeams)
        guarded = LockedValue(Guarded(machine: machine, turns: Dictionary(uniqueKeysWithValues: (0..<participants).map { ($0, DispatchSemaphore(value: 0)) })))
        self.onQuiescence = onQuiescence
        // The watchdog looks every millisecond at a participant that kept the turn since its last
        // look (and checks the last-resort guard).
        let watchdog = Thread { [self] in watch(every: .milliseconds(1)) }
        watchdog.name = "IdpHarness-scheduler-watchdog"
        watchdog.start()
    }

    /// Takes `event`'s decision under the lock, with what performing it needs; perform the
    /// result after.
    private func decide(_ event: (inout Machine) -> Machine.Action) -> Effect {
        guarded.withLock { guarded in guarded.effect(of: event(&guarded.machine)) }
    }

    /// Does what a decision called for. Runs with no lock held.
    private func perform(_ effect: Effect) {
        switch effect {
        case .none: break
        case .signal(let turn): turn.signal()
        case .run(let job):
            job()
            guarded.withLock { $0.handingOver -= 1 }
        case .quiesce(let judgingDeadlock): quiesce(judgingDeadlock: judgingDeadlock)
        case .end(let outcome, let waiters):
            for waiter in waiters { waiter(outcome) }
            ended.signal()
        }
    }

    /// Participant `participant` is at seam `name`: waits until it is chosen to go on.
    package func seam(_ participant: Int, _ name: String) {
        adopt(participant)
        perform(decide { $0.arrive(participant, at: name, now: .now) })
        waitForTurn(participant)
    }

    /// Blocks until `participant` is chosen. Taking the lock once more afterwards orders everything
    /// the previous participant did before passing the turn (it held this lock to pass it) before
    /// what this one does next, in a way ThreadSanitizer sees: code between seams needs no locks of
    /// its own to be race-free here.
    private func waitForTurn(_ participant: Int) {
        let turn = guarded.withLock { guarded -> DispatchSemaphore? in
            guarded.awaitingTurn.insert(participant)
            return guarded.turns[participant]
        }
        guard let turn else { return }
        turn.wait()
        guarded.withLock { _ = $0.awaitingTurn.remove(participant) }
    }

    @TaskLocal static var asyncTurn: AsyncTurn?

    /// The async participant whose task (or a task it started) is calling, if it is this
    /// scheduler's.
    package var currentAsync: Int? {
        guard let turn = Self.asyncTurn, turn.scheduler == ObjectIdentifier(self) else { return nil }
        return turn.participant
    }

    /// Adds an async participant: when chosen, `body` starts in a new task, which runs as this
    /// participant until it parks (``parkAsync(_:_:)``) or ends. Its code between seams runs on
    /// Swift concurrency threads and never blocks one: its seams suspend, they do not wait.
    @discardableResult
    package func spawnAsync(_ seam: String, parent: Int?, _ body: @escaping @Sendable () async -> Void) -> Int {
        let schedulerId = ObjectIdentifier(self)
        let (participant, effect) = guarded.withLock { guarded -> (Int, Effect) in
            let (participant, action) = guarded.machine.join(at: seam, parent: parent, kind: .task, now: .now)
            let turn = AsyncTurn(scheduler: schedulerId, participant: participant)
            guarded.starts[participant] = { [self] in
                Task(executorPreference: executor) { [self] in
                    await Self.$asyncTurn.withValue(turn) { await body() }
                    finish(participant)
                }
            }
            return (participant, guarded.effect(of: action))
        }
        perform(effect)
        return participant
    }

    /// The running async participant is at seam `name`, a point where another may go first: it
    /// waits to be chosen like a thread at a seam, and `resume` (which resumes its task) runs when
    /// it is. Never blocks.
    package func yieldAsync(_ participant: Int, _ name: String, _ resume: @escaping @Sendable () -> Void) {
        perform(guarded.withLock { guarded -> Effect in
            guarded.deliveries[participant] = resume
            return guarded.effect(of: guarded.machine.arrive(participant, at: name, now: .now))
        })
    }

    /// Whether async participant `participant` runs now (under control), so it may park.
    package func isRunning(_ participant: Int) -> Bool {
        guarded.withLock { $0.machine.isRunning(participant) }
    }

    /// The running async participant is about to suspend until a delivery (``unparkAsync(_:_:)``);
    /// another goes on. Never blocks: the caller's task suspends on its own continuation. If the
    /// delivery came already, it is handed over at once and the participant goes on.
    package func parkAsync(_ participant: Int, _ name: String) {
        perform(guarded.withLock { guarded -> Effect in
            let action = guarded.machine.park(participant, at: name, now: .now)
            guard action == .goOn else { return guarded.effect(of: action) }
            return guarded.handOver(guarded.earlyDeliveries.removeValue(forKey: participant))
        })
    }

    /// Delivers to an async participant: `resume` (which resumes its task) runs when it is chosen.
    /// Never blocks. A participant that has not parked yet takes it when it parks.
    package func unparkAsync(_ participant: Int, _ resume: @escaping @Sendable () -> Void) {
        perform(guarded.withLock { guarded -> Effect in
            let action = guarded.machine.unpark(participant, now: .now)
            if action == .holdDelivery {
                guarded.earlyDeliveries[participant] = resume
            } else if guarded.machine.participants.indices.contains(participant) {
                guarded.deliveries[participant] = resume
            }
            return guarded.effect(of: action)
        })
    }

    /// The calling OS thread, as the key of ``threads``.
    private static var threadKey: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }

    /// Marks the calling OS thread as running `participant`'s work (``current`` then names it).
    package func adopt(_ participant: Int) {
        threads.withLock { $0[Self.threadKey] = participant }
        let tid = ThreadActivity.currentThreadID
        guarded.withLock { $0.threadIDs[participant] = tid }
    }

    /// The participant the calling OS thread runs, or `nil` (a thread outside the run's control,
    /// or a Swift concurrency thread).
    package var current: Int? {
        threads.withLock { $0[Self.threadKey] }
    }

    /// Adds a participant that waits at `seam` and, when chosen, runs `job` on an OS thread of its
    /// own (from ``ParticipantThreads``), then finishes. Called by the running participant, the new
    /// participant's number (the next free one) repeats with the schedule; called from elsewhere,
    /// the run is marked partially controlled. Never blocks.
    @discardableResult
    package func spawn(_ seam: String, parent: Int? = nil, _ job: @escaping @Sendable () -> Void) -> Int {
        spawnParticipant(seam, parent: parent) { _ in job() }
    }

    /// ``spawn(_:parent:_:)`` for a job that needs its own participant number (to run as that
    /// participant of a controlled run).
    @discardableResult
    package func spawnParticipant(_ seam: String, parent: Int? = nil, _ job: @escaping @Sendable (Int) -> Void) -> Int {
        let caller = parent ?? current
        let (participant, effect) = guarded.withLock { guarded -> (Int, Effect) in
            let (participant, action) = guarded.machine.join(at: seam, parent: caller, kind: .thread, now: .now)
            guarded.turns[participant] = DispatchSemaphore(value: 0)
            return (participant, guarded.effect(of: action))
        }
        ParticipantThreads.shared.run("IdpHarness-job-\(participant)") { [self] in
            adopt(participant)
            waitForTurn(participant)
            job(participant)
            finish(participant)
        }
        perform(effect)
        return participant
    }

    /// The running `participant` waits for a delivery (``unpark(_:)``) and lets another go on
    /// meanwhile; returns once it is unparked and chosen again. Returns at once if it was unparked
    /// already.
    package func park(_ participant: Int, _ name: String) {
        adopt(participant)
        let (action, effect) = guarded.withLock { guarded in
            let action = guarded.machine.park(participant, at: name, now: .now)
            return (action, guarded.effect(of: action))
        }
        guard action != .goOn else { return }
        perform(effect)
        waitForTurn(participant)
    }

    /// The last seam `participant` reached, as the outcome's ``Outcome/lastSeams`` shows it.
    package func lastSeam(of participant: Int) -> String {
        guarded.withLock { $0.machine.participants.indices.contains(participant) ? $0.machine.participants[participant].status.lastSeam : "" }
    }

    /// The run depends on work it does not schedule (`reason` says which): it is partially
    /// controlled from now on. Never blocks.
    package func loseControl(_ reason: String) {
        guarded.withLock { $0.machine.loseControl(reason) }
    }

    /// Makes a parked `participant` eligible to run again (its delivery came). Never blocks.
    package func unpark(_ participant: Int) {
        perform(decide { $0.unpark(participant, now: .now) })
    }

    /// Nobody can go on and some are parked: lets the world act (``onQuiescence``), as the quiet
    /// world rather than the calling participant (its pauses are not the participant's seams);
    /// then what it made ready is chosen, and with `judgingDeadlock`, a world that did nothing
    /// while nobody runs outside control ends the run as a deadlock.
    private func quiesce(judgingDeadlock: Bool) {
        var quiet = Quiet.idle
        if let onQuiescence {
            let key = Self.threadKey
            let adopted = threads.withLock { $0.removeValue(forKey: key) }
            guarded.withLock { $0.machine.quiescenceBegan() }
            quiet = onQuiescence()
            if let adopted { threads.withLock { $0[key] = adopted } }
        }
        perform(decide { $0.quiescenceEnded(acted: quiet == .acted, judgingDeadlock: judgingDeadlock, awaitingOutside: quiet == .awaitingOutside) })
    }

    /// Participant `participant` is done; the turn passes on.
    package func finish(_ participant: Int) {
        // The thread no longer runs this participant's work: its pthread id may be reused by a
        // thread that has nothing to do with the run.
        let key = Self.threadKey
        threads.withLock { threads in if threads[key] == participant { threads[key] = nil } }
        perform(decide { $0.finish(participant, now: .now) })
    }

    /// The outcome, once every participant finished or the run deadlocked.
    package func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            whenEnded { continuation.resume(returning: $0) }
        }
    }

    /// Runs `body` with the outcome once every participant finished or the run deadlocked: on
    /// the OS thread that ended the run (a participant's or the watchdog's), or on the calling
    /// thread at once if the run has already ended. It must not block.
    package func whenEnded(_ body: @escaping @Sendable (Outcome) -> Void) {
        let ready = guarded.withLock { guarded -> Outcome? in
            if let outcome = guarded.machine.finalOutcome { return outcome }
            guarded.waiters.append(body)
            return nil
        }
        if let ready { body(ready) }
    }

    /// The watchdog's loop: wakes every `shortest` period or later (or at once when the run ends),
    /// lets the machine judge the last-resort guard, asks the OS about the running participant
    /// when it kept the turn since the last look (and, while the run waits for work handed outside
    /// it, whether any thread of the process runs), and stops once the run has ended. Each look
    /// that leaves nothing to suspect doubles the period, up to 16 times `shortest`; a look that
    /// suspects a blocked participant looks again after `shortest`.
    private func watch(every shortest: Duration) {
        let watchdog = ThreadActivity.currentThreadID
        var previous: (participant: Int, turn: Int)?
        var suspect: (participant: Int, turn: Int, what: String)?
        var period = shortest
        while true {
            _ = ended.wait(timeout: .now(plus: period))
            let effect = decide { $0.watchdogWoke(now: .now) }
            perform(effect)
            if case .end = effect { return }
            if let stuck = stuckOutside() {
                perform(decide { $0.stuckOutside(stuck) })
                continue
            }
            if guarded.withLock({ $0.machine.isAwaitingOutside }), ThreadActivity.noOtherThreadRuns(excluding: watchdog) {
                perform(decide { $0.outsideIdle("every participant left waits at a point for work handed outside the run, and the OS shows no thread of the process running") })
                continue
            }
            let looked = guarded.withLock { guarded -> (participant: Int, turn: Int, kind: Machine.Kind, tid: Int32?)? in
                guard let running = guarded.machine.running, !guarded.awaitingTurn.contains(running), guarded.handingOver == 0 else { return nil }
                return (running, guarded.machine.turn, guarded.machine.participants[running].kind, guarded.threadIDs[running])
            }
            defer { previous = looked.map { ($0.participant, $0.turn) } }
            // The threads held by the run are gathered only for a participant that kept the turn.
            guard let looked, let previous, previous == (looked.participant, looked.turn),
                  let what = blocked(looked.participant, looked.kind, looked.tid, held: guarded.withLock { $0.heldThreads }, watchdog: watchdog) else {
                suspect = nil
                period = min(period * 2, shortest * 16)
                continue
            }
            period = shortest
            // Blocked at two looks in a row, in the same wait, in the same turn: durably blocked.
            if let seen = suspect, seen == (looked.participant, looked.turn, what) {
                suspect = nil
                perform(decide { $0.observedBlocked(looked.participant, turn: looked.turn, in: what, now: .now) })
            } else {
                suspect = (looked.participant, looked.turn, what)
            }
        }
    }

    /// When every participant left is set aside, whether the OS shows each one's thread blocked on
    /// a lock held by one of them (or by itself): then nothing inside or outside the run can end
    /// their waits. Its description, or `nil`.
    private func stuckOutside() -> String? {
        let left = guarded.withLock { guarded -> [(participant: Int, tid: Int32)]? in
            guard let overdue = guarded.machine.onlyOverdueLeft else { return nil }
            let threads = overdue.compactMap { participant in guarded.threadIDs[participant].map { (participant, $0) } }
            return threads.count == overdue.count ? threads : nil
        }
        guard let left else { return nil }
        let tids = Set(left.map(\.tid))
        var waits: [String] = []
        for (participant, tid) in left {
            guard case .blocked(let what, let owner?) = observe(participant, tid), tids.contains(owner) else { return nil }
            waits.append("participant \(participant) blocked in \(what)")
        }
        return "every participant left is blocked outside the points on a lock one of them holds (\(waits.joined(separator: "; ")))"
    }

    /// What the OS shows `participant` blocked in, outside a seam, or `nil` when it runs, is
    /// runnable or sleeps in a wait that ends on its own. A thread participant: its thread's state.
    /// An async participant: the threads running the run's jobs; with none of them queued or
    /// running, its task is suspended on something outside the run.
    ///
    /// A wait for a lock whose owner the lock records is durable only when that owner is the
    /// waiting thread itself (a lock taken twice) or one of `held`, the run's threads that cannot
    /// go on until the run lets them (waiting or parked at a seam, or set aside blocked): a lock
    /// held by any other thread (another test's, a thread of the run that is running) is released
    /// without the run, however long that takes on a loaded machine.
    ///
    /// A wait that names no owner (a condition, a semaphore, a lock whose holder has not yet
    /// written its id, glibc's internal locks, a one-time initialisation) is durable only while no
    /// other thread of the process runs or is runnable (the watchdog aside): any thread that can
    /// still run may be the one that ends it — a holder preempted on a loaded machine is runnable.
    private func blocked(_ participant: Int, _ kind: Machine.Kind, _ tid: Int32?, held: Set<Int32>, watchdog: Int32) -> String? {
        func durable(_ tid: Int32) -> String? {
            guard case .blocked(let what, let owner) = observe(participant, tid) else { return nil }
            if let owner, owner != tid, !held.contains(owner) { return nil }
            if owner == nil, !plantedIgnoresRunningThreads, !ThreadActivity.noOtherThreadRuns(excluding: watchdog) { return nil }
            return owner == tid ? "\(what) on a lock its own thread holds" : what
        }
        switch kind {
        case .thread:
            return tid.flatMap(durable)
        case .task:
            let work = executor.work
            guard work.inFlight > 0 else { return "a suspension no job of the run will end (its task waits for work outside the run)" }
            // A plain loop: each look reads the OS once (a lazy map would read it twice, and may
            // see another answer the second time).
            for tid in work.threads {
                if let what = durable(tid) { return what }
            }
            return nil
        }
    }
}
