import Foundation
import IdpPrimitives

/// A system to stress: a fresh world per run, what each flow does in it (calling
/// ``StressContext/seam(_:)`` where another flow may go first, and ``StressContext/fault(_:step:)``
/// where a fault may strike), and the invariants checked after the run.
public struct StressScenario<World: Sendable>: Sendable {
    /// The scenario's name, as reports print it.
    public let name: String
    /// How many flows a run starts.
    public let flows: Int
    /// Makes a fresh world for one run; called once per run, before any flow starts.
    public let makeWorld: @Sendable () -> World
    /// What one flow does in the world; each flow runs it on a thread of its own, with its own
    /// context.
    public let flow: @Sendable (World, StressContext) -> Void
    /// The names of the invariants the run broke, with what was seen; empty when all held.
    public let check: @Sendable (World) -> [String]
    /// Called once per run, after the world is made and before any flow starts, with the run's
    /// scheduler (`nil` when free-running) and faults: where a world hands its code under test the
    /// run's `ExecutionController` and transport.
    public let attach: (@Sendable (World, StressRun) -> Void)?
    /// Called when no flow can go on and some wait for a delivery: what the world does when it is
    /// quiet (a watchdog moving the clock). Returns whether it changed anything.
    public let quiesce: (@Sendable (World) -> Bool)?
    /// How long a flow may stay away from a seam (blocked, or busy on a loaded machine) before the
    /// scheduler sets it aside and marks the run partially controlled.
    public let stallTimeout: Duration
    /// How long nobody may reach a seam, with nobody able to go on, before the run is a deadlock
    /// (a participant set aside may only be slow, or starved of a thread on a loaded machine).
    public let deadlockTimeout: Duration

    /// A scenario.
    ///
    /// - Parameters:
    ///   - name: The scenario's name.
    ///   - flows: How many flows a run starts.
    ///   - makeWorld: Makes a fresh world for one run.
    ///   - flow: What one flow does in the world.
    ///   - check: The invariants the run broke, with what was seen; empty when all held.
    ///   - attach: Hands the world the run's scheduler and faults; `nil`: nothing to attach.
    ///   - quiesce: What the world does when nobody can go on; `nil`: nothing.
    ///   - stallTimeout: How long a flow may stay away from a seam; 500 ms by default.
    ///   - deadlockTimeout: How long nobody may reach a seam before the run is a deadlock; 5 s by
    ///     default.
    public init(name: String, flows: Int, makeWorld: @escaping @Sendable () -> World,
                flow: @escaping @Sendable (World, StressContext) -> Void, check: @escaping @Sendable (World) -> [String],
                attach: (@Sendable (World, StressRun) -> Void)? = nil, quiesce: (@Sendable (World) -> Bool)? = nil,
                stallTimeout: Duration = .milliseconds(500), deadlockTimeout: Duration = .seconds(5)) {
        self.name = name
        self.flows = flows
        self.makeWorld = makeWorld
        self.flow = flow
        self.check = check
        self.attach = attach
        self.quiesce = quiesce
        self.stallTimeout = stallTimeout
        self.deadlockTimeout = deadlockTimeout
    }
}

/// What a world learns of the run it is in (``StressScenario/attach``).
public struct StressRun: Sendable {
    /// `nil` when free-running.
    public let scheduler: ControlledScheduler?
    /// The run's fault plan (``FaultPlan/none`` when no fault is asked for).
    public let faults: FaultPlan
    let fired: LockedValue<[FaultPlan.Site]>

    /// Whether fault `name` strikes flow `flow` at `step`; recorded as fired if so.
    public func fault(_ name: String, flow: Int, step: Int) -> Bool {
        let site = FaultPlan.Site(fault: name, flow: flow, step: step)
        guard faults.fires(site) else { return false }
        fired.withLock { $0.append(site) }
        return true
    }
}

/// What a flow of a stress run sees: its index, its seams and its faults.
public final class StressContext: Sendable {
    /// The flow's index in the scenario.
    public let flow: Int
    private let participant: Int
    private let scheduler: ControlledScheduler?
    private let faults: FaultPlan
    private let fired: LockedValue<[FaultPlan.Site]>

    init(flow: Int, participant: Int, scheduler: ControlledScheduler?, faults: FaultPlan, fired: LockedValue<[FaultPlan.Site]>) {
        self.flow = flow
        self.participant = participant
        self.scheduler = scheduler
        self.faults = faults
        self.fired = fired
    }

