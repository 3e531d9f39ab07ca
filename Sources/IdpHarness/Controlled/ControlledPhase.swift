import Foundation
import IdpPrimitives
import IdpSdk
import IdpWireFormats
import Synchronization

/// The kit's controlled phase: threads call the provider directly, one at a time between the
/// points of the controlled primitives (``LockedValue``, ``ConditionLockedValue``,
/// ``ControlledLock``, the kit's clock) and of the calls it intercepts (``InterceptedCalls``:
/// `NSLock`, `NSCondition`, `DispatchSemaphore`, the jobs of tasks and actors, `asyncAfter`,
/// `Task.sleep`), in orders a ``ControlledScheduler`` chooses by PCT and by a random walk from one
/// seed. Each schedule has fresh instances of a fresh user, several threads
/// on one instance and on different ones, and the kit's clock crossing its expiry horizon at a
/// point the schedule chooses. Every answer is graded as the race hammer grades it; every thread
/// waiting at once is a deadlock. The first failing schedule is shrunk (fewer threads, fewer calls,
/// fewer decisions) and printed as a one-line reproducer that replays it.
struct ControlledPhase: Sendable {
    struct Settings: Sendable, Equatable {
        /// Schedules to explore (it stops at the first failure).
        var schedules: Int
        var threads: Int
        var calls: Int
        var instances: Int
        var horizon: Duration
        var seed: UInt64
        /// How long nothing at all may move in a schedule before the kit gives up on it as
        /// undecided: the last-resort guard, never a verdict (a participant is set aside only when
        /// the OS shows it blocked outside a point).
        var guardLimit: Duration = .seconds(60)
        #if DEBUG
        /// A bug planted in the phase itself (`PlantedBug.harness…`), which only tests turn on.
        var planted: PlantedBug?
        #endif
    }

    /// How many times a schedule whose try was not fully controlled is run: a participant blocked
    /// for a moment on a lock an unrelated thread held (a loaded machine) says nothing about the
    /// provider; one that blocks outside the points every time, or hands work outside, does so
    /// in every try.
    static var tries: Int { 3 }

    /// One schedule's run.
    struct ScheduleResult: Sendable {
        var scenario: ControlledScenario
        /// The decisions the scheduler took: the schedule as it ran.
        let decisions: [Int]
        /// Each answer's grade, in thread and call order.
        let answers: [HammerOutcome]
        /// What failed: forbidden answers, a deadlock.
        let problems: [String]
        /// Why the schedule was not fully controlled (a thread blocked outside the kit's
        /// primitives), or `nil`.
        let uncontrolled: String?
        /// Where a replayed decision named a participant that was not waiting, or `nil`.
        let divergence: String?
        let lockPoints: Int
        let clockPoints: Int
        /// Points reached by kind of primitive ("house locks", "mutex", "condition", "semaphore").
        var pointsByKind: [String: Int] = [:]
        /// Jobs of the Swift global executor the schedule ran as participants, and timers.
        var jobs = 0
        var timers = 0

        var failed: Bool { !problems.isEmpty }
    }

    /// What the phase found.
    struct Findings: Sendable {
        var schedules = 0
        var decisions = 0
        var lockPoints = 0
        var clockPoints = 0
        /// Points reached by kind of primitive, over every schedule.
        var pointsByKind: [String: Int] = [:]
        /// Jobs of the Swift global executor (tasks, actors, continuations) and timers the
        /// schedules ran under control.
        var jobs = 0
        var timers = 0
        /// Schedules run again because a try was not fully controlled.
        var retried = 0
        var answers: [HammerOutcome: Int] = [:]
        /// The first failing schedule: what failed, and its reproducer, shrunk.
        var failure: Failure?
        /// Why the phase stopped without a verdict on the provider's orders.
        var uncontrolled: String?
        var threads = 0
        var seed: UInt64 = 0
        /// The provider's name, as the verdict names it.
        var providerName = ""
        /// The most schedules it would have explored.
        var budget = 0
    }

    struct Failure: Sendable {
        let schedule: Int
        /// What failed in the shrunk schedule: what its reproducer replays.
        let problems: [String]
        /// The failing schedule as found.
        let found: ControlledScenario
        /// The smallest failing schedule the shrinking reached.
        let shrunk: ControlledScenario
        /// The decisions the shrunk schedule took in all.
        let shrunkDecisions: Int
    }

    let settings: Settings
    /// Makes one instance for the user.
    let fresh: Run.Bind
    let name: String

