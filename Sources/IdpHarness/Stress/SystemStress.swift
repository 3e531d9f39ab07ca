import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk

/// Stress over the whole system: the IdpSdk engine, MasterControllers (one per simulated device)
/// and the in-process IDP, driven by a scenario mix under a controlled scheduler with faults
/// from one seed, with the system's invariants checked as it runs.
///
/// ```swift
/// var options = SystemStress.Options(seed: 7, runs: 20)
/// options.faultRates = SystemStress.Options.defaultFaultRates
/// options.makeProvider = { credentials in MyProvider(credentials) }   // your provider under test
/// let report = await SystemStress.run(options)
/// print(report)                          // flows, faults injected, invariants, or a reproducer
/// ```
///
/// Each run builds a fresh world: an IDP with a lockout policy on a `ManualClock`, one
/// `IdpSdkService` whose scheduling is taken over by the run (`ExecutionController`), and
/// `flows` participants, each an app on a device of its own that activates its user and then
/// plays steps drawn from the mix. The SDK's hand-offs, its provider calls, transport requests and
/// responses, completions, cancellations, timeouts and MC events are the seams where the
/// scheduler (PCT by default) picks who goes next; every decision is logged, so a failure prints
/// one string that replays it (``replay(_:options:times:)``).
///
/// An MC event's task is a participant of its own: it parks where the MasterController awaits
/// the IDP (each request and each response is a seam) and where it joins a refresh in flight, so
/// other events of the same MC, other devices' steps and clock moves can come between its
/// awaits. What is not controlled, and says so: a provider the OS shows blocked outside the
/// scheduler's seams runs on outside control (the run is then marked partially controlled in
/// ``Report/partiallyControlledRuns``).
///
/// With ``Options/strategy`` `nil` the system runs free, on its own threads: the same invariants
/// are checked, nothing replays, and a failure prints what the participants it names did
/// (``Report/Failure/eventLog``).
public enum SystemStress {
    /// Explores `options.runs` runs (or until `options.duration`) of `options.shard`; on the
    /// first failure, replays it twice, shrinks it and stops. Runs are numbered in the whole
    /// campaign (a shard's failure names the run an unsharded campaign would).
    public static func run(_ options: Options) async -> Report {
        let scenario = scenario(options)
        var report = Report()
        report.shards = [options.shard]
        report.campaign = options.campaign
        let start = ContinuousClock.now
        var random = SeededRandom(seed: options.seed)
        var run = 0
        while report.runs < max(1, options.runs) {
            run += 1
            // Each run its own faults (sites keyed by flow and step under the run's fault seed)
            // and schedule, drawn in the campaign's order whichever shard makes the run.
            let faults = FaultPlan(seed: random.next(), rates: Dictionary(uniqueKeysWithValues: options.faultRates.map { ($0.key.rawValue, $0.value) }))
            let seed = random.next()
            guard options.shard.owns(run: run) else { continue }
            if let duration = options.duration, ContinuousClock.now - start > duration { break }
            report.runs += 1
            let result: StressRunResult
            let world: World
            if let strategy = options.strategy {
                let reproducer = StressReproducer(strategy: strategy, seed: seed, flows: Array(0..<options.flows), faults: faults, decisions: [])
                (result, world) = await runOnce(scenario, reproducer)
            } else {
                let undecided: String?
                (result, world, undecided) = await runFree(scenario, faults: faults, seed: seed)
                if let undecided {
                    report.undecidedFreeRuns += 1
                    if report.undecidedExample == nil { report.undecidedExample = "run \(run): \(undecided)" }
                }
            }
            // The run's wiring (IDP, SDK, transport, controller) holds the scheduler, whose
            // participants' jobs hold the world: let go of it once this run is read.
            defer { world.detach() }
            world.tally(into: &report)
            for (invariant, triggers) in world.unexercised().sorted(by: { $0.key < $1.key }) {
                report.unexercised.append("run \(run): \(invariant.rawValue) triggered \(triggers) times, never judged")
            }
            report.decisions += result.outcome?.decisions.count ?? 0
            if result.outcome?.partiallyControlled == true {
                report.partiallyControlledRuns += 1
                if report.partialControlExample == nil { report.partialControlExample = result.outcome?.partialControlReason }
            }
            for site in result.fired { report.faultsInjected[site.fault, default: 0] += 1 }
            if let wanted = options.stopAt, world.interleavingsSeen[wanted] != nil, options.strategy != nil {
                report.reached = (run, wanted, result.reproducer.description)
                break
            }
            if !result.violations.isEmpty {
                let foundAfter = (ContinuousClock.now - start).timeInterval
                if options.strategy != nil && !options.shrink {
                    report.failure = Report.Failure(
                        run: run, violations: result.violations, reproducer: result.reproducer.description, shrunk: result.reproducer.description,
                        sizeBefore: (result.reproducer.flows.count, result.reproducer.decisions.count),
                        sizeAfter: (result.reproducer.flows.count, result.reproducer.decisions.count), replaysFailingTheSameWay: 0, replays: 0,
                        nondeterminism: nil, foundAfter: foundAfter)
                } else if options.strategy != nil {
                    let explored = await StressRunner.confirmAndShrink(scenario, result, failingRun: run, runs: run, replays: 2)
                    report.failure = Report.Failure(
                        run: run, violations: result.violations, reproducer: result.reproducer.description, shrunk: (explored.shrunk ?? result.reproducer).description,
                        sizeBefore: (result.reproducer.flows.count, result.reproducer.decisions.count),
                        sizeAfter: ((explored.shrunk ?? result.reproducer).flows.count, (explored.shrunk ?? result.reproducer).decisions.count),
                        replaysFailingTheSameWay: explored.replaysFailingTheSameWay, replays: explored.replays, nondeterminism: explored.nondeterminism,
                        foundAfter: foundAfter)
                } else {
                    report.failure = Report.Failure(run: run, violations: result.violations, reproducer: "(free-running: no reproducer)", shrunk: "-",
                                                    sizeBefore: (options.flows, 0), sizeAfter: (options.flows, 0), replaysFailingTheSameWay: 0, replays: 0,
                                                    foundAfter: foundAfter, eventLog: world.eventLog(around: result.violations))
                }
                break
            }
        }
        report.failure?.shard = options.shard
        report.seconds = (ContinuousClock.now - start).timeInterval
        return report
    }