    /// A point where another flow may run first. Free-running, it does nothing.
    public func seam(_ name: String) { scheduler?.seam(participant, name) }

    /// Whether this flow runs under a scheduler.
    public var isControlled: Bool { scheduler != nil }

    /// Starts something that delivers its result later, on another thread (`start` gets the
    /// delivery), and waits for the first delivery: under control this flow parks and others go
    /// on until it comes; free-running it blocks its OS thread, for at most `limit` (then `nil`).
    public func wait<T: Sendable>(_ name: String, limit: Duration = .seconds(30), _ start: (@escaping @Sendable (T) -> Void) -> Void) -> T? {
        let box = LockedValue<T?>(nil)
        let semaphore = DispatchSemaphore(value: 0)
        let scheduler = self.scheduler, participant = self.participant
        start { value in
            let first = box.withLock { held -> Bool in
                guard held == nil else { return false }
                held = value
                return true
            }
            guard first else { return }
            if let scheduler { scheduler.unpark(participant) } else { semaphore.signal() }
        }
        if let scheduler {
            scheduler.park(participant, name)
        } else if semaphore.wait(timeout: .now() + limit.timeInterval) == .timedOut {
            return nil
        }
        return box.withLock { $0 }
    }

    /// Runs `bodies` (async code: MC events) as participants of their own, one task each,
    /// started by this flow, and waits for all their results: under control, each body's task runs
    /// only on its turn and parks (suspends) where it awaits the network, and this flow parks
    /// meanwhile; free-running, they run as concurrent tasks and this thread waits, for at most
    /// `limit` (then `nil`).
    public func runAsync<T: Sendable>(_ name: String, limit: Duration = .seconds(30), _ bodies: [@Sendable () async -> T]) -> [T]? {
        let results = LockedValue<[Int: T]>([:])
        let count = bodies.count
        let scheduler = self.scheduler, participant = self.participant
        return wait(name, limit: limit) { (deliver: @escaping @Sendable ([T]) -> Void) in
            for (index, body) in bodies.enumerated() {
                let run: @Sendable () async -> Void = {
                    let value = await body()
                    let all = results.withLock { results -> [T]? in
                        results[index] = value
                        return results.count == count ? (0..<count).map { results[$0]! } : nil
                    }
                    if let all { deliver(all) }
                }
                if let scheduler {
                    scheduler.spawnAsync(count == 1 ? name : "\(name)#\(index + 1)", parent: participant, run)
                } else {
                    Task.detached { await run() }
                }
            }
        }
    }

    /// Whether fault `name` strikes this flow at `step` (decided by the run's ``FaultPlan``).
    public func fault(_ name: String, step: Int) -> Bool {
        let site = FaultPlan.Site(fault: name, flow: flow, step: step)
        guard faults.fires(site) else { return false }
        fired.withLock { $0.append(site) }
        return true
    }
}

/// Everything that makes a run repeat: the flows, the faults, the strategy's seed and the
/// decisions. ``description`` is the one-line string a failing run prints; ``init(parsing:)`` reads
/// it back.
public struct StressReproducer: Sendable, Equatable, CustomStringConvertible {
    /// How the scheduler chooses.
    public var strategy: ScheduleStrategy
    /// The strategy's seed.
    public var seed: UInt64
    /// The scenario's flows the run starts (indices from 0); shrinking removes some.
    public var flows: [Int]
    /// Which faults fire where.
    public var faults: FaultPlan
    /// The participant chosen at each scheduler decision, replayed before the strategy takes over;
    /// empty for a fresh run.
    public var decisions: [Int]

    /// A reproducer.
    ///
    /// - Parameters:
    ///   - strategy: How the scheduler chooses.
    ///   - seed: The strategy's seed.
    ///   - flows: The scenario's flows to start (indices from 0).
    ///   - faults: Which faults fire where.
    ///   - decisions: The scheduler decisions to replay first; empty for a fresh run.
    public init(strategy: ScheduleStrategy, seed: UInt64, flows: [Int], faults: FaultPlan, decisions: [Int]) {
        self.strategy = strategy
        self.seed = seed
        self.flows = flows
        self.faults = faults
        self.decisions = decisions
    }

    /// flows, fault sites that may fire, and decisions: what shrinking makes smaller.
    public var size: (flows: Int, faultRates: Int, decisions: Int) { (flows.count, faults.rates.count, decisions.count) }

