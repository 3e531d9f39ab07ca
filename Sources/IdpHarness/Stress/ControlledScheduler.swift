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
/// A participant that does not reach a seam within `stallTimeout` (blocked in code the scheduler
/// does not control) is set aside and the run is marked ``Outcome/partiallyControlled``; another
/// participant gets the turn. When no participant is waiting and some have not finished for
/// `deadlockTimeout`, the run ends as ``Outcome/deadlocked``, with the decisions that led there.
/// For async participants, time in which the Swift concurrency pool runs nothing (every pool
/// thread busy with other work, as in a test suite whose CPU-bound tests run beside the stress)
/// counts towards neither: they cannot run then, and that is not their stall.
///
/// Threading: ``seam(_:_:)`` blocks its OS thread; call it only from participant threads, never from
/// a Swift concurrency thread. ``outcome()`` suspends without blocking.
public final class ControlledScheduler: Sendable {
    /// What a run did.
    public struct Outcome: Sendable, Equatable {
        /// The participant chosen at each decision: the run's schedule.
        public var decisions: [Int]
        /// Whether a participant ran outside the scheduler's control for a while.
        public var partiallyControlled: Bool
        /// Why, the first time: which participant was set aside, or which work was handed over
        /// from outside the run's participants.
        public var partialControlReason: String?
        /// Whether every unfinished participant was blocked outside a seam.
        public var deadlocked: Bool
        /// Where a replayed decision named a participant that was not waiting (nondeterminism in
        /// the code under test), or `nil`.
        public var divergence: String?
        /// Each participant's last seam (or "finished").
        public var lastSeams: [String]
        /// Each participant's first seam: for one that joined during the run, the work it is and
        /// who handed it over (`transport.request[trace] from participant 3`, `completion[trace]
        /// from the quiet world`, `mc.KSMStartEvent from participant 0`).
        public var firstSeams: [String] = []
    }

    private enum Status: Sendable, Equatable {
        case notArrived
        case waiting(String)
        case running(String)
        /// Waiting for something another participant delivers (``ControlledScheduler/park(_:_:)``).
        case parked(String)
        case overdue(String)
        case finished

        var isWaiting: Bool { if case .waiting = self { true } else { false } }
        var seam: String {
            switch self {
            case .notArrived: "not started"
            case .waiting(let seam), .running(let seam): seam
            case .parked(let seam): "\(seam) (parked)"
            case .overdue(let seam): "\(seam) (blocked outside a seam)"
            case .finished: "finished"
            }
        }
    }

    /// Whether the Swift concurrency pool runs work: async participants run on it, so while every
    /// pool thread is busy with other work (a test suite's CPU-bound tests, code that blocks a pool
    /// thread) their lack of progress is the pool's, not theirs.
    private enum PoolProbe: Sendable {
        case none
        /// A probe task was started at this time and has not run yet.
        case pending(since: ContinuousClock.Instant)
        /// The probe ran this long after it was started.
        case answered(after: Duration)
    }

    private struct State {
        var statuses: [Status]
        var strategy: StrategyState
        let replay: [Int]
        var decisions: [Int] = []
        var running: Int?
        var started = false
        var lastProgress = ContinuousClock.now
        /// When a participant last reached a seam or finished.
        var lastTurn = ContinuousClock.now
        var partiallyControlled = false
        var partialControlReason: String?
        var firstSeams: [String] = []
        /// The watchdog's probe of the Swift concurrency pool, taken before a stall of an async
        /// participant is judged.
        var poolProbe = PoolProbe.none
        /// The async participants (``ControlledScheduler/spawnAsync(_:parent:_:)``): they run on
        /// the pool, so their stalls wait for a probe.
        var asyncParticipants: Set<Int> = []

        /// Whether the stall at hand may be the pool's: the running participant is async, or,
        /// with none running, one set aside is.
        var stallMayBeThePool: Bool {
            if let running { return asyncParticipants.contains(running) }
            return asyncParticipants.contains { if case .overdue = statuses[$0] { true } else { false } }
        }

        /// Whether work that just became ready may be chosen now: the run has started, nobody
        /// runs, and the quiet world is not still acting (what it makes ready is chosen from
        /// when it is done, so the choice does not depend on how far it got).
        var mayChoose: Bool { started && running == nil && !quiescing }