    /// Explores up to ``Settings/schedules`` schedules.
    func run() async -> Findings {
        var findings = Findings()
        findings.threads = settings.threads
        findings.seed = settings.seed
        findings.providerName = name
        findings.budget = settings.schedules
        var seeds = SeededRandom(seed: settings.seed)
        var steps = 16
        for schedule in 0..<max(0, settings.schedules) {
            let strategy: ScheduleStrategy = schedule % 2 == 0 ? .pct(depth: 3, steps: steps) : .randomWalk
            // The last pair of every eight schedules mixes two-step flows in.
            let clients: ControlledClients = schedule % 8 >= 6 && settings.threads > 1 ? .mixed : .oneStep
            let scenario = ControlledScenario(threads: settings.threads, calls: settings.calls, instances: settings.instances,
                                              horizonSeconds: settings.horizon.components.seconds, strategy: strategy, seed: seeds.next(),
                                              clients: clients)
            var result = await Self.run(scenario, fresh: fresh, settings: settings)
            for _ in 1..<Self.tries where result.uncontrolled != nil && !settings.plantedGradesUncontrolledAsExplored {
                findings.retried += 1
                result = await Self.run(scenario, fresh: fresh, settings: settings)
            }
            findings.schedules += 1
            findings.decisions += result.decisions.count
            findings.lockPoints += result.lockPoints
            findings.clockPoints += result.clockPoints
            findings.jobs += result.jobs
            findings.timers += result.timers
            findings.pointsByKind.merge(result.pointsByKind, uniquingKeysWith: +)
            for answer in result.answers { findings.answers[answer, default: 0] += 1 }
            // PCT's change points fall among as many decisions as a schedule takes, rounded up to
            // a multiple of 16: a point or two more or fewer in the first schedule leaves the later
            // schedules, and their reproducers, as they were.
            if schedule == 0 {
                steps = settings.plantedStepsFollowEveryDecision ? result.decisions.count : Self.pctSteps(forDecisions: result.decisions.count)
            }
            // A schedule that was not fully controlled is no verdict on the provider's orders, a
            // wrong answer in it included: it did not follow its schedule, and would not replay.
            if result.failed, result.uncontrolled == nil || settings.plantedGradesUncontrolledAsExplored {
                let shrunk = await shrink(result)
                findings.failure = Failure(schedule: schedule + 1, problems: shrunk.problems, found: scenario.with(decisions: result.decisions),
                                           shrunk: shrunk.scenario, shrunkDecisions: shrunk.decisions.count)
                return findings
            }
            if let reason = result.uncontrolled, !settings.plantedGradesUncontrolledAsExplored {
                findings.uncontrolled = reason
                return findings
            }
            // A provider that reached no point of the kit's primitives has no orders to explore.
            if result.lockPoints == 0 && result.clockPoints == 0 { return findings }
        }
        return findings
    }

    /// PCT's step count for schedules whose first took `decisions` decisions: that count rounded up
    /// to a multiple of 16, at least 16.
    static func pctSteps(forDecisions decisions: Int) -> Int {
        max(16, (decisions + 15) / 16 * 16)
    }

    /// The smallest schedule that still fails: one-step flows only, fewer instances, fewer threads, fewer calls, then the
    /// shortest prefix of decisions after which the strategy's own choices still fail.
    func shrink(_ failed: ScheduleResult) async -> ScheduleResult {
        var best = failed
        var scenario = failed.scenario.with(decisions: failed.decisions)
        // A try that was not fully controlled (a participant blocked outside the kit's points, on
        // a lock an unrelated thread held) says nothing about its schedule: it is run again, up to
        // ``tries`` times in all, so the shrunk schedule depends on the schedules alone.
        func attempt(_ candidate: ControlledScenario) async -> Bool {
            for _ in 0..<Self.tries {
                let result = await Self.run(candidate, fresh: fresh, settings: settings)
                if result.uncontrolled != nil && !settings.plantedShrinkTakesStallsAsPasses { continue }
                guard result.failed, result.uncontrolled == nil else { return false }
                best = result
                scenario = candidate
                return true
            }
            return false
        }
        if scenario.clients == .mixed { _ = await attempt(scenario.with(clients: .oneStep)) }
        for instances in 1..<max(1, scenario.instances) where await attempt(scenario.with(instances: instances)) { break }
        for threads in 1..<max(1, scenario.threads) where await attempt(scenario.dropping(threadsFrom: threads)) { break }
        for calls in 1..<max(1, scenario.calls) where await attempt(scenario.with(calls: calls)) { break }
        // The shortest failing prefix of the decisions the last failing try took (a smaller
        // schedule's try follows the larger one's decisions only as far as they fit it): each try
        // follows the prefix, then the strategy's seed.
        let full = settings.plantedShrinksAlongTheFoundSchedule ? failed.decisions : best.decisions
        scenario = scenario.with(decisions: full)
        var low = 0
        var high = full.count
        while low < high {
            let middle = (low + high) / 2
            if await attempt(scenario.with(decisions: Array(full.prefix(middle)))) {
                high = middle
            } else {
                low = middle + 1
            }
        }
        if scenario.decisions.count != high { _ = await attempt(scenario.with(decisions: Array(full.prefix(high)))) }
        var shrunk = best
        shrunk.scenario = scenario
        return shrunk
    }

