import Foundation

/// A stress report as `idp-bench stress --format json` writes it (schema `idp-bench-stress/3`), and
/// back: what `idp-bench stress merge` reads, merges (``SystemStress/Report/merged(_:)``) and writes.
package struct StressSummary: Codable, Equatable, Sendable {
    /// The schema this build writes and reads.
    package static let currentSchema = "idp-bench-stress/3"
    package var schema = Self.currentSchema
    package var seed: UInt64
    package var strategy: String
    package var flowsPerRun: Int
    package var users: Int
    package var stepsPerFlow: Int
    /// What decides the campaign's runs (``SystemStress/Options/campaign``).
    package var campaign: String
    /// The shards the report covers, `K/N` each.
    package var shards: [String]
    package var runs: Int
    package var flows: Int
    package var mcEvents: Int
    package var decisions: Int
    package var partiallyControlledRuns: Int
    package var partialControlExample: String?
    package var undecidedFreeRuns: Int
    package var undecidedExample: String?
    package var seconds: Double
    package var faultsInjected: [String: Int]
    package var checks: [String: Int]
    package var triggers: [String: Int]
    package var excused: [String: Int]
    package var verdicts: [String: String]
    package var unexercised: [String]
    package var interleavings: [String: Int]
    package var reached: String?
    package var reachedRun: Int?
    package var reachedInterleaving: String?
    package var violations: [String]
    package var eventLog: [String]
    package var failedRun: Int?
    package var failedShard: String?
    package var reproducer: String?
    package var shrunk: String?
    package var sizeBefore: [Int]?
    package var sizeAfter: [Int]?
    package var replaysFailingTheSameWay: Int?
    package var replays: Int?
    package var nondeterminism: String?
    package var failedAfterSeconds: Double?
    /// Whether every invariant held and none was left unjudged (``SystemStress/Report/passed``).
    package var passed: Bool

    /// The summary of `report`, a run of `options` (or of shards of its campaign).
    package init(_ report: SystemStress.Report, options: SystemStress.Options) {
        self.init(report, seed: options.seed, strategy: options.strategy.map { "\($0)" } ?? "free", flowsPerRun: options.flows, users: options.users,
                  stepsPerFlow: options.stepsPerFlow)
    }

    private init(_ report: SystemStress.Report, seed: UInt64, strategy: String, flowsPerRun: Int, users: Int, stepsPerFlow: Int) {
        func named<Key: RawRepresentable<String>>(_ counts: [Key: Int]) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) })
        }
        let failure = report.failure
        self.seed = seed
        self.strategy = strategy
        self.flowsPerRun = flowsPerRun
        self.users = users
        self.stepsPerFlow = stepsPerFlow
        campaign = report.campaign
        shards = report.shards.map(\.description)
        runs = report.runs
        flows = report.flows
        mcEvents = report.mcEvents
        decisions = report.decisions
        partiallyControlledRuns = report.partiallyControlledRuns
        partialControlExample = report.partialControlExample
        undecidedFreeRuns = report.undecidedFreeRuns
        undecidedExample = report.undecidedExample
        seconds = report.seconds
        faultsInjected = report.faultsInjected
        checks = named(report.tally.judged)
        triggers = named(report.tally.triggers)
        excused = named(report.tally.excused)
        verdicts = Dictionary(uniqueKeysWithValues: SystemStress.Invariant.allCases.map { ($0.rawValue, "\(report.verdict($0))") })
        unexercised = report.unexercised
        interleavings = named(report.tally.interleavings)
        reached = report.reached?.reproducer
        reachedRun = report.reached?.run
        reachedInterleaving = report.reached?.interleaving.rawValue
        violations = failure?.violations ?? []
        eventLog = failure?.eventLog ?? []
        failedRun = failure?.run
        failedShard = failure?.shard.description
        reproducer = failure?.reproducer
        shrunk = failure?.shrunk
        sizeBefore = failure.map { [$0.sizeBefore.flows, $0.sizeBefore.decisions] }
        sizeAfter = failure.map { [$0.sizeAfter.flows, $0.sizeAfter.decisions] }
        replaysFailingTheSameWay = failure?.replaysFailingTheSameWay
        replays = failure?.replays
        nondeterminism = failure?.nondeterminism
        failedAfterSeconds = failure?.foundAfter
        passed = report.passed
    }

    /// The report this summary was written from.
    /// - Throws: ``StressError`` naming what the summary holds that no report can (an unknown
    ///   invariant, interleaving or shard).
    package func report() throws(StressError) -> SystemStress.Report {
        func keyed<Key: RawRepresentable<String> & Hashable>(_ counts: [String: Int], _ what: String) throws(StressError) -> [Key: Int] {
            var keyed: [Key: Int] = [:]
            for (name, count) in counts {
                guard let key = Key(rawValue: name) else { throw StressError("the report names an unknown \(what): '\(name)'") }
                keyed[key] = count
            }
            return keyed
        }
        var report = SystemStress.Report()
        report.campaign = campaign
        report.shards = []
        for shard in shards { report.shards.append(try SystemStress.Shard(parsing: shard)) }
        report.runs = runs
        report.flows = flows
        report.mcEvents = mcEvents
        report.decisions = decisions
        report.partiallyControlledRuns = partiallyControlledRuns
        report.partialControlExample = partialControlExample
        report.undecidedFreeRuns = undecidedFreeRuns
        report.undecidedExample = undecidedExample
        report.seconds = seconds
        report.faultsInjected = faultsInjected
        report.tally.judged = try keyed(checks, "invariant")
        report.tally.triggers = try keyed(triggers, "invariant")
        report.tally.excused = try keyed(excused, "invariant")
        report.tally.interleavings = try keyed(interleavings, "interleaving")
        report.unexercised = unexercised
        if let reached, let reachedRun, let name = reachedInterleaving {
            guard let interleaving = SystemStress.Interleaving(rawValue: name) else { throw StressError("the report names an unknown interleaving: '\(name)'") }
            report.reached = (reachedRun, interleaving, reached)
        }
        if let failedRun {
            var failure = SystemStress.Report.Failure(
                run: failedRun, violations: violations, reproducer: reproducer ?? "", shrunk: shrunk ?? "",
                sizeBefore: (sizeBefore?.first ?? 0, sizeBefore?.last ?? 0), sizeAfter: (sizeAfter?.first ?? 0, sizeAfter?.last ?? 0),
                replaysFailingTheSameWay: replaysFailingTheSameWay ?? 0, replays: replays ?? 0, nondeterminism: nondeterminism,
                foundAfter: failedAfterSeconds ?? 0, eventLog: eventLog)
            failure.shard = try SystemStress.Shard(parsing: failedShard ?? "1/1")
            report.failure = failure
        }
        return report
    }

    /// The summaries of one campaign's shards, merged: as one run of all their budgets.
    /// - Throws: ``StressError`` when a summary cannot be read back or the shards do not merge
    ///   (``SystemStress/Report/merged(_:)``).
    package static func merged(_ summaries: [StressSummary]) throws(StressError) -> StressSummary {
        var reports: [SystemStress.Report] = []
        for summary in summaries { reports.append(try summary.report()) }
        let merged = try SystemStress.Report.merged(reports)
        let first = summaries[0]
        return StressSummary(merged, seed: first.seed, strategy: first.strategy, flowsPerRun: first.flowsPerRun, users: first.users,
                             stepsPerFlow: first.stepsPerFlow)
    }

    /// The summary in `data`, as `idp-bench stress --format json` wrote it.
    /// - Throws: ``StressError`` when `data` is not such a summary.
    package init(json data: Data) throws(StressError) {
        let expected = Self.currentSchema
        do {
            self = try JSONDecoder().decode(StressSummary.self, from: data)
        } catch {
            throw StressError("not an idp-bench stress report (\(expected)): \(error)")
        }
        guard schema == expected else { throw StressError("a report of schema \(schema); this idp-bench reads \(expected)") }
    }

    /// Pretty-printed JSON, keys sorted.
    package var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
