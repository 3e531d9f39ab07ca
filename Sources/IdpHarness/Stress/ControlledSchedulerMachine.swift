/// The decisions of a ``ControlledScheduler`` run, as a value: who waits, who runs, who is parked
/// or set aside, the decision log, and when the run has ended. The scheduler (its storage) asks it
/// under its lock and performs the returned ``Action`` after releasing it: it signals a thread's
/// turn, runs an async participant's start or delivery, lets the quiet world act, resumes the
/// outcome's waiters.
///
/// It holds no semaphores, closures or continuations and reads no clock: each event that depends
/// on time is given `now`. So its tests drive it as a plain value, without threads.
///
/// The rules it keeps:
/// - at most one participant runs (``running``); the turn passes only at a seam, a park, a finish,
///   or when the watchdog, shown by the OS that the running participant is blocked outside a
///   seam, sets it aside;
/// - the first decision waits until every initial participant has reached its first seam;
/// - a replayed decision is followed when the participant it names waits; otherwise the run
///   records a ``ControlledScheduler/Outcome/divergence`` and the strategy chooses;
/// - a delivery that comes before its participant parks is kept, and that park goes on at once;
/// - the run ends once, when every participant has finished or nobody can go on; work that joins
///   later opens it again.
struct ControlledSchedulerMachine: Sendable {
    /// How a participant runs, and so how the storage hands it the turn.
    enum Kind: Sendable, Equatable {
        /// Its own OS thread, which waits for its turn on a semaphore.
        case thread
        /// A task, started or resumed by a closure the storage holds; its jobs run on the run's
        /// own executor (``ControlledScheduler``).
        case task
    }

    /// Where a participant is.
    enum Status: Sendable, Equatable {
        /// An initial participant that has not reached its first seam.
        case notArrived
        /// At this seam, ready to be chosen.
        case waiting(String)
        /// Chosen at this seam: it has the turn.
        case running(String)
        /// Waiting at this seam for a delivery that another participant makes (``unpark(_:now:)``).
        case parked(String)
        /// Set aside after this seam: the OS showed it blocked before the next one (in code
        /// the scheduler does not control).
        case overdue(String)
        /// Done.
        case finished

        var isNotArrived: Bool { if case .notArrived = self { true } else { false } }
        var isWaiting: Bool { if case .waiting = self { true } else { false } }
        var isFinished: Bool { if case .finished = self { true } else { false } }
        var isOverdue: Bool { if case .overdue = self { true } else { false } }
        var isParked: Bool { if case .parked = self { true } else { false } }

        /// The seam last reached, as the outcome's ``ControlledScheduler/Outcome/lastSeams`` shows it.
        var lastSeam: String {
            switch self {
            case .notArrived: "not started"
            case .waiting(let seam), .running(let seam): seam
            case .parked(let seam): "\(seam) (parked)"
            case .overdue(let seam): "\(seam) (blocked outside a seam)"
            case .finished: "finished"
            }
        }
    }

    /// One participant of the run.
    struct Participant: Sendable, Equatable {
        let kind: Kind
        var status: Status
        /// A delivery came while it was not parked: its next park goes on at once.
        var deliveredEarly = false
        /// Its first seam and who handed it over, for the outcome's
        /// ``ControlledScheduler/Outcome/firstSeams``.
        let firstSeam: String
    }

    /// The participant that gets the turn, and how the storage hands it over.
    enum Turn: Sendable, Equatable {
        /// A thread participant: signal the semaphore its OS thread waits on.
        case thread(Int)
        /// An async participant: run what the storage holds for it, its task's start or the
        /// delivery that resumes its task.
        case task(Int)

        var participant: Int {
            switch self {
            case .thread(let participant), .task(let participant): participant
            }
        }
    }