    /// One line, `idph1|strategy=…|seed=…|flows=…|faultseed=…|rates=…|off=…|log=…`: what a failing
    /// run prints and ``init(parsing:)`` reads.
    public var description: String {
        let strategy = switch self.strategy {
        case .pct(let depth, let steps): "pct:\(depth):\(steps)"
        case .randomWalk: "walk"
        }
        let rates = faults.rates.keys.sorted().map { "\($0)=\(faults.rates[$0]!)" }.joined(separator: ";")
        let off = faults.suppressed.sorted().map(\.description).joined(separator: ";")
        return "idph1|strategy=\(strategy)|seed=\(seed)|flows=\(flows.map(String.init).joined(separator: ","))|faultseed=\(faults.seed)|rates=\(rates)|off=\(off)|log=\(decisions.map(String.init).joined(separator: ","))"
    }

    /// Reads a string made by ``description``.
    /// - Throws: ``StressError`` naming the part that is malformed.
    public init(parsing text: String) throws(StressError) {
        var fields: [String: String] = [:]
        let parts = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.first == "idph1" else { throw StressError("a reproducer starts with 'idph1|'") }
        for part in parts.dropFirst() {
            guard let equals = part.firstIndex(of: "=") else { throw StressError("reproducer part '\(part)' has no '='") }
            fields[String(part[..<equals])] = String(part[part.index(after: equals)...])
        }
        func ints(_ name: String) throws(StressError) -> [Int] {
            guard let value = fields[name] else { throw StressError("the reproducer lacks '\(name)'") }
            if value.isEmpty { return [] }
            var result: [Int] = []
            for item in value.split(separator: ",") {
                guard let number = Int(item), number >= 0 else { throw StressError("'\(name)' has '\(item)', not a count") }
                result.append(number)
            }
            return result
        }
        switch fields["strategy"]?.split(separator: ":").map(String.init) {
        case ["walk"]?: strategy = .randomWalk
        case let pct? where pct.count == 3 && pct[0] == "pct":
            guard let depth = Int(pct[1]), let steps = Int(pct[2]), depth >= 1, steps >= 1 else { throw StressError("pct needs a depth and a step count of at least 1") }
            strategy = .pct(depth: depth, steps: steps)
        default: throw StressError("strategy must be 'walk' or 'pct:<depth>:<steps>'")
        }
        guard let seed = fields["seed"].flatMap(UInt64.init), let faultSeed = fields["faultseed"].flatMap(UInt64.init) else {
            throw StressError("seed and faultseed must be unsigned integers")
        }
        self.seed = seed
        flows = try ints("flows")
        decisions = try ints("log")
        var rates: [String: Double] = [:]
        for item in (fields["rates"] ?? "").split(separator: ";") {
            let pair = item.split(separator: "=")
            guard pair.count == 2, let rate = Double(pair[1]), (0...1).contains(rate) else { throw StressError("fault rate '\(item)' is not name=probability") }
            rates[String(pair[0])] = rate
        }
        var off: Set<FaultPlan.Site> = []
        for item in (fields["off"] ?? "").split(separator: ";") {
            let at = item.split(separator: "@")
            let position = at.count == 2 ? at[1].split(separator: ".") : []
            guard position.count == 2, let flow = Int(position[0]), let step = Int(position[1]) else { throw StressError("fault site '\(item)' is not fault@flow.step") }
            off.insert(.init(fault: String(at[0]), flow: flow, step: step))
        }
        faults = FaultPlan(seed: faultSeed, rates: rates, suppressed: off)
    }
}

/// A malformed reproducer or setting.
public struct StressError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is malformed, as a sentence.
    public let description: String
    /// An error.
    ///
    /// - Parameter description: What is malformed.
    public init(_ description: String) { self.description = description }
}

/// One run's result.
public struct StressRunResult: Sendable {
    /// The invariants broken (with a deadlock as "no deadlock: …").
    public let violations: [String]
    /// How the scheduler's run ended (its decisions, whether it deadlocked or lost control); `nil`
    /// for a run that was not controlled.
    public let outcome: ControlledScheduler.Outcome?
    /// The fault sites that fired, in the order they fired.
    public let fired: [FaultPlan.Site]
    /// The run as it happened, with the decisions the scheduler made: replaying it repeats the run.
    public let reproducer: StressReproducer
}