    /// Runs one schedule: makes a fresh user and its instances, starts a participant per thread
    /// (and one for the clock's crossing), and grades every answer once the schedule has ended.
    ///
    /// One schedule at a time in the process: two runs taking one process-wide lock would each
    /// think it free. The turn runs from making the instances (a factory may take such a lock
    /// too) to the schedule's end, and passes to the next schedule on the OS thread that ended
    /// this one: grading, and the resumption of this task, happen after it.
    static func run(_ scenario: ControlledScenario, fresh: Run.Bind, settings: Settings) async -> ScheduleResult {
        await ScheduleTurns.shared.begin()
        Interception.shared.install()
        let clock = ConformanceClock()
        let user = freshUser(clock: clock)
        let factory = FactoryWork()
        let made = await instances(of: scenario, fresh: fresh, user: user, factory: factory)
        guard made.count == scenario.instances else {
            Interception.shared.remove()
            ScheduleTurns.shared.end()
            return ScheduleResult(scenario: scenario, decisions: [], answers: [], problems: [], uncontrolled: "the provider factory made no instance",
                                  divergence: nil, lockPoints: 0, clockPoints: 0)
        }
        let providers = Unverified(made)
        let grader = RaceHammer(settings: .init(rounds: 1, threads: scenario.threads, callsPerThread: scenario.calls, hangTimeout: .seconds(1)),
                                users: [user])
        let calls = (0..<scenario.threads).map { thread in Self.calls(of: scenario, thread: thread, user: user) }
        let roles = (0..<scenario.threads).map { "thread \($0)" } + (scenario.clockParticipant == nil ? [] : ["the clock"])
        let locks = settings.plantedLocks {
            ScheduledLocks(roles: roles, strategy: scenario.strategy, seed: scenario.seed, replay: scenario.decisions, guardLimit: settings.guardLimit)
        }
        if let started = factory.started { locks.startedBeforeTheSchedule(started) }
        let answers = LockedValue(calls.map { [IdpSdkProvideCredentialsResult?](repeating: nil, count: $0.count) })
        ControlPoints.runBegan(locks)
        startParticipants(of: scenario, calls: calls, providers: providers, locks: locks, answers: answers, clock: clock)
        let (outcome, waits) = await waitForEnd(of: locks)
        var problems: [String] = []
        if outcome.deadlocked { problems.append(deadlockProblem(outcome, waits: waits, locks: locks)) }
        let grades = gradeAnswers(of: scenario, calls: calls, answers: answers.withLock { $0 }, grader: grader, outcome: outcome, problems: &problems)
        let points = locks.points
        let scheduled = locks.scheduled
        let uncontrolled = outcome.partiallyControlled ? locks.naming(outcome.partialControlReason ?? "a thread ran outside the kit's control") : nil
        return ScheduleResult(scenario: scenario, decisions: outcome.decisions, answers: grades, problems: problems,
                              uncontrolled: uncontrolled, divergence: outcome.divergence, lockPoints: points.locks, clockPoints: points.clock,
                              pointsByKind: locks.pointsByKind, jobs: scheduled.jobs, timers: scheduled.timers)
    }

    /// A fresh user of the kit's tenant, with a random id and password, on `clock`.
    private static func freshUser(clock: ConformanceClock) -> ProviderConformanceKit.User {
        let userId = "controlled-" + SecureRandom.token(byteCount: 6)
        return ProviderConformanceKit.User(tenantId: ProviderConformanceKit.tenant, userId: userId,
                                           credentials: ["username": userId, "password": "pw-" + SecureRandom.token(byteCount: 9)], clock: clock)
    }