    /// What the storage does after releasing its lock.
    enum Action: Sendable, Equatable {
        /// Nothing.
        case none
        /// Hand the turn over.
        case wake(Turn)
        /// The participant that asked to park goes on at once, as its delivery came first: an
        /// async participant's storage runs that delivery now.
        case goOn
        /// The participant is not parked yet: keep its delivery for its next park.
        case holdDelivery
        /// Nobody can go on and some are parked: let the quiet world act (the scheduler's
        /// quiescence hook), then report ``quiescenceEnded(acted:judgingDeadlock:)``, which judges a
        /// deadlock if `judgingDeadlock` and the world did nothing.
        case quiesce(judgingDeadlock: Bool)
        /// The run has ended: resume every waiter for the outcome with this one, and stop the
        /// watchdog.
        case end(ControlledScheduler.Outcome)
    }

    private(set) var participants: [Participant]
    private var strategy: StrategyState
    /// A recorded schedule to follow first.
    private let replay: [Int]
    /// The participant chosen at each decision.
    private(set) var decisions: [Int] = []
    /// The participant that has the turn.
    private(set) var running: Int?
    /// Whether the first decision has been taken (or the watchdog gave up waiting for it).
    private(set) var started = false
    /// Whether every participant has finished or the run deadlocked.
    private(set) var done = false
    private(set) var deadlocked = false
    private(set) var divergence: String?
    /// Why the run is partially controlled, the first time; `nil` while it is fully controlled.
    private(set) var partialControlReason: String?
    /// When a participant last reached a seam, parked, finished, joined or was delivered to, or
    /// was set aside: what the last-resort guard counts from.
    private var lastProgress: ContinuousClock.Instant
    /// Whether the quiet world (the scheduler's quiescence hook) is acting: work it hands over is
    /// the quiet world's, not a participant's, and does not cost the run its control; and what it
    /// makes ready is chosen from when it is done, so the choice does not depend on how far it got.
    private(set) var quiescing = false

    /// How long nothing may move before the run ends undecided: the last-resort guard, never a
    /// verdict.
    let guardLimit: Duration
    /// Why the run ended undecided (the last-resort guard), or `nil`.
    private(set) var undecided: String?
    /// ``lastProgress`` when the quiet world could do nothing but wait for work the run handed
    /// outside it: while nothing has moved since, the run waits for that work.
    private var awaitingOutsideSince: ContinuousClock.Instant?

    /// A run of `participants` thread participants, none arrived yet.
    /// - Parameters:
    ///   - strategy, seed: How to choose once the replay is used up.
    ///   - replay: A recorded schedule to follow first.
    ///   - guardLimit: How long nothing may move before the run ends undecided.
    ///   - now: The time the run starts.
    init(participants: Int, strategy: ScheduleStrategy, seed: UInt64, replay: [Int] = [],
         guardLimit: Duration, now: ContinuousClock.Instant, preemptionSeams: [String]? = nil) {
        self.preemptionSeams = preemptionSeams
        self.guardLimit = guardLimit
        precondition(participants > 0, "a controlled run needs at least one participant")
        self.participants = (0..<participants).map { Participant(kind: .thread, status: .notArrived, firstSeam: "participant \($0)") }
        self.strategy = StrategyState(strategy, participants: participants, seed: seed)
        self.replay = replay
        lastProgress = now
    }

    /// The seams (by name prefix) where the strategy's change points may fall; `nil`: every
    /// decision counts.
    private let preemptionSeams: [String]?
    /// Decisions taken where a change point may fall, so far.
    private var preemptionSteps = 0

    // MARK: Queries

    /// The run as it stands.
    var outcome: ControlledScheduler.Outcome {
        ControlledScheduler.Outcome(decisions: decisions, partiallyControlled: partialControlReason != nil, partialControlReason: partialControlReason,
                                    deadlocked: deadlocked, divergence: divergence, lastSeams: participants.map(\.status.lastSeam),
                                    firstSeams: participants.map(\.firstSeam), undecided: undecided)
    }

    /// The outcome once the run has ended; `nil` while it goes on (the asker waits for ``Action/end(_:)``).
    var finalOutcome: ControlledScheduler.Outcome? { done ? outcome : nil }