/// What exploring a scenario found.
public struct StressReport: Sendable, CustomStringConvertible {
    /// The scenario's name.
    public let scenario: String
    /// How many runs were asked for.
    public let runs: Int
    /// The run (from 1) that failed first, or `nil`.
    public let failingRun: Int?
    /// The invariants the failing run broke; empty when none broke.
    public let violations: [String]
    /// The failing run's reproducer, or `nil`.
    public let original: StressReproducer?
    /// The smallest reproducer found that fails the same way, or `nil` when none failed.
    public let shrunk: StressReproducer?
    /// Of the confirming replays, how many failed the same way.
    public let replaysFailingTheSameWay: Int
    /// How many confirming replays were made.
    public let replays: Int
    /// Set when the replays did not agree: nondeterminism in the code under test, not a flaky failure.
    public let nondeterminism: String?

    /// A few lines: the failing run, what it broke, both reproducers and the replays; or that
    /// nothing broke.
    public var description: String {
        guard let failingRun, let original, let shrunk else { return "\(scenario): no invariant broken in \(runs) runs" }
        return """
        \(scenario): run \(failingRun) of \(runs) broke \(violations.joined(separator: "; "))
          reproducer: \(original)
          shrunk (flows \(original.size.flows)→\(shrunk.size.flows), decisions \(original.size.decisions)→\(shrunk.size.decisions), fault sites off \(original.faults.suppressed.count)→\(shrunk.faults.suppressed.count)): \(shrunk)
          replays failing the same way: \(replaysFailingTheSameWay) of \(replays)\(nondeterminism.map { "\n  nondeterminism: \($0)" } ?? "")
        """
    }
}

/// Runs scenarios under the ``ControlledScheduler`` (or free-running), replays reproducers, and
/// shrinks a failure to a small reproducer.
///
/// Threading: every run starts its flows on new OS threads; the methods are `async` and never block
/// a Swift concurrency thread.
public enum StressRunner {
    /// One run of `scenario`'s `flows` (indices into its flows) under `reproducer`'s strategy,
    /// seed, faults and decisions.
    public static func run<World>(_ scenario: StressScenario<World>, _ reproducer: StressReproducer,
                                  stallTimeout: Duration? = nil, deadlockTimeout: Duration? = nil) async -> StressRunResult {
        let stallTimeout = stallTimeout ?? scenario.stallTimeout
        let deadlockTimeout = deadlockTimeout ?? scenario.deadlockTimeout
        let world = scenario.makeWorld()
        var onQuiescence: (@Sendable () -> Bool)?
        if let quiesce = scenario.quiesce { onQuiescence = { quiesce(world) } }
        let scheduler = ControlledScheduler(participants: max(1, reproducer.flows.count), strategy: reproducer.strategy, seed: reproducer.seed,
                                            replay: reproducer.decisions, stallTimeout: stallTimeout, deadlockTimeout: deadlockTimeout,
                                            onQuiescence: onQuiescence)
        let fired = LockedValue<[FaultPlan.Site]>([])
        scenario.attach?(world, StressRun(scheduler: scheduler, faults: reproducer.faults, fired: fired))
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
        var violations = outcome.deadlocked ? ["no deadlock: every unfinished flow was blocked (\(outcome.lastSeams.joined(separator: ", ")))"] : []
        if !outcome.deadlocked { violations += scenario.check(world) }
        var recorded = reproducer
        recorded.decisions = outcome.decisions
        return StressRunResult(violations: violations, outcome: outcome, fired: fired.withLock { $0 }, reproducer: recorded)
    }

    /// One free-running run: the flows on OS threads released together, no seams, no control.
    public static func runFree<World>(_ scenario: StressScenario<World>, faults: FaultPlan = .none) async -> [String] {
        let world = scenario.makeWorld()
        let fired = LockedValue<[FaultPlan.Site]>([])
        scenario.attach?(world, StressRun(scheduler: nil, faults: faults, fired: fired))
        let release = DispatchSemaphore(value: 0)
        let remaining = LockedValue(scenario.flows)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for flow in 0..<scenario.flows {
                let context = StressContext(flow: flow, participant: flow, scheduler: nil, faults: faults, fired: fired)
                Thread {
                    release.wait()
                    scenario.flow(world, context)
                    if remaining.withLock({ $0 -= 1; return $0 }) == 0 { done.resume() }
                }.start()
            }
            for _ in 0..<scenario.flows { release.signal() }
        }
        return scenario.check(world)
    }

    /// Explores `runs` runs, each with its own seed derived from `seed`; on the first failure it
    /// replays the reproducer `replays` times and shrinks it.
    public static func explore<World>(_ scenario: StressScenario<World>, strategy: ScheduleStrategy, seed: UInt64, runs: Int,
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
    public static func replay<World>(_ scenario: StressScenario<World>, _ reproducer: StressReproducer, times: Int,
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