        /// Adds a participant waiting at `seam`, handed over by `parent` (`nil`: by the quiet world,
        /// or from outside the run, which costs the run its full control: `outsideReason`).
        mutating func join(_ seam: String, parent: Int?, outsideReason: @autoclosure () -> String) -> Int {
            let participant = statuses.count
            statuses.append(.waiting(seam))
            firstSeams.append("\(seam) from \(parent.map { "participant \($0)" } ?? (quiescing ? "the quiet world" : "outside the run"))")
            turns.append(DispatchSemaphore(value: 0))
            strategy.addParticipant(parent: parent)
            done = false
            if parent == nil && !quiescing { losesControl(outsideReason()) }
            lastProgress = .now
            lastTurn = .now
            return participant
        }

        mutating func losesControl(_ reason: @autoclosure () -> String) {
            if !partiallyControlled { partialControlReason = reason() }
            partiallyControlled = true
        }
        var deadlocked = false
        var divergence: String?
        var done = false
        var waiters: [CheckedContinuation<Outcome, Never>] = []
        /// One turn semaphore per participant; participants that join later append theirs.
        var turns: [DispatchSemaphore]
        /// What to run instead of signalling a participant's semaphore when it is chosen: an
        /// async participant's start, or the delivery that resumes its suspended task.
        var resumes: [Int: @Sendable () -> Void] = [:]
        /// Deliveries to async participants that came before they parked (the participant was set
        /// aside meanwhile and its job ran): its park takes them at once.
        var earlyResumes: [Int: @Sendable () -> Void] = [:]
        /// Participants unparked before they parked: their next park returns at once.
        var unparkedEarly: Set<Int> = []
        /// Where each joined participant was posted from (its name), for the outcome.
        /// Whether ``ControlledScheduler/onQuiescence`` is running: work it posts is the quiet
        /// world's, not a participant's, and does not make the run partially controlled.
        var quiescing = false

        var outcome: Outcome {
            Outcome(decisions: decisions, partiallyControlled: partiallyControlled, partialControlReason: partialControlReason, deadlocked: deadlocked,
                    divergence: divergence, lastSeams: statuses.map(\.seam), firstSeams: firstSeams)
        }

        mutating func takeWaiters() -> [CheckedContinuation<Outcome, Never>] {
            defer { waiters = [] }
            return waiters
        }

        /// Gives the turn to a waiting participant (replayed or by the strategy); `nil` if none waits.
        mutating func choose(previous: Int?) -> Int? {
            let enabled = statuses.indices.filter { statuses[$0].isWaiting }
            guard !enabled.isEmpty else {
                if statuses.allSatisfy({ $0 == .finished }) { done = true }
                return nil
            }
            var chosen: Int
            if decisions.count < replay.count {
                chosen = replay[decisions.count]
                if !enabled.contains(chosen) {
                    if divergence == nil {
                        divergence = "decision \(decisions.count + 1) of the replay names participant \(chosen), which was not waiting (waiting: \(enabled))"
                    }
                    chosen = strategy.pick(from: enabled, step: decisions.count + 1, previous: previous)
                }
            } else {
                chosen = strategy.pick(from: enabled, step: decisions.count + 1, previous: previous)
            }
            decisions.append(chosen)
            running = chosen
            statuses[chosen] = .running(statuses[chosen].seam)
            return chosen
        }
    }