    /// Whether `participant` has the turn.
    func isRunning(_ participant: Int) -> Bool {
        guard isParticipant(participant) else { return false }
        if case .running = participants[participant].status { return true }
        return false
    }

    // MARK: Events

    /// `participant` reached `seam` and waits to be chosen. The first decision is taken once every
    /// initial participant has arrived; after it, the running participant passes the turn on here.
    mutating func arrive(_ participant: Int, at seam: String, now: ContinuousClock.Instant) -> Action {
        lastProgress = now
        let wasRunning = running == participant
        participants[participant].status = .waiting(seam)
        guard started else {
            guard !anyParticipant(\.isNotArrived) else { return .none }
            started = true
            return Self.wake(choose(previous: nil))
        }
        if wasRunning { running = nil }
        guard running == nil else { return .none }
        return Self.wake(choose(previous: wasRunning ? participant : nil))
    }

    /// `participant` waits at `seam` for a delivery (``unpark(_:now:)``) and lets another go on
    /// meanwhile; ``Action/goOn`` if the delivery came already. With nobody to choose, the quiet
    /// world acts, and a deadlock is judged if it did nothing.
    mutating func park(_ participant: Int, at seam: String, now: ContinuousClock.Instant) -> Action {
        lastProgress = now
        if participants[participant].deliveredEarly {
            participants[participant].deliveredEarly = false
            return .goOn
        }
        participants[participant].status = .parked(seam)
        if running == participant { running = nil }
        guard running == nil, started else { return .none }
        if let next = choose(previous: participant) { return .wake(next) }
        return done ? .none : .quiesce(judgingDeadlock: true)
    }

    /// `participant`'s delivery came: a parked participant waits to be chosen again;
    /// one that has not parked yet takes the delivery at its next park (``Action/holdDelivery``).
    mutating func unpark(_ participant: Int, now: ContinuousClock.Instant) -> Action {
        guard isParticipant(participant) else { return .none }
        guard case .parked(let seam) = participants[participant].status else {
            participants[participant].deliveredEarly = true
            return .holdDelivery
        }
        participants[participant].status = .waiting(seam)
        lastProgress = now
        return mayChoose ? Self.wake(choose(previous: nil)) : .none
    }

    /// A participant of `kind` joins, waiting at `seam`, handed over by `parent` (`nil`: by the
    /// quiet world, or from outside the run, which costs the run its full control). Returns its
    /// number, the next free one, so that it repeats with the schedule.
    mutating func join(at seam: String, parent: Int?, kind: Kind, now: ContinuousClock.Instant) -> (participant: Int, action: Action) {
        let participant = participants.count
        let origin = parent.map { "participant \($0)" } ?? (quiescing ? "the quiet world" : "outside the run")
        participants.append(Participant(kind: kind, status: .waiting(seam), firstSeam: "\(seam) from \(origin)"))
        strategy.addParticipant(parent: parent)
        done = false
        if parent == nil && !quiescing {
            losesControl(kind == .thread ? "work '\(seam)' was handed over from a thread outside the run's participants"
                                         : "async work '\(seam)' was started outside the run's participants")
        }
        lastProgress = now
        return (participant, mayChoose ? Self.wake(choose(previous: nil)) : .none)
    }

    /// `participant` is done; the turn passes on. Once every participant has finished, the run
    /// ends; with nobody to choose and some parked, the quiet world acts.
    mutating func finish(_ participant: Int, now: ContinuousClock.Instant) -> Action {
        lastProgress = now
        let wasRunning = running == participant
        participants[participant].status = .finished
        if !started, !anyParticipant(\.isNotArrived) { started = true }
        if wasRunning { running = nil }
        var next: Turn?
        if started, running == nil { next = choose(previous: wasRunning ? participant : nil) }
        if !anyParticipant({ !$0.isFinished }) { done = true }
        if let next { return .wake(next) }
        if done { return .end(outcome) }
        if started, running == nil, anyParticipant(\.isParked) { return .quiesce(judgingDeadlock: true) }
        return .none
    }

    /// The quiet world starts to act (``Action/quiesce(judgingDeadlock:)``).
    mutating func quiescenceBegan() {
        quiescing = true
    }

