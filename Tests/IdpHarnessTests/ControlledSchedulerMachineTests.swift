@testable import IdpHarness
import Testing

@Suite("The controlled scheduler's decisions, as a value")
struct ControlledSchedulerMachineTests {
    typealias Machine = ControlledSchedulerMachine
    typealias Action = ControlledSchedulerMachine.Action

    static let t0 = ContinuousClock.now
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { t0 + .milliseconds(milliseconds) }

    /// A run of `participants` thread participants whose choices follow `replay` while it lasts;
    /// undecided after 10 s in which nothing moves.
    static func machine(_ participants: Int, replay: [Int] = [], strategy: ScheduleStrategy = .randomWalk, seed: UInt64 = 1) -> Machine {
        Machine(participants: participants, strategy: strategy, seed: seed, replay: replay, guardLimit: .seconds(10), now: t0)
    }

    static func ended(_ action: Action) -> ControlledScheduler.Outcome? {
        if case .end(let outcome) = action { outcome } else { nil }
    }

    /// Every participant arrives at "start"; then whoever gets the turn reaches `seamsEach` more
    /// seams and finishes. Returns the last action.
    static func drive(_ machine: inout Machine, participants: Int, seamsEach: Int) -> Action {
        var action = Action.none
        for participant in 0..<participants { action = machine.arrive(participant, at: "start", now: t0) }
        var turns: [Int: Int] = [:]
        while case .wake(let turn) = action {
            let participant = turn.participant
            turns[participant, default: 0] += 1
            let turn = turns[participant]!
            action = turn <= seamsEach ? machine.arrive(participant, at: "seam \(turn)", now: t0) : machine.finish(participant, now: t0)
        }
        return action
    }

    @Test("the first decision waits for every participant's first seam; then the running one passes the turn at its next seam, and the last finish ends the run")
    func batonPassing() throws {
        // Given two participants, the first at its seam
        var machine = Self.machine(2, replay: [1, 0, 1])
        #expect(machine.arrive(0, at: "start", now: Self.at(0)) == .none)
        #expect(machine.running == nil && !machine.started)
        // When the second arrives, the first decision is taken
        #expect(machine.arrive(1, at: "start", now: Self.at(1)) == .wake(.thread(1)))
        #expect(machine.isRunning(1) && !machine.isRunning(0))
        // Then the running one passes the turn on at its next seam
        #expect(machine.arrive(1, at: "checked", now: Self.at(2)) == .wake(.thread(0)))
        #expect(machine.finish(0, now: Self.at(3)) == .wake(.thread(1)))
        #expect(machine.finalOutcome == nil)
        // And the last finish ends the run with its schedule
        let outcome = try #require(Self.ended(machine.finish(1, now: Self.at(4))))
        #expect(outcome.decisions == [1, 0, 1])
        #expect(outcome.lastSeams == ["finished", "finished"])
        #expect(!outcome.partiallyControlled && !outcome.deadlocked && outcome.divergence == nil)
        #expect(machine.finalOutcome == outcome)
    }

    @Test("a participant that finishes before its first seam counts as arrived")
    func finishBeforeFirstSeam() {
        var machine = Self.machine(2)
        #expect(machine.arrive(0, at: "start", now: Self.at(0)) == .none)
        #expect(machine.finish(1, now: Self.at(1)) == .wake(.thread(0)))
        #expect(machine.started)
    }

    @Test("the same seed gives the same decisions, and a recorded schedule replays them exactly")
    func choosing() {
        var first = Self.machine(3, strategy: .pct(depth: 2, steps: 9), seed: 42)
        var second = Self.machine(3, strategy: .pct(depth: 2, steps: 9), seed: 42)
        #expect(Self.ended(Self.drive(&first, participants: 3, seamsEach: 2)) != nil)
        #expect(Self.ended(Self.drive(&second, participants: 3, seamsEach: 2)) != nil)
        #expect(first.decisions.count == 9)      // 3 participants × (start, seam 1, seam 2)
        #expect(first.decisions == second.decisions)
        // A replay of it under another strategy and seed makes the same decisions
        var replayed = Self.machine(3, replay: first.decisions, strategy: .randomWalk, seed: 7)
        _ = Self.drive(&replayed, participants: 3, seamsEach: 2)
        #expect(replayed.decisions == first.decisions && replayed.divergence == nil)
    }