    private let state: LockedValue<State>
    /// Which participant each controlled OS thread is running (set by the thread itself).
    private let threads = LockedValue<[UInt: Int]>([:])
    /// Called when no participant can go on but some are parked: what the world does when it is
    /// quiet (a watchdog moving the clock so timeouts fire). Returns whether it did anything.
    private let onQuiescence: (@Sendable () -> Bool)?
    private let stallTimeout: Duration
    private let deadlockTimeout: Duration
    /// Starts a task on the Swift concurrency pool (see ``init(participants:strategy:seed:replay:stallTimeout:deadlockTimeout:onQuiescence:startTask:)``).
    private let startTask: @Sendable (@escaping @Sendable () async -> Void) -> Void
    /// How long the watchdog waits for its pool probe before judging a stall anyway.
    private var poolProbeLimit: Duration { max(deadlockTimeout * 12, .seconds(60)) }
    /// Signalled when the run is done, so its watchdog thread exits at once instead of at its
    /// next period (a suite runs hundreds of runs; their watchdogs would otherwise pile up).
    private let ended = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - participants: How many participants will call ``seam(_:_:)``, numbered from 0.
    ///   - strategy: How to choose; `seed` makes the choice repeatable.
    ///   - seed: Seeds the strategy's random choices: the same seed, the same schedule.
    ///   - replay: A recorded schedule to follow first; after it, the strategy decides.
    ///   - stallTimeout: How long the running participant may stay away from a seam before it is
    ///     set aside.
    ///   - deadlockTimeout: How long nobody may reach a seam or finish, with nobody waiting, before
    ///     the run is a deadlock (a participant set aside may only be slow).
    ///   - onQuiescence: Called when no participant can go on and some are parked (waiting for a
    ///     delivery that nobody controlled will make); returns whether it changed anything (moved
    ///     a clock, say). If it did not, and nobody runs outside control, the run is a deadlock.
    ///   - startTask: Starts a task on the Swift concurrency pool: an async participant's, and the
    ///     watchdog's probe of the pool. A plain `Task` by default; a test passes one that holds
    ///     tasks back to model a busy pool.
    public init(participants: Int, strategy: ScheduleStrategy, seed: UInt64, replay: [Int] = [],
                stallTimeout: Duration = .milliseconds(250), deadlockTimeout: Duration = .seconds(5),
                onQuiescence: (@Sendable () -> Bool)? = nil,
                startTask: @escaping @Sendable (@escaping @Sendable () async -> Void) -> Void = { body in Task { await body() } }) {
        self.startTask = startTask
        precondition(participants > 0, "a controlled run needs at least one participant")
        state = LockedValue(State(statuses: Array(repeating: .notArrived, count: participants),
                                  strategy: StrategyState(strategy, participants: participants, seed: seed), replay: replay,
                                  firstSeams: (0..<participants).map { "participant \($0)" },
                                  turns: (0..<participants).map { _ in DispatchSemaphore(value: 0) }))
        self.onQuiescence = onQuiescence
        self.stallTimeout = stallTimeout
        self.deadlockTimeout = max(deadlockTimeout, stallTimeout)
        let watchdog = Thread { [self] in watch() }
        watchdog.name = "IdpHarness-scheduler-watchdog"
        watchdog.start()
    }

    /// Participant `participant` is at seam `name`: waits until it is chosen to go on.
    public func seam(_ participant: Int, _ name: String) {
        adopt(participant)
        let next = state.withLock { state -> Int? in
            state.lastProgress = .now
            state.lastTurn = .now
            let wasRunning = state.running == participant
            state.statuses[participant] = .waiting(name)
            guard state.started else {
                guard state.statuses.allSatisfy({ $0 != .notArrived }) else { return nil }
                state.started = true
                return state.choose(previous: nil)
            }
            if wasRunning { state.running = nil }
            return state.running == nil ? state.choose(previous: wasRunning ? participant : nil) : nil
        }
        signal(next)
        waitForTurn(participant)
    }

    /// Blocks until `participant` is chosen. Taking the lock once more afterwards orders everything
    /// the previous participant did before passing the turn (it held this lock to pass it) before
    /// what this one does next, in a way ThreadSanitizer sees: code between seams needs no locks of
    /// its own to be race-free here.
    private func waitForTurn(_ participant: Int) {
        let turn = state.withLock { $0.turns[participant] }
        turn.wait()
        state.withLock { _ in }
    }

    private func signal(_ next: Int?) {
        guard let next else { return }
        let (turn, resume) = state.withLock { ($0.turns[next], $0.resumes.removeValue(forKey: next)) }
        if let resume { resume() } else { turn.signal() }
    }

    /// An async participant's hold on its turn, carried by its task (and the tasks it starts).
    public struct AsyncTurn: Sendable {
        let scheduler: ObjectIdentifier
        let participant: Int
    }

    @TaskLocal static var asyncTurn: AsyncTurn?