    /// Replays a reproducer printed by a failing run `times` times; the violations of each replay.
    public static func replay(_ reproducer: String, options: Options, times: Int = 10) async throws(StressError) -> [[String]] {
        try await replayRuns(reproducer, options: options, times: times).map(\.violations)
    }

    /// Replays a reproducer (of a failure, or of ``Report/reached``) `times` times.
    /// - Throws: ``StressError`` when `reproducer` cannot be parsed.
    package static func replayRuns(_ reproducer: String, options: Options, times: Int = 10) async throws(StressError) -> [Replay] {
        let parsed = try StressReproducer(parsing: reproducer)
        let scenario = scenario(options)
        var results: [Replay] = []
        for _ in 0..<max(1, times) {
            let (result, world) = await runOnce(scenario, parsed)
            results.append(Replay(violations: result.violations, interleavings: world.interleavingsSeen,
                                  eventLog: world.eventLog(around: result.violations, limit: 200)))
            world.detach()
        }
        return results
    }

    /// Where the system's bugs hinge, and so where a PCT change point may fall: the IDP's
    /// decisions, the engine's hand-off of a provider's answer, a hung provider, the MC's token
    /// store and its refresh, a cancel, a timeout, and a device's step.
    static let preemptionSeams = ["idp.", "provider.returned", "provider.hang", "mc.store.", "mc.refresh", "cancel", "timer", "step "]

    /// The scenario as the generic ``StressRunner`` sees it (its world is built per run).
    package static func scenario(_ options: Options) -> StressScenario<World> {
        StressScenario(name: "system: \(options.flows) flows, \(options.users) users, \(options.stepsPerFlow) steps each", flows: options.flows,
                       makeWorld: { World(options: options) },
                       flow: { world, context in world.play(context) },
                       check: { world in world.finalCheck() },
                       attach: { world, run in world.attach(run) },
                       quiesce: { world in world.quiesce() },
                       guardLimit: options.guardLimit, deadlockVerdict: Invariant.noStuckFlow.rawValue, preemptionSeams: preemptionSeams)
    }

    private static func runOnce(_ scenario: StressScenario<World>, _ reproducer: StressReproducer) async -> (StressRunResult, World) {
        let (keeping, kept) = keepingWorld(scenario)
        let result = await StressRunner.run(keeping, reproducer)
        return (result, kept.withLock { $0! })
    }

    private static func runFree(_ scenario: StressScenario<World>, faults: FaultPlan, seed: UInt64) async -> (StressRunResult, World, String?) {
        let (keeping, kept) = keepingWorld(scenario)
        let free = await StressRunner.runFree(keeping, faults: faults, seed: seed)
        let world = kept.withLock { $0! }
        let reproducer = StressReproducer(strategy: .randomWalk, seed: seed, flows: Array(0..<scenario.flows), faults: faults, decisions: [])
        return (StressRunResult(violations: free.violations, outcome: nil, fired: world.firedSites, reproducer: reproducer), world, free.undecided)
    }

    /// The same scenario, keeping the world its run makes (for the report's tallies).
    private static func keepingWorld(_ scenario: StressScenario<World>) -> (StressScenario<World>, LockedValue<World?>) {
        let kept = LockedValue<World?>(nil)
        let keeping = StressScenario(name: scenario.name, flows: scenario.flows, makeWorld: {
            let world = scenario.makeWorld()
            kept.withLock { $0 = world }
            return world
        }, flow: scenario.flow, check: scenario.check, attach: scenario.attach, quiesce: scenario.quiesce, guardLimit: scenario.guardLimit,
                                     deadlockVerdict: scenario.deadlockVerdict,
                                     preemptionSeams: scenario.preemptionSeams)
        return (keeping, kept)
    }
}