    @Test("a replayed decision that names a participant that is not waiting is recorded as divergence, and the strategy chooses instead")
    func replayDivergence() throws {
        var machine = Self.machine(2, replay: [0, 0, 0])
        _ = machine.arrive(0, at: "start", now: Self.at(0))
        #expect(machine.arrive(1, at: "start", now: Self.at(0)) == .wake(.thread(0)))
        #expect(machine.arrive(0, at: "checked", now: Self.at(1)) == .wake(.thread(0)))
        // Participant 0 has finished: the replay's third decision cannot be followed
        #expect(machine.finish(0, now: Self.at(2)) == .wake(.thread(1)))
        let divergence = try #require(machine.divergence)
        #expect(divergence == "decision 3 of the replay names participant 0, which was not waiting (waiting: [1])")
        #expect(Self.ended(machine.finish(1, now: Self.at(3)))?.divergence == divergence)
    }

    @Test("a thread participant parks and another goes on; its delivery makes it wait to be chosen; a delivery before its park lets the park go on at once")
    func parkAndUnparkThread() {
        // Given participant 0 running
        var machine = Self.machine(2, replay: [0, 1, 0])
        _ = machine.arrive(0, at: "start", now: Self.at(0))
        #expect(machine.arrive(1, at: "start", now: Self.at(0)) == .wake(.thread(0)))
        // When it parks, participant 1 gets the turn
        #expect(machine.park(0, at: "awaiting", now: Self.at(1)) == .wake(.thread(1)))
        #expect(machine.outcome.lastSeams == ["awaiting (parked)", "start"])
        // Its delivery while 1 runs makes it wait, not run
        #expect(machine.unpark(0, now: Self.at(2)) == .none)
        #expect(machine.participants[0].status == .waiting("awaiting"))
        // And it is chosen again at the next decision
        #expect(machine.arrive(1, at: "after", now: Self.at(3)) == .wake(.thread(0)))
        // A delivery that comes before the park is held, and the park goes on at once
        #expect(machine.unpark(0, now: Self.at(4)) == .holdDelivery)
        #expect(machine.park(0, at: "again", now: Self.at(5)) == .goOn)
        #expect(machine.isRunning(0))
        // The next park waits again
        #expect(machine.park(0, at: "again", now: Self.at(6)) == .wake(.thread(1)))
    }

    @Test("an async participant takes the same transitions; its turn is a task's start or delivery, not a thread's signal")
    func parkAndUnparkTask() throws {
        // Given participant 0 running, which hands async work over and parks until it delivers
        var machine = Self.machine(1)
        #expect(machine.arrive(0, at: "start", now: Self.at(0)) == .wake(.thread(0)))
        let joined = machine.join(at: "event", parent: 0, kind: .task, now: Self.at(1))
        #expect(joined.participant == 1 && joined.action == .none)
        #expect(machine.park(0, at: "awaiting the event", now: Self.at(2)) == .wake(.task(1)))
        // When the task parks for its network answer, nobody can go on: the quiet world acts
        #expect(machine.park(1, at: "transport.awaiting", now: Self.at(3)) == .quiesce(judgingDeadlock: true))
        // Its delivery makes it run again, as a task
        #expect(machine.unpark(1, now: Self.at(4)) == .wake(.task(1)))
        // A delivery before its next park is held, and that park goes on
        #expect(machine.unpark(1, now: Self.at(5)) == .holdDelivery)
        #expect(machine.park(1, at: "transport.awaiting", now: Self.at(6)) == .goOn)
        // Its delivery to participant 0 waits for the task to finish
        #expect(machine.unpark(0, now: Self.at(7)) == .none)
        #expect(machine.finish(1, now: Self.at(8)) == .wake(.thread(0)))
        let outcome = try #require(Self.ended(machine.finish(0, now: Self.at(9))))
        #expect(outcome.firstSeams == ["participant 0", "event from participant 0"])
        #expect(!outcome.partiallyControlled)
    }