    /// The async participant whose task (or a task it started) is calling, if it is this
    /// scheduler's.
    public var currentAsync: Int? {
        guard let turn = Self.asyncTurn, turn.scheduler == ObjectIdentifier(self) else { return nil }
        return turn.participant
    }

    /// Adds an async participant: when chosen, `body` starts in a new task, which runs as this
    /// participant until it parks (``parkAsync(_:_:)``) or ends. Its code between seams runs on
    /// Swift concurrency threads and never blocks one: its seams suspend, they do not wait.
    @discardableResult
    public func spawnAsync(_ seam: String, parent: Int?, _ body: @escaping @Sendable () async -> Void) -> Int {
        let schedulerId = ObjectIdentifier(self)
        let (participant, next) = state.withLock { state -> (Int, Int?) in
            let participant = state.join(seam, parent: parent, outsideReason: "async work '\(seam)' was started outside the run's participants")
            state.asyncParticipants.insert(participant)
            let turn = AsyncTurn(scheduler: schedulerId, participant: participant)
            state.resumes[participant] = { [self] in
                startTask { [self] in
                    await Self.$asyncTurn.withValue(turn) { await body() }
                    finish(participant)
                }
            }
            return (participant, state.mayChoose ? state.choose(previous: nil) : nil)
        }
        signal(next)
        return participant
    }

    /// Whether async participant `participant` runs now (under control), so it may park.
    public func isRunning(_ participant: Int) -> Bool {
        state.withLock { state in
            guard participant < state.statuses.count else { return false }
            if case .running = state.statuses[participant] { return true }
            return false
        }
    }

    /// The running async participant is about to suspend until a delivery (``unparkAsync(_:_:)``);
    /// another goes on. Never blocks: the caller's task suspends on its own continuation. If the
    /// delivery came already, it is handed over at once and the participant goes on.
    public func parkAsync(_ participant: Int, _ name: String) {
        enum Step { case deliverNow(@Sendable () -> Void), choose(next: Int?, quiet: Bool) }
        let step = state.withLock { state -> Step in
            state.lastProgress = .now
            state.lastTurn = .now
            if let early = state.earlyResumes.removeValue(forKey: participant) { return .deliverNow(early) }
            state.statuses[participant] = .parked(name)
            if state.running == participant { state.running = nil }
            guard state.running == nil, state.started else { return .choose(next: nil, quiet: false) }
            let next = state.choose(previous: participant)
            return .choose(next: next, quiet: next == nil && !state.done)
        }
        switch step {
        case .deliverNow(let resume):
            resume()
        case .choose(let next, let quiet):
            signal(next)
            if quiet { quiesce() }
        }
    }

    /// Delivers to an async participant: `resume` (which resumes its task) runs when it is chosen.
    /// Never blocks. A participant that has not parked yet takes it when it parks.
    public func unparkAsync(_ participant: Int, _ resume: @escaping @Sendable () -> Void) {
        let next = state.withLock { state -> Int? in
            guard participant < state.statuses.count else { return nil }
            guard case .parked(let name) = state.statuses[participant] else {
                state.earlyResumes[participant] = resume
                return nil
            }
            state.statuses[participant] = .waiting(name)
            state.resumes[participant] = resume
            state.lastProgress = .now
            return state.mayChoose ? state.choose(previous: nil) : nil
        }
        signal(next)
    }

