import Foundation
import IdpPrimitives

/// Runs scenarios under the ``ControlledScheduler`` (or free-running), replays reproducers, and
/// shrinks a failure to a small reproducer.
///
/// Threading: every run starts its flows on new OS threads; the methods are `async` and never block
/// a Swift concurrency thread.
package enum StressRunner {
    /// How many times a run that was not fully controlled is tried: a participant the OS showed
    /// blocked for a moment on something outside the run (a lock another thread of the process
    /// held, on a loaded machine) says nothing about the schedule; one that blocks outside the
    /// seams every time, or hands work outside the run, does so in every try.
    static var tries: Int { 3 }

    /// One run of `scenario`'s `flows` (indices into its flows) under `reproducer`'s strategy,
    /// seed, faults and decisions; a try that was not fully controlled is run again, up to
    /// ``tries`` times in all.
    package static func run<World>(_ scenario: StressScenario<World>, _ reproducer: StressReproducer) async -> StressRunResult {
        var result = await runOnce(scenario, reproducer)
        for _ in 1..<tries where result.outcome?.partiallyControlled == true {
            result = await runOnce(scenario, reproducer)
        }
        return result
    }

    private static func runOnce<World>(_ scenario: StressScenario<World>, _ reproducer: StressReproducer) async -> StressRunResult {
        let world = scenario.makeWorld()
        var onQuiescence: (@Sendable () -> ControlledScheduler.Quiet)?
        if let quiesce = scenario.quiesce { onQuiescence = { quiesce(world) ? .acted : .idle } }
        let scheduler = ControlledScheduler(participants: max(1, reproducer.flows.count), strategy: reproducer.strategy, seed: reproducer.seed,
                                            replay: reproducer.decisions, guardLimit: scenario.guardLimit,
                                            onQuiescence: onQuiescence, preemptionSeams: scenario.preemptionSeams)
        let fired = LockedValue<[FaultPlan.Site]>([])
        scenario.attach?(world, StressRun(scheduler: scheduler, faults: reproducer.faults, seed: reproducer.seed, fired: fired, monitor: nil))
        for (participant, flow) in reproducer.flows.enumerated() {
            let context = StressContext(flow: flow, participant: participant, scheduler: scheduler, faults: reproducer.faults, fired: fired)
            let thread = Thread {
                scheduler.seam(participant, "start")
                scenario.flow(world, context)
                scheduler.finish(participant)
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
        if reproducer.flows.isEmpty { scheduler.finish(0) }
        let outcome = await scheduler.outcome()
        var violations = outcome.deadlocked ? ["\(scenario.deadlockVerdict): every unfinished flow was blocked (\(outcome.lastSeams.joined(separator: ", ")))"] : []
        if !outcome.deadlocked { violations += scenario.check(world) }
        var recorded = reproducer
        recorded.decisions = outcome.decisions
        return StressRunResult(violations: violations, outcome: outcome, fired: fired.withLock { $0 }, reproducer: recorded)
    }

    /// One free-running run: the flows on OS threads released together, no seams, no control.
    ///
    /// A watchdog (``FreeRunMonitor``) acts for the quiet world as a controlled run's scheduler
    /// does: when every flow waits for a delivery and nothing has moved for a moment, the
    /// scenario's `quiesce` runs; when it can do nothing and the OS shows no thread of the process
    /// running, with every job of the run's tasks on a thread, the flows' waits end (a stuck run:
    /// ``StressContext/wait(_:limit:_:)`` returns `nil`), and the result says so. When nothing moves
    /// for the scenario's guard limit, the run ends undecided: its flows' waits end too, and the
    /// result says the kit could not decide, instead of a verdict on them.
    package static func runFree<World>(_ scenario: StressScenario<World>, faults: FaultPlan = .none, seed: UInt64 = 0) async -> FreeRunResult {
        let world = scenario.makeWorld()
        let fired = LockedValue<[FaultPlan.Site]>([])
        let monitor = FreeRunMonitor(participants: scenario.flows, guardLimit: scenario.guardLimit)
        scenario.attach?(world, StressRun(scheduler: nil, faults: faults, seed: seed, fired: fired, monitor: monitor))
        let watchdog = Thread { monitor.watch { scenario.quiesce?(world) ?? false } }
        watchdog.name = "IdpHarness-free-run-watchdog"
        watchdog.start()
        let release = DispatchSemaphore(value: 0)
        let remaining = LockedValue(scenario.flows)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for flow in 0..<scenario.flows {
                let context = StressContext(flow: flow, participant: flow, scheduler: nil, faults: faults, fired: fired, monitor: monitor)
                Thread {
                    release.wait()
                    scenario.flow(world, context)
                    monitor.finished(flow)
                    // The watchdog ends with the last flow, not when this task resumes: the task
                    // waits for a Swift concurrency thread, which other work may hold.
                    guard remaining.withLock({ $0 -= 1; return $0 }) == 0 else { return }
                    monitor.end()
                    done.resume()
                }.start()
            }
            for _ in 0..<scenario.flows { release.signal() }
            if scenario.flows == 0 {
                monitor.end()
                done.resume()
            }
        }
        let violations = scenario.check(world)
        if let undecided = monitor.undecided {
            // The flows' ended waits are the guard's, not a stuck run: no verdict on them.
            let deadlock = scenario.deadlockVerdict
            return FreeRunResult(violations: violations.filter { kinds([$0]) != [deadlock] }, undecided: "the kit could not decide: \(undecided)")
        }
        guard monitor.wasStuck else { return FreeRunResult(violations: violations, undecided: nil) }
        return FreeRunResult(violations: violations + ["\(scenario.deadlockVerdict): every unfinished flow waited, the quiet world could do nothing, "
                                                        + "and the OS showed no thread of the process running"], undecided: nil)
    }

    /// What a free run found.
    package struct FreeRunResult: Sendable {
        /// The invariants broken (a stuck run as the scenario's deadlock verdict).
        package let violations: [String]
        /// Why the last-resort guard ended the run, undecided, or `nil`.
        package let undecided: String?
    }

    /// Explores `runs` runs, each with its own seed derived from `seed`; on the first failure it
    /// replays the reproducer `replays` times and shrinks it.
    package static func explore<World>(_ scenario: StressScenario<World>, strategy: ScheduleStrategy, seed: UInt64, runs: Int,
                                      faults: FaultPlan = .none, replays: Int = 2) async -> StressReport {
        var random = SeededRandom(seed: seed)
        for run in 1...max(1, runs) {
            let reproducer = StressReproducer(strategy: strategy, seed: random.next(), flows: Array(0..<scenario.flows), faults: faults, decisions: [])
            let result = await self.run(scenario, reproducer)
            guard !result.violations.isEmpty else { continue }
            return await confirmAndShrink(scenario, result, failingRun: run, runs: runs, replays: replays)
        }
        return StressReport(scenario: scenario.name, runs: runs, failingRun: nil, violations: [], original: nil, shrunk: nil,
                            replaysFailingTheSameWay: 0, replays: 0, nondeterminism: nil)
    }

    /// Replays `reproducer` `times` times; how many broke exactly `violations`.
    package static func replay<World>(_ scenario: StressScenario<World>, _ reproducer: StressReproducer, times: Int,
                                     expecting violations: [String]) async -> (same: Int, divergence: String?) {
        var same = 0
        var divergence: String?
        for _ in 0..<times {
            let result = await run(scenario, reproducer)
            if Self.kinds(result.violations) == Self.kinds(violations) { same += 1 }
            divergence = divergence ?? result.outcome?.divergence
        }
        return (same, divergence)
    }

    static func confirmAndShrink<World>(_ scenario: StressScenario<World>, _ failure: StressRunResult, failingRun: Int, runs: Int, replays: Int) async -> StressReport {
        let violations = failure.violations
        let confirmed = await replay(scenario, failure.reproducer, times: replays, expecting: violations)
        var nondeterminism: String?
        if confirmed.same < replays {
            nondeterminism = "\(replays - confirmed.same) of \(replays) replays of the same schedule did not break \(kinds(violations))" +
                (confirmed.divergence.map { "; \($0)" } ?? "")
        }
        let shrunk = nondeterminism == nil ? await shrink(scenario, failure, violations: violations) : failure.reproducer
        return StressReport(scenario: scenario.name, runs: runs, failingRun: failingRun, violations: violations, original: failure.reproducer,
                            shrunk: shrunk, replaysFailingTheSameWay: confirmed.same, replays: replays, nondeterminism: nondeterminism)
    }

    /// The invariant names of violations (the part before the first ':'), which a replay must match.
    static func kinds(_ violations: [String]) -> [String] {
        violations.map { String($0.prefix { $0 != ":" }) }.sorted()
    }

    /// Removes flows, then faults, then cuts and thins the decision log, keeping only candidates
    /// whose replay breaks the same invariants.
    static func shrink<World>(_ scenario: StressScenario<World>, _ failure: StressRunResult, violations: [String]) async -> StressReproducer {
        var current = failure.reproducer
        func fails(_ candidate: StressReproducer) async -> StressReproducer? {
            let result = await run(scenario, candidate)
            guard kinds(result.violations) == kinds(violations), result.outcome?.divergence == nil else { return nil }
            return result.reproducer
        }
        // 1. Flows: drop one at a time, and its decisions with it.
        var index = current.flows.count - 1
        while index >= 0, current.flows.count > 1 {
            var candidate = current
            candidate.flows.remove(at: index)
            candidate.decisions = current.decisions.compactMap { $0 == index ? nil : ($0 > index ? $0 - 1 : $0) }
            if let smaller = await fails(candidate) {
                current = smaller
            } else if !candidate.decisions.isEmpty {
                // Work handed between threads joins as numbered participants, so without the flow
                // the old log may name others; let the seed alone decide.
                candidate.decisions = []
                if let smaller = await fails(candidate) { current = smaller }
            }
            index -= 1
        }
        // 2. Faults: switch off each site that fired.
        for site in Set(failure.fired).sorted() {
            var candidate = current
            candidate.faults.suppressed.insert(site)
            if let smaller = await fails(candidate) { current = smaller }
        }
        // 3. The log: the shortest prefix that still fails (the strategy decides the rest), then
        //    single decisions thinned out.
        var cut = current.decisions.count / 2
        while cut > 0 {
            var candidate = current
            candidate.decisions = Array(current.decisions.prefix(cut))
            if await fails(candidate) != nil { current.decisions = candidate.decisions; cut = candidate.decisions.count / 2 } else { break }
        }
        var position = current.decisions.count - 1
        while position >= 0 {
            var candidate = current
            candidate.decisions.remove(at: position)
            if await fails(candidate) != nil { current.decisions = candidate.decisions }
            position -= 1
        }
        return current
    }
}