    @Test("a participant away from its seam for any time is waited for; seen blocked in its turn, it is set aside and another goes on; a stale look changes nothing")
    func osJudgedStall() throws {
        var machine = Self.machine(2, replay: [0])
        _ = machine.arrive(0, at: "start", now: Self.at(0))
        #expect(machine.arrive(1, at: "start", now: Self.at(0)) == .wake(.thread(0)))
        // Long past any stall timeout, nothing happens: time decides nothing
        #expect(machine.watchdogWoke(now: Self.at(5_000)) == .none)
        #expect(machine.isRunning(0) && machine.partialControlReason == nil)
        // A look from an earlier turn (it reached a seam since) changes nothing
        #expect(machine.observedBlocked(0, turn: machine.turn - 1, in: "a futex wait", now: Self.at(5_001)) == .none)
        #expect(machine.observedBlocked(1, turn: machine.turn, in: "a futex wait", now: Self.at(5_001)) == .none, "1 is not running")
        // Seen blocked in its own turn, it is set aside
        #expect(machine.observedBlocked(0, turn: machine.turn, in: "a futex wait", now: Self.at(5_002)) == .wake(.thread(1)))
        #expect(machine.participants[0].status == .overdue("start"))
        #expect(machine.partialControlReason == "participant 0 was blocked in a futex wait after 'start', outside the points the kit controls")
    }

    @Test("a parked run whose quiet world waits for outside work is no deadlock; with nothing to wait for it is one at once")
    func osJudgedDeadlock() throws {
        var waiting = Self.machine(1)
        _ = waiting.arrive(0, at: "start", now: Self.at(0))
        #expect(waiting.park(0, at: "awaiting", now: Self.at(1)) == .quiesce(judgingDeadlock: true))
        waiting.quiescenceBegan()
        #expect(waiting.quiescenceEnded(acted: false, judgingDeadlock: true, awaitingOutside: true) == .none)
        #expect(!waiting.deadlocked && waiting.watchdogWoke(now: Self.at(9_000)) == .none)
        // The outside work's signal comes: the run goes on
        #expect(waiting.unpark(0, now: Self.at(9_500)) == .wake(.thread(0)))

        var stuck = Self.machine(1)
        _ = stuck.arrive(0, at: "start", now: Self.at(0))
        _ = stuck.park(0, at: "awaiting", now: Self.at(1))
        stuck.quiescenceBegan()
        let outcome = try #require(Self.ended(stuck.quiescenceEnded(acted: false, judgingDeadlock: true, awaitingOutside: false)))
        #expect(outcome.deadlocked && outcome.undecided == nil)
    }

    @Test("once every participant left is set aside, and their waits only they could end, the run ends at once, undecided; while one is still waiting, it goes on")
    func stuckOutside() throws {
        var machine = Self.machine(2, replay: [0])
        _ = machine.arrive(0, at: "start", now: Self.at(0))
        _ = machine.arrive(1, at: "start", now: Self.at(0))
        _ = machine.observedBlocked(0, turn: machine.turn, in: "a futex wait", now: Self.at(1))
        #expect(machine.onlyOverdueLeft == nil, "participant 1 runs")
        #expect(machine.stuckOutside("both blocked") == .none)
        _ = machine.observedBlocked(1, turn: machine.turn, in: "a futex wait", now: Self.at(2))
        #expect(machine.onlyOverdueLeft == [0, 1])
        let outcome = try #require(Self.ended(machine.stuckOutside("both blocked")))
        #expect(!outcome.deadlocked && outcome.undecided == "both blocked" && outcome.partiallyControlled)
    }

    @Test("a run waiting for work it handed outside it ends at once, undecided, when told nothing of the process runs; not while it is fully controlled, nor once something has moved since")
    func outsideIdle() throws {
        // A fully controlled run waiting for outside work (a signal the run knows nothing of) is
        // waited for: its verdict is still open
        var controlled = Self.loneParked()
        _ = controlled.quiescenceEnded(acted: false, judgingDeadlock: true, awaitingOutside: true)
        #expect(controlled.isAwaitingOutside)
        #expect(controlled.outsideIdle("nothing runs") == .none)

        // A run that handed work outside it, waiting for it
        var handed = Self.loneParked()
        handed.loseControl("participant 0 handed work to DispatchQueue.async")
        _ = handed.quiescenceEnded(acted: false, judgingDeadlock: true, awaitingOutside: true)
        // Something moved since (the outside work delivered): no longer waiting, nothing ends
        var moved = handed
        _ = moved.unpark(0, now: Self.at(2))
        #expect(!moved.isAwaitingOutside && moved.outsideIdle("nothing runs") == .none)
        // Nothing moved: it ends undecided, keeping the first reason it lost control for
        let outcome = try #require(Self.ended(handed.outsideIdle("nothing runs")))
        #expect(!outcome.deadlocked && outcome.undecided == "nothing runs")
        #expect(outcome.partialControlReason == "participant 0 handed work to DispatchQueue.async")
    }