    /// The calling OS thread, as the key of ``threads``.
    private static var threadKey: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }

    /// Marks the calling OS thread as running `participant`'s work (``current`` then names it).
    public func adopt(_ participant: Int) {
        threads.withLock { $0[Self.threadKey] = participant }
    }

    /// The participant the calling OS thread runs, or `nil` (a thread outside the run's control,
    /// or a Swift concurrency thread).
    public var current: Int? {
        threads.withLock { $0[Self.threadKey] }
    }

    /// Adds a participant that waits at `seam` and, when chosen, runs `job` on a new OS thread,
    /// then finishes. Called by the running participant, the new participant's number (the next
    /// free one) repeats with the schedule; called from elsewhere, the run is marked partially
    /// controlled. Never blocks.
    @discardableResult
    public func spawn(_ seam: String, parent: Int? = nil, _ job: @escaping @Sendable () -> Void) -> Int {
        let caller = parent ?? current
        let (participant, next) = state.withLock { state -> (Int, Int?) in
            let participant = state.join(seam, parent: caller, outsideReason: "work '\(seam)' was handed over from a thread outside the run's participants")
            return (participant, state.mayChoose ? state.choose(previous: nil) : nil)
        }
        let thread = Thread { [self] in
            adopt(participant)
            waitForTurn(participant)
            job()
            finish(participant)
        }
        thread.stackSize = 512 * 1024
        thread.name = "IdpHarness-job-\(participant)"
        thread.start()
        signal(next)
        return participant
    }

    /// The running `participant` waits for a delivery (``unpark(_:)``) and lets another go on
    /// meanwhile; returns once it is unparked and chosen again. Returns at once if it was unparked
    /// already.
    public func park(_ participant: Int, _ name: String) {
        adopt(participant)
        enum Step { case goOn, wait(next: Int?, quiet: Bool) }
        let step = state.withLock { state -> Step in
            state.lastProgress = .now
            state.lastTurn = .now
            if state.unparkedEarly.remove(participant) != nil { return .goOn }
            state.statuses[participant] = .parked(name)
            if state.running == participant { state.running = nil }
            guard state.running == nil, state.started else { return .wait(next: nil, quiet: false) }
            let next = state.choose(previous: participant)
            return .wait(next: next, quiet: next == nil && !state.done)
        }
        guard case .wait(let next, let quiet) = step else { return }
        signal(next)
        if quiet { quiesce() }
        waitForTurn(participant)
    }

    /// Makes a parked `participant` eligible to run again (its delivery came). Never blocks.
    public func unpark(_ participant: Int) {
        let next = state.withLock { state -> Int? in
            guard participant < state.statuses.count else { return nil }
            guard case .parked(let name) = state.statuses[participant] else {
                state.unparkedEarly.insert(participant)
                return nil
            }
            state.statuses[participant] = .waiting(name)
            state.lastProgress = .now
            return state.mayChoose ? state.choose(previous: nil) : nil
        }
        signal(next)
    }

    /// Nobody can go on and some are parked: let the world act (``onQuiescence``); if it cannot,
    /// and nobody runs outside control, the run is a deadlock.
    private func quiesce() {
        let acted = runQuiescenceHook()
        let ended = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            guard !acted, state.running == nil, !state.done,
                  !state.statuses.contains(where: { if case .overdue = $0 { true } else { $0.isWaiting } }) else { return [] }
            state.deadlocked = true
            state.done = true
            return state.takeWaiters()
        }
        resume(ended)
        if state.withLock({ $0.done }) { self.ended.signal() }
    }

    /// Participant `participant` is done; the turn passes on.
    public func finish(_ participant: Int) {
        // The thread no longer runs this participant's work: its pthread id may be reused by a
        // thread that has nothing to do with the run.
        let key = Self.threadKey
        threads.withLock { threads in if threads[key] == participant { threads[key] = nil } }
        let (next, ended, quiet) = state.withLock { state -> (Int?, [CheckedContinuation<Outcome, Never>], Bool) in
            state.lastProgress = .now
            state.lastTurn = .now
            let wasRunning = state.running == participant
            state.statuses[participant] = .finished
            if !state.started, state.statuses.allSatisfy({ $0 != .notArrived }) { state.started = true }
            var next: Int?
            if wasRunning { state.running = nil }
            if state.started, state.running == nil { next = state.choose(previous: wasRunning ? participant : nil) }
            if state.statuses.allSatisfy({ $0 == .finished }) { state.done = true }
            let quiet = state.started && next == nil && state.running == nil && !state.done
                && state.statuses.contains { if case .parked = $0 { true } else { false } }
            return (next, state.done ? state.takeWaiters() : [], quiet)
        }
        signal(next)
        resume(ended)
        if state.withLock({ $0.done }) { self.ended.signal() }
        if quiet { quiesce() }
    }

    /// The outcome, once every participant finished or the run deadlocked.
    public func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Outcome? in
                if state.done { return state.outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func resume(_ waiters: [CheckedContinuation<Outcome, Never>]) {
        guard !waiters.isEmpty else { return }
        let outcome = state.withLock { $0.outcome }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// Runs ``onQuiescence`` as the quiet world, not as the calling participant: its pauses are
    /// not the participant's seams.
    private func runQuiescenceHook() -> Bool {
        guard let onQuiescence else { return false }
        let key = Self.threadKey
        let adopted = threads.withLock { $0.removeValue(forKey: key) }
        state.withLock { $0.quiescing = true }
        let acted = onQuiescence()
        let next = state.withLock { state -> Int? in
            state.quiescing = false
            return state.mayChoose ? state.choose(previous: nil) : nil
        }
        if let adopted { threads.withLock { $0[key] = adopted } }
        signal(next)
        return acted
    }

    /// Sets aside a participant that stays away from its seam, and calls a deadlock when nobody
    /// can go on.
    ///
    /// A stall of an async participant is judged only when the Swift concurrency pool is seen to
    /// run work: at each such stall the watchdog starts a probe task, and judges once that probe
    /// ran promptly. While the probe waits
    /// for a pool thread, nothing is judged; a probe that waited long starts the stall over from
    /// when it ran, and moves the deadlock timer on by its wait. So a pool kept busy by other work
    /// delays a verdict instead of faking one. A probe that has not run after ``poolProbeLimit`` is
    /// taken as an answer (a pool blocked for good must not hang the run).
    private func watch() {
        let period = max(stallTimeout / 5, .milliseconds(1))
        while true {
            _ = ended.wait(timeout: .now(plus: period))
            var quiet = false
            var probe = false
            let (next, ended, stop) = state.withLock { state -> (Int?, [CheckedContinuation<Outcome, Never>], Bool) in
                if state.done { return (nil, state.takeWaiters(), true) }
                guard ContinuousClock.now - state.lastProgress > stallTimeout else { return (nil, [], false) }
                switch state.stallMayBeThePool ? state.poolProbe : .answered(after: .zero) {
                case .none:
                    state.poolProbe = .pending(since: .now)
                    probe = true
                    return (nil, [], false)
                case .pending(let since):
                    guard ContinuousClock.now - since > poolProbeLimit else { return (nil, [], false) }
                    state.poolProbe = .none
                case .answered(let wait):
                    state.poolProbe = .none
                    guard wait <= stallTimeout / 4 else {
                        state.lastProgress = .now
                        state.lastTurn += wait
                        return (nil, [], false)
                    }
                }
                state.lastProgress = .now
                if !state.started {
                    // A participant is blocked before its first seam: start with those that came.
                    state.started = true
                    state.losesControl("a participant did not reach its first seam within \(stallTimeout)")
                    for index in state.statuses.indices where state.statuses[index] == .notArrived { state.statuses[index] = .overdue("not started") }
                    return (state.choose(previous: nil), [], false)
                }
                if let running = state.running {
                    let seam = state.statuses[running].seam
                    state.losesControl("participant \(running) stayed away from a seam for \(stallTimeout) after '\(seam)'")
                    state.statuses[running] = .overdue(state.statuses[running].seam)
                    state.running = nil
                    let next = state.choose(previous: running)
                    quiet = next == nil && !state.done
                    return (next, [], false)
                }
                if let next = state.choose(previous: nil) { return (next, [], false) }
                guard !state.done else { return (nil, state.takeWaiters(), true) }
                if !quiet && ContinuousClock.now - state.lastTurn <= deadlockTimeout {
                    quiet = true   // nobody can go on: let the quiet world act before calling it a deadlock
                    return (nil, [], false)
                }
                guard ContinuousClock.now - state.lastTurn > deadlockTimeout else { return (nil, [], false) }
                state.deadlocked = true
                state.done = true
                return (nil, state.takeWaiters(), true)
            }
            if probe { startPoolProbe() }
            signal(next)
            resume(ended)
            if stop { return }
            if quiet { _ = runQuiescenceHook() }
        }
    }

    /// Starts the watchdog's probe of the Swift concurrency pool: a task that records how long it
    /// waited for a pool thread.
    private func startPoolProbe() {
        startTask { [weak self] in
            self?.state.withLock { state in
                if case .pending(let since) = state.poolProbe { state.poolProbe = .answered(after: .now - since) }
            }
        }
    }
}

