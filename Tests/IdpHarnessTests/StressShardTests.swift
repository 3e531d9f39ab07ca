import Foundation
@testable import IdpHarness
import IdpPrimitives
import Testing
import TestSupport

/// A campaign split across machines: `--shard K/N` and `idp-bench stress merge`.
@Suite("Stress campaigns in shards: disjoint runs that together are the unsharded campaign, merged into its report")
struct StressShardTests {
    /// The default stress under control, `runs` runs of `shard`, recording each world's seeds.
    static func campaign(_ shard: SystemStress.Shard, runs: Int, seeds: LockedValue<[UInt64: UInt64]>) -> SystemStress.Options {
        var options = SystemStress.Options(seed: 11, runs: runs)
        options.faultRates = SystemStress.Options.defaultFaultRates
        options.shard = shard
        options.onWorld = { seed, faultSeed in seeds.withLock { $0[seed] = faultSeed } }
        return options
    }

    /// The counts a merged report must share with the unsharded one: all of them.
    static func counts(_ summary: StressSummary) -> [String] {
        ["runs \(summary.runs)", "flows \(summary.flows)", "MC events \(summary.mcEvents)", "decisions \(summary.decisions)",
         "partially controlled \(summary.partiallyControlledRuns)", "undecided \(summary.undecidedFreeRuns)",
         "faults \(summary.faultsInjected.sorted { $0.key < $1.key })", "checks \(summary.checks.sorted { $0.key < $1.key })",
         "triggers \(summary.triggers.sorted { $0.key < $1.key })", "excused \(summary.excused.sorted { $0.key < $1.key })",
         "interleavings \(summary.interleavings.sorted { $0.key < $1.key })", "verdicts \(summary.verdicts.sorted { $0.key < $1.key })",
         "unexercised \(summary.unexercised.sorted())", "violations \(summary.violations)", "failed run \(String(describing: summary.failedRun))",
         "reproducer \(summary.reproducer ?? "-")", "passed \(summary.passed)"]
    }

    @Test("two shards explore exactly the runs of one unsharded campaign of twice the budget, none twice, and their merged json reports equal its report in every count")
    func twoShardsAreTheCampaign() async throws {
        // Given one campaign run whole with 4 runs, and as shards 1/2 and 2/2 with 2 runs each
        let whole = LockedValue<[UInt64: UInt64]>([:]), first = LockedValue<[UInt64: UInt64]>([:]), second = LockedValue<[UInt64: UInt64]>([:])
        let wholeOptions = Self.campaign(.whole, runs: 4, seeds: whole)
        let unsharded = await SystemStress.run(wholeOptions)
        let shardReports = [await SystemStress.run(Self.campaign(try .init(1, of: 2), runs: 2, seeds: first)),
                            await SystemStress.run(Self.campaign(try .init(2, of: 2), runs: 2, seeds: second))]
        // Then the worlds the shards built are the unsharded campaign's, split with none shared
        let (wholeSeeds, firstSeeds, secondSeeds) = (whole.withLock { $0 }, first.withLock { $0 }, second.withLock { $0 })
        #expect(wholeSeeds.count == 4 && firstSeeds.count == 2 && secondSeeds.count == 2)
        #expect(Set(firstSeeds.keys).isDisjoint(with: secondSeeds.keys))
        #expect(firstSeeds.merging(secondSeeds) { a, _ in a } == wholeSeeds)
        // And their reports, written as json, read back and merged, are the unsharded report
        let written = shardReports.map { StressSummary($0, options: wholeOptions).json }
        let merged = try StressSummary.merged(written.map { try StressSummary(json: Data($0.utf8)) })
        #expect(Self.counts(merged) == Self.counts(StressSummary(unsharded, options: wholeOptions)))
        #expect(merged.shards == ["1/2", "2/2"])
    }