    /// The scenario's instances for `user`: the first instance of each of
    /// ``ControlledScenario/instances`` calls of `fresh`, with `factory` noting what the factory
    /// started; fewer when a call made none.
    private static func instances(of scenario: ControlledScenario, fresh: Run.Bind, user: ProviderConformanceKit.User,
                                  factory: FactoryWork) async -> [any IdpSdkInteractionInterface] {
        var made: [any IdpSdkInteractionInterface] = []
        for _ in 0..<scenario.instances {
            made.append(contentsOf: await Interception.$factory.withValue(factory) { await fresh([user]) }.value.prefix(1))
        }
        return made
    }

    /// Starts a participant per thread, which makes the thread's calls and keeps their answers in
    /// `answers`, and one that crosses the kit's clock where the scenario has it.
    private static func startParticipants(of scenario: ControlledScenario, calls: [[RaceHammer.Call]],
                                          providers: Unverified<[any IdpSdkInteractionInterface]>, locks: ScheduledLocks,
                                          answers: LockedValue<[[IdpSdkProvideCredentialsResult?]]>, clock: ConformanceClock) {
        let ended = IdpSdkResult(authorizationCode: "controlled")
        for thread in 0..<scenario.threads {
            start("IdpHarness-controlled-\(thread)") {
                for (index, call) in calls[thread].enumerated() {
                    locks.callPoint(thread, "thread \(thread) call \(index + 1)")
                    // Only the provider's own code runs as the participant: the kit's locks stay plain.
                    locks.enter(thread)
                    let provider = providers.value[call.instance]
                    let answer = provider.provideCredentials(call.data)
                    if call.endsFlow { (provider as? any IdpSdkFlowObserving)?.flowDidEnd(call.data.flowId, result: ended) }
                    locks.leave(thread)
                    answers.withLock { $0[thread][index] = answer }
                }
                locks.scheduler.finish(thread)
            }
        }
        if let participant = scenario.clockParticipant {
            let horizon = Duration.seconds(scenario.horizonSeconds)
            start("IdpHarness-controlled-clock") {
                locks.callPoint(participant, "cross the kit's clock")
                clock.advance(by: horizon)
                locks.scheduler.finish(participant)
            }
        }
    }

    /// Waits for the schedule to end, then lets its participants go, ends the run's interception
    /// and passes the turn on, on the thread that ended it.
    /// - Returns: How the schedule ended, and, after a deadlock, what each participant waits for.
    private static func waitForEnd(of locks: ScheduledLocks) async -> (ControlledScheduler.Outcome, [Int: String]) {
        await withCheckedContinuation { (ended: CheckedContinuation<(ControlledScheduler.Outcome, [Int: String]), Never>) in
            locks.scheduler.whenEnded { outcome in
                let waits = outcome.deadlocked ? locks.waits : [:]
                // A deadlock's threads stay parked for good (let go, they would block in the real
                // locks); a thread set aside as uncontrolled finishes on its own, its points
                // returning at once.
                locks.abandon()
                ControlPoints.runEnded(locks)
                Interception.shared.remove()
                ScheduleTurns.shared.end()
                ended.resume(returning: (outcome, waits))
            }
        }
    }

    /// A deadlock as a problem: each participant that did not finish, and what it waits for.
    private static func deadlockProblem(_ outcome: ControlledScheduler.Outcome, waits: [Int: String], locks: ScheduledLocks) -> String {
        let stuck = outcome.lastSeams.indices.map { participant in
            "\(locks.role(participant)) \(waits[participant] ?? "is stuck at \(outcome.lastSeams[participant])")"
        }
        return "deadlock: " + stuck.filter { !$0.hasSuffix("finished") }.joined(separator: "; ")
    }