    /// The quiet world is done; `acted` tells whether it changed anything. What it made ready is
    /// chosen now. With `judgingDeadlock`, a world that did nothing, with nobody running, waiting or
    /// set aside, ends the run as a deadlock, unless it waits for work outside the run
    /// (`awaitingOutside`: a thread or queue the run does not schedule may still signal).
    mutating func quiescenceEnded(acted: Bool, judgingDeadlock: Bool, awaitingOutside: Bool = false) -> Action {
        quiescing = false
        if mayChoose, let next = choose(previous: nil) { return .wake(next) }
        if judgingDeadlock, !acted, awaitingOutside, running == nil, !done { awaitingOutsideSince = lastProgress }
        guard judgingDeadlock, !acted, !awaitingOutside, running == nil, !done,
              !anyParticipant({ $0.isOverdue || $0.isWaiting }) else { return .none }
        deadlocked = true
        done = true
        return .end(outcome)
    }

    /// The watchdog woke at `now`: ends the run undecided when nothing has moved for the
    /// last-resort guard's time (a participant spinning for ever, outside work that never
    /// signals). Nothing else is judged by time: participants are set aside only when the OS shows
    /// them blocked (``observedBlocked(_:turn:in:now:)``), and a deadlock is judged when nobody can
    /// go on (``quiescenceEnded(acted:judgingDeadlock:awaitingOutside:)``).
    mutating func watchdogWoke(now: ContinuousClock.Instant) -> Action {
        if done { return .end(outcome) }
        guard now - lastProgress > guardLimit else { return .none }
        let stuck = participants.indices.filter { !participants[$0].status.isFinished }.map { "participant \($0) \(participants[$0].status.lastSeam)" }
        return endsUndecided("nothing moved for \(guardLimit) (\(stuck.joined(separator: ", ")))")
    }

    /// Ends the run undecided, for `what`: it was not controlled, and no verdict is drawn from it.
    private mutating func endsUndecided(_ what: String) -> Action {
        undecided = what
        losesControl("the kit could not decide: \(what)")
        done = true
        return .end(outcome)
    }

    /// Every participant that has not finished is set aside, blocked outside a seam, and the OS
    /// shows each one's thread still blocked on a lock held by one of them (a lock taken twice, a
    /// lock-order inversion outside the seams): nothing can end those waits, so the run ends at
    /// once, undecided (it was not controlled), rather than after the last-resort guard.
    mutating func stuckOutside(_ what: String) -> Action {
        guard !done, running == nil, !anyParticipant({ $0.isWaiting || $0.isParked || $0.isNotArrived }), anyParticipant(\.isOverdue) else { return .none }
        return endsUndecided(what)
    }

    /// Whether the run waits for work it handed outside it: nobody can go on, the quiet world
    /// could do nothing, and nothing has moved since.
    var isAwaitingOutside: Bool { !done && running == nil && awaitingOutsideSince == lastProgress }

    /// The run waits for work it handed outside it (``isAwaitingOutside``), it has already lost
    /// control by handing it over, and the OS shows no thread of the process running (`what`): the
    /// outside work is not under way, so the run ends at once, undecided, rather than after the
    /// last-resort guard. The verdict on such a run is "not exercised" however it ends.
    mutating func outsideIdle(_ what: String) -> Action {
        guard isAwaitingOutside, partialControlReason != nil else { return .none }
        return endsUndecided(what)
    }

    /// The overdue participants, if every participant that has not finished is one (nobody
    /// running, waiting or parked): those whose waits only they could end.
    var onlyOverdueLeft: [Int]? {
        guard !done, running == nil, !anyParticipant({ $0.isWaiting || $0.isParked || $0.isNotArrived }) else { return nil }
        let overdue = participants.indices.filter { participants[$0].status.isOverdue }
        return overdue.isEmpty ? nil : overdue
    }