    @Test("a run in which nothing moves for the last-resort guard ends undecided: no deadlock, not controlled")
    func osJudgedGuard() throws {
        var machine = Self.machine(1)
        _ = machine.arrive(0, at: "start", now: Self.at(0))
        _ = machine.park(0, at: "awaiting", now: Self.at(1))
        machine.quiescenceBegan()
        _ = machine.quiescenceEnded(acted: false, judgingDeadlock: true, awaitingOutside: true)
        #expect(machine.watchdogWoke(now: Self.at(10_001)) == .none)
        let outcome = try #require(Self.ended(machine.watchdogWoke(now: Self.at(10_002))))
        #expect(!outcome.deadlocked && outcome.partiallyControlled)
        #expect(outcome.undecided?.hasPrefix("nothing moved for 10.0 seconds") == true, "\(String(describing: outcome.undecided))")
    }

    @Test("a participant the OS shows blocked before its first seam is set aside, and the run starts with those that came")
    func blockedBeforeFirstSeam() throws {
        var machine = Self.machine(2)
        #expect(machine.arrive(0, at: "start", now: Self.at(0)) == .none)
        #expect(machine.observedBlocked(1, turn: 0, in: "a futex wait", now: Self.at(5)) == .wake(.thread(0)))
        #expect(machine.outcome.lastSeams == ["start", "not started (blocked outside a seam)"])
        #expect(machine.partialControlReason == "participant 1 was blocked in a futex wait before its first point")
    }

    /// A lone participant parked at `at(1)` with nobody to deliver to it: the quiet world acts.
    static func loneParked() -> Machine {
        var machine = Self.machine(1)
        _ = machine.arrive(0, at: "start", now: Self.at(0))
        #expect(machine.park(0, at: "awaiting", now: Self.at(1)) == .quiesce(judgingDeadlock: true))
        machine.quiescenceBegan()
        return machine
    }

    @Test("nobody can go on and the quiet world does nothing: a deadlock, with the schedule that led there")
    func deadlockAtQuiescence() throws {
        var machine = Self.loneParked()
        let outcome = try #require(Self.ended(machine.quiescenceEnded(acted: false, judgingDeadlock: true)))
        #expect(outcome.deadlocked && outcome.decisions == [0] && outcome.lastSeams == ["awaiting (parked)"])
        #expect(machine.finalOutcome == outcome)
        // The watchdog, woken by the end, stops
        #expect(machine.watchdogWoke(now: Self.at(2)) == .end(outcome))
    }

    @Test("a quiet world that acted, or a participant set aside, is no deadlock")
    func noDeadlockYet() throws {
        var machine = Self.loneParked()
        #expect(machine.quiescenceEnded(acted: true, judgingDeadlock: true) == .none)
        #expect(!machine.deadlocked)
        // A participant set aside may only be slow: no deadlock at the quiet moment
        var slow = Self.machine(2, replay: [0])
        _ = slow.arrive(0, at: "start", now: Self.at(0))
        _ = slow.arrive(1, at: "start", now: Self.at(0))
        #expect(slow.observedBlocked(0, turn: slow.turn, in: "a read", now: Self.at(150)) == .wake(.thread(1)))
        #expect(slow.park(1, at: "awaiting", now: Self.at(160)) == .quiesce(judgingDeadlock: true))
        #expect(slow.quiescenceEnded(acted: false, judgingDeadlock: true) == .none)
        #expect(!slow.deadlocked)
    }