    #if DEBUG
    @Test("a campaign's first failure is the merged report's: the run the unsharded campaign fails in, its reproducer, and the shard that found it")
    func firstFailureAndItsShard() async throws {
        // Given a bug the default stress catches at once, the campaign whole and in three shards
        func options(_ shard: SystemStress.Shard) -> SystemStress.Options {
            var options = StressMutationTests.options(.idpCodeStaysRedeemable, strategy: StressMutationTests.controlled)
            options.runs = 3
            options.shard = shard
            return options
        }
        let unsharded = await SystemStress.run(options(.whole))
        var shards: [SystemStress.Report] = []
        for index in 1...3 { shards.append(await SystemStress.run(options(try .init(index, of: 3)))) }
        // When their reports are merged
        let merged = try SystemStress.Report.merged(shards)
        // Then it failed where the unsharded campaign failed, with the same reproducer, found by
        // the shard that owns that run
        let failure = try #require(merged.failure), expected = try #require(unsharded.failure)
        #expect(failure.run == expected.run && failure.reproducer == expected.reproducer && failure.violations == expected.violations)
        #expect(failure.shard.owns(run: failure.run) && failure.shard.count == 3)
        #expect(!merged.passed)
        #expect(merged.description.contains("of shard \(failure.shard)"))
    }
    #endif

    @Test("what does not merge is refused with the reason: another campaign, a shard twice, another split, no report; a malformed shard is refused")
    func refusals() throws {
        var a = SystemStress.Report(), b = SystemStress.Report()
        a.campaign = "seed=1"
        b.campaign = "seed=2"
        a.shards = [try .init(1, of: 2)]
        b.shards = [try .init(2, of: 2)]
        #expect(throws: StressError.self) { try SystemStress.Report.merged([a, b]) }
        b.campaign = a.campaign
        b.shards = a.shards
        #expect(throws: StressError.self) { try SystemStress.Report.merged([a, b]) }
        b.shards = [try .init(2, of: 3)]
        #expect(throws: StressError.self) { try SystemStress.Report.merged([a, b]) }
        #expect(throws: StressError.self) { try SystemStress.Report.merged([]) }
        for text in ["0/2", "3/2", "2", "a/b", "1/0", ""] {
            #expect(throws: StressError.self, "\(text)") { try SystemStress.Shard(parsing: text) }
        }
        #expect(throws: StressError.self) { try StressSummary(json: Data("{}".utf8)) }
        b.shards = [try .init(2, of: 2)]
        #expect(try SystemStress.Report.merged([a, b]).shards.map(\.description) == ["1/2", "2/2"])
    }
}

/// A campaign runs for hours: a run's world must not outlive it.
@Suite("A long campaign does not keep its runs", .heavy)
struct StressMemoryTests {
    /// Holds an object weakly.
    final class Weak: @unchecked Sendable {
        // Written once, on the thread that makes the box; read after the stress.
        weak var value: AnyObject?
        init(_ value: AnyObject) { self.value = value }
    }

    @Test("controlled and free, the worlds of finished runs (their IDP, SDK, devices and scheduler) are let go",
          arguments: [true, false])
    func runsAreLetGo(_ controlled: Bool) async {
        // Given 12 runs, each world's credentials watched weakly (a world owns them)
        let worlds = LockedValue<[Weak]>([])
        var options = SystemStress.Options(seed: 5, runs: 12, strategy: controlled ? .pct(depth: 3, steps: 100) : nil)
        options.makeProvider = { credentials in
            worlds.withLock { $0.append(Weak(credentials)) }
            return credentials
        }
        // When the stress has run
        _ = await SystemStress.run(options)
        // Then every world is let go: a cycle kept all of them, and an idle participant thread the
        // last it ran
        let released = await eventually { worlds.withLock { $0.allSatisfy { $0.value == nil } } }
        #expect(released, "\(worlds.withLock { $0.filter { $0.value != nil }.count }) of \(worlds.withLock { $0.count }) worlds kept")
    }
}