    /// The watchdog saw `participant`'s thread blocked `what` (its OS state: asleep in a wait only
    /// another thread can end), outside a seam, at decision `turn`: if it still has the turn taken
    /// then, it is set aside (the run is partially controlled) and another goes on. An observation
    /// from an earlier turn changes nothing: the participant reached a seam since.
    mutating func observedBlocked(_ participant: Int, turn: Int, in what: String, now: ContinuousClock.Instant) -> Action {
        guard !done, isParticipant(participant) else { return .none }
        if !started, participants[participant].status == .notArrived {
            // Blocked before its first seam: start with those that came.
            losesControl("participant \(participant) was blocked in \(what) before its first point")
            participants[participant].status = .overdue("not started")
            lastProgress = now
            guard !anyParticipant(\.isNotArrived) else { return .none }
            started = true
            return Self.wake(choose(previous: nil))
        }
        guard running == participant, decisions.count == turn else { return .none }
        let seam = participants[participant].status.lastSeam
        losesControl("participant \(participant) was blocked in \(what) after '\(seam)', outside the points the kit controls")
        participants[participant].status = .overdue(seam)
        running = nil
        lastProgress = now
        if let next = choose(previous: participant) { return .wake(next) }
        return .quiesce(judgingDeadlock: false)
    }

    /// The run depends on work it does not schedule (`reason`): it is partially controlled.
    mutating func loseControl(_ reason: String) {
        losesControl(reason)
    }

    /// The number of decisions taken so far: the running participant's turn.
    var turn: Int { decisions.count }

    // MARK: Choosing

    /// Whether work that just became ready may be chosen now: the run has started, nobody runs,
    /// and the quiet world is not acting.
    private var mayChoose: Bool { started && running == nil && !quiescing }

    private mutating func losesControl(_ reason: String) {
        if partialControlReason == nil { partialControlReason = reason }
    }

    /// Whether the decision after `previous` ran may take a change point: with preemption seams,
    /// only when `previous` stopped at one of them (counted from 1).
    private mutating func countsAsStep(_ previous: Int?) -> Bool {
        if let prefixes = preemptionSeams {
            guard let previous, case .waiting(let seam) = participants[previous].status else { return false }
            var preempts = false
            for index in 0..<prefixes.count where seam.hasPrefix(prefixes[index]) {
                preempts = true
                break
            }
            guard preempts else { return false }
        }
        preemptionSteps += 1
        return true
    }

    private static func wake(_ turn: Turn?) -> Action {
        turn.map(Action.wake) ?? .none
    }

    /// Whether `number` names a participant (`participants.indices.contains`, without the generic
    /// call).
    private func isParticipant(_ number: Int) -> Bool { number >= 0 && number < participants.count }

    /// Whether some participant's status passes `test`.
    private func anyParticipant(_ test: (Status) -> Bool) -> Bool {
        var index = 0
        while index < participants.count {
            if test(participants[index].status) { return true }
            index += 1
        }
        return false
    }

    /// Gives the turn to a waiting participant (replayed, or by the strategy); `nil` if none waits.
    /// `previous` ran up to this decision, if any.
    private mutating func choose(previous: Int?) -> Turn? {
        var enabled: [Int] = []
        var index = 0
        while index < participants.count {
            if participants[index].status.isWaiting { enabled.append(index) }
            index += 1
        }
        guard !enabled.isEmpty else { return nil }
        let step = decisions.count + 1
        var chosen: Int
        if decisions.count < replay.count, isParticipant(replay[decisions.count]), participants[replay[decisions.count]].status.isWaiting {
            chosen = replay[decisions.count]
        } else {
            if decisions.count < replay.count, divergence == nil {
                divergence = "decision \(step) of the replay names participant \(replay[decisions.count]), which was not waiting (waiting: \(enabled))"
            }
            chosen = strategy.pick(from: enabled, step: countsAsStep(previous) ? preemptionSteps : nil, previous: previous)
        }
        decisions.append(chosen)
        running = chosen
        participants[chosen].status = .running(participants[chosen].status.lastSeam)
        return participants[chosen].kind == .thread ? .thread(chosen) : .task(chosen)
    }
}