    @Test("what the quiet world makes ready is chosen once it is done, and work it hands over keeps the run fully controlled; work from outside the run does not")
    func quietWorldAndOutsideWork() throws {
        var machine = Self.loneParked()
        // While the quiet world acts, nothing is chosen
        let joined = machine.join(at: "completion", parent: nil, kind: .thread, now: Self.at(2))
        #expect(joined.participant == 1 && joined.action == .none)
        #expect(machine.unpark(0, now: Self.at(3)) == .none)
        // Once it is done, one of them is
        let chosen = machine.quiescenceEnded(acted: true, judgingDeadlock: true)
        #expect(chosen == .wake(.thread(0)) || chosen == .wake(.thread(1)))
        #expect(machine.outcome.firstSeams[1] == "completion from the quiet world")
        #expect(machine.partialControlReason == nil)
        // Work handed over from outside the run's participants costs the run its full control
        #expect(machine.join(at: "timer", parent: nil, kind: .thread, now: Self.at(4)).action == .none)
        #expect(machine.partialControlReason == "work 'timer' was handed over from a thread outside the run's participants")
        #expect(machine.outcome.firstSeams[2] == "timer from outside the run")

        var tasks = Self.machine(1)
        _ = tasks.join(at: "mc.event", parent: nil, kind: .task, now: Self.at(0))
        #expect(tasks.partialControlReason == "async work 'mc.event' was started outside the run's participants")
    }

    @Test("work that joins after the run ended opens it again")
    func joinAfterEnd() throws {
        var machine = Self.machine(1)
        _ = machine.arrive(0, at: "start", now: Self.at(0))
        #expect(Self.ended(machine.finish(0, now: Self.at(1))) != nil)
        #expect(machine.join(at: "late", parent: 0, kind: .thread, now: Self.at(2)).action == .wake(.thread(1)))
        #expect(machine.finalOutcome == nil)
        #expect(try #require(Self.ended(machine.finish(1, now: Self.at(3)))).decisions == [0, 1])
    }

    /// Under PCT with one change point at step 1, counted only at seams named `x…`.
    static func onePreemptionAtX(_ participants: Int, seed: UInt64) -> Machine {
        Machine(participants: participants, strategy: .pct(depth: 2, steps: 1), seed: seed, guardLimit: .seconds(10), now: t0, preemptionSeams: ["x"])
    }

    @Test("PCT's change points fall only where a preemption seam was reached: the runner keeps the turn past other seams and loses it at the first preemption seam",
          arguments: [1, 2, 3, 4, 5] as [UInt64])
    func changePointsAtPreemptionSeams(_ seed: UInt64) throws {
        // Given two participants and one change point, at the first decision after a seam "x…"
        var machine = Self.onePreemptionAtX(2, seed: seed)
        _ = machine.arrive(0, at: "start", now: Self.t0)
        guard case .wake(let first) = machine.arrive(1, at: "start", now: Self.t0) else {
            Issue.record("the first decision was not taken")
            return
        }
        let high = first.participant, low = 1 - high
        // When the higher one reaches other seams, it keeps the turn
        #expect(machine.arrive(high, at: "y", now: Self.t0) == .wake(.thread(high)))
        #expect(machine.arrive(high, at: "start again", now: Self.t0) == .wake(.thread(high)))
        // Then at its first "x" seam the change point lowers it, and the other goes on
        #expect(machine.arrive(high, at: "x1", now: Self.t0) == .wake(.thread(low)))
        #expect(machine.arrive(low, at: "x2", now: Self.t0) == .wake(.thread(low)))
    }

    @Test("work a scenario's flow starts is a logical thread of its own: a change point that lowers it, and the work it hands over, leaves the flow above both",
          arguments: [1, 2, 3, 4, 5] as [UInt64])
    func startedWorkHasItsOwnPriority(_ seed: UInt64) {
        // Given a flow that starts a job and lets it run, and the job that hands work over
        var machine = Self.onePreemptionAtX(1, seed: seed)
        #expect(machine.arrive(0, at: "start", now: Self.t0) == .wake(.thread(0)))
        let job = machine.join(at: "job", parent: 0, kind: .thread, now: Self.t0).participant
        #expect(machine.park(0, at: "awaiting the job", now: Self.t0) == .wake(.thread(job)))
        let handedOver = machine.join(at: "handed over", parent: job, kind: .thread, now: Self.t0).participant
        _ = machine.unpark(0, now: Self.t0)
        // When the change point lowers the job at its preemption seam
        let next = machine.arrive(job, at: "x", now: Self.t0)
        // Then the flow goes on before the job and before the work the job handed over
        #expect(next == .wake(.thread(0)), "seed \(seed): \(next), job \(job), handed over \(handedOver)")
    }
}