    /// Grades the answers `given` to the scenario's `calls`, adding each one not acceptable to
    /// `problems`.
    /// - Returns: The grades, in thread and call order.
    private static func gradeAnswers(of scenario: ControlledScenario, calls: [[RaceHammer.Call]], answers given: [[IdpSdkProvideCredentialsResult?]],
                                      grader: RaceHammer, outcome: ControlledScheduler.Outcome, problems: inout [String]) -> [HammerOutcome] {
        var grades: [HammerOutcome] = []
        for thread in 0..<scenario.threads {
            for (index, call) in calls[thread].enumerated() {
                let answer = given[thread][index]
                // A call a deadlock kept from answering is the deadlock's problem.
                // A call a deadlock kept from answering is the deadlock's problem; one a schedule
                // the kit could not decide on kept from answering is no answer to grade.
                if (outcome.deadlocked || outcome.undecided != nil) && answer == nil { continue }
                let grade = grader.grade(call, answer)
                grades.append(grade)
                guard !HammerOutcome.acceptable.contains(grade) else { continue }
                let error = answer?.error.map { ": \($0.description)" } ?? ""
                problems.append("thread \(thread), call \(index + 1) (instance \(call.instance)): \(grade.rawValue)\(error)")
            }
        }
        return grades
    }

    /// Thread `thread`'s calls: ``ControlledScenario/calls`` flows, each one call of the one-step
    /// client, or, on a thread of a mixed schedule that ``ControlledClients/mixed`` makes two-step,
    /// two steps of the stepwise client (the username, then the password).
    private static func calls(of scenario: ControlledScenario, thread: Int, user: ProviderConformanceKit.User) -> [RaceHammer.Call] {
        let username = IdpSdkInputField(id: "username", label: "Username", isSecret: false)
        let password = IdpSdkInputField(id: "password", label: "Password", isSecret: true)
        let stepwise = scenario.clients == .mixed && (thread / scenario.instances) % 2 == 1
        let steps = stepwise ? [[username], [password]] : [[username, password]]
        return (0..<scenario.calls).flatMap { _ in
            let flow = IdpSdkFlowID.next()
            return steps.indices.map { index in
                RaceHammer.Call(data: IdpSdkInteractionData(
                    inputFields: steps[index], flowId: flow, step: index + 1, attempt: 1, tenantId: user.tenantId,
                    clientId: stepwise ? ProviderConformanceKit.stepwiseClient : "KssIdpLogin",
                    userId: user.userId, traceParent: nil, previousError: nil),
                    user: 0, instance: thread % scenario.instances, endsFlow: index == steps.count - 1)
            }
        }
    }

    private static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        ParticipantThreads.shared.run(name, body)
    }
}

extension ControlledScenario {
    func with(decisions: [Int]) -> ControlledScenario {
        var copy = self
        copy.decisions = decisions
        return copy
    }

    func with(instances: Int) -> ControlledScenario {
        var copy = self
        copy.instances = instances
        return copy
    }

    func with(clients: ControlledClients) -> ControlledScenario {
        var copy = self
        copy.clients = clients
        return copy
    }

    func with(calls: Int) -> ControlledScenario {
        var copy = self
        copy.calls = calls
        return copy
    }

    /// The scenario with threads `threads …` removed: their decisions dropped, the clock's
    /// renumbered.
    func dropping(threadsFrom threads: Int) -> ControlledScenario {
        var copy = self
        copy.threads = threads
        let clock = clockParticipant
        copy.decisions = decisions.compactMap { decision in
            if decision == clock { return threads }
            return decision < threads ? decision : nil
        }
        return copy
    }
}

/// Lets one controlled schedule run at a time in the process, in the order they asked: suspends
/// the asker, never blocks a thread. A turn ends on any thread (``end()`` is synchronous), so the
/// OS thread that ends a schedule hands the turn on at once.
final class ScheduleTurns: Sendable {
    static let shared = ScheduleTurns()

    private struct State {
        var busy = false
        /// The askers waiting for the turn, first come first: as many as schedules asked at once.
        var waiting: [CheckedContinuation<Void, Never>] = []

        /// Takes the turn if it is free.
        mutating func take() -> Bool {
            guard !busy else { return false }
            busy = true
            return true
        }

        /// The turn ends: the next waiter, which now holds it, or `nil` (it is free).
        mutating func pass() -> CheckedContinuation<Void, Never>? {
            guard !waiting.isEmpty else {
                busy = false
                return nil
            }
            return waiting.removeFirst()
        }
    }

    private let state = LockedValue(State(), label: "IdpHarness.ScheduleTurns")

    /// Returns once the caller's schedule may run: at once if no schedule runs or waits.
    func begin() async {
        if state.withLock({ $0.take() }) { return }
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.take() { return true }
                state.waiting.append(turn)
                return false
            }
            if now { turn.resume() }
        }
    }

    /// The caller's schedule is done: the next one runs.
    func end() {
        state.withLock { $0.pass() }?.resume()
    }
}
