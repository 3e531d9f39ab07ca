@testable import BenchSupport
import Testing

/// The collapse targets: closed-loop throughput at 4,096 in flight against the best level, and
/// for logins against the best lower level run over the same 4,096 users.
@Suite("evaluateTargets: collapse at depth")
struct CollapseTargetTests {
    static let bestLevel = "login throughput at 4096 in flight / best level"
    static let sameUsers = "login throughput at 4096 in flight / best level over the same 4096 users"

    /// A closed-loop row of `scenario` at `inFlight` with `throughput` flows/s.
    static func row(_ scenario: String, _ inFlight: Int, _ throughput: Double) -> FlowRow {
        FlowRow(scenario: scenario, mode: "closed", inFlight: inFlight, offeredPerS: nil, throughputPerS: throughput, completed: 1_000, errors: 0,
                latencyUs: Percentiles(p0: 1, p25: 2, p50: 3, p75: 4, p90: 5, p99: 6, p999: 7, p100: 8))
    }

    /// A run whose logins reach `at256` at 256 in flight and `at4096` at 4,096, and, when given,
    /// `spread` at 256 in flight over the 4,096 users.
    static func report(at256: Double, at4096: Double, spread: Double?) -> BenchReport {
        var report = sampleReport()
        report.flows = [row("login", 1, 10_000), row("login", 256, at256), row("login", 4_096, at4096)]
        if let spread { report.flows.append(row(FlowRow.scenario("login", spreadOver: 4_096), 256, spread)) }
        return report
    }

    static func target(_ name: String, in report: BenchReport) -> TargetRow? {
        evaluateTargets(report, latency: .zero).first { $0.name == name }
    }

    @Test("the deepest level against the best one: met at 0.9, missed below, and the spread row is never the best level")
    func bestLevel() throws {
        let met = try #require(Self.target(Self.bestLevel, in: Self.report(at256: 50_000, at4096: 45_000, spread: 60_000)))
        #expect(abs(met.value - 0.9) < 1e-9)
        #expect(met.met)
        #expect(met.detail.contains("at 256 in flight"))
        let missed = try #require(Self.target(Self.bestLevel, in: Self.report(at256: 50_000, at4096: 44_000, spread: 44_000)))
        #expect(abs(missed.value - 0.88) < 1e-9)
        #expect(!missed.met)
    }

    @Test("over the same users: the deepest level against the spread row, met at 0.9, missed below, absent without the row")
    func sameUsers() throws {
        // 256 users reach 52,000, the 4,096 users 47,000 at 256 and 45,000 at 4,096 in flight.
        let report = Self.report(at256: 52_000, at4096: 45_000, spread: 47_000)
        let met = try #require(Self.target(Self.sameUsers, in: report))
        #expect(abs(met.value - 45_000.0 / 47_000) < 1e-9)
        #expect(met.met)
        #expect(met.detail == "45000 vs 47000 flows/s at 256 in flight over 4096 users")
        #expect(Self.target(Self.bestLevel, in: report)?.met == false, "the best level, on fewer users, is judged on its own")
        let missed = try #require(Self.target(Self.sameUsers, in: Self.report(at256: 52_000, at4096: 42_000, spread: 47_000)))
        #expect(!missed.met)
        #expect(Self.target(Self.sameUsers, in: Self.report(at256: 52_000, at4096: 45_000, spread: nil)) == nil)
    }

    @Test("the flows table's note names the spread row only when there is one")
    func note() {
        #expect(flowsNote(Self.report(at256: 52_000, at4096: 45_000, spread: 47_000).flows)
            .contains("the rows login (4096 users) run their levels over the deepest level's users"))
        #expect(!flowsNote(Self.report(at256: 52_000, at4096: 45_000, spread: nil).flows).contains("users"))
    }

    @Test("with a spread row per level, the best of them is the reference")
    func bestSpreadRow() throws {
        var report = Self.report(at256: 52_000, at4096: 45_000, spread: 47_000)
        report.flows.append(Self.row(FlowRow.scenario("login", spreadOver: 4_096), 16, 44_000))
        report.flows.append(Self.row(FlowRow.scenario("login", spreadOver: 4_096), 1_024, 46_000))
        let target = try #require(Self.target(Self.sameUsers, in: report))
        #expect(abs(target.value - 45_000.0 / 47_000) < 1e-9)
        #expect(target.detail.hasSuffix("at 256 in flight over 4096 users"))
    }

    @Test("a deepest level faster than the spread row is the best level itself: 1")
    func deepestIsBest() throws {
        let target = try #require(Self.target(Self.sameUsers, in: Self.report(at256: 52_000, at4096: 48_000, spread: 46_000)))
        #expect(target.value == 1)
        #expect(target.met)
    }
}

/// Which device a closed-loop worker runs each flow on.
@Suite("FlowRow.device: workers sharing devices")
struct SpreadDeviceTests {
    @Test("no two workers ever share a device, each takes its own in turn, and together they use every device they can",
          arguments: [(1, 1), (16, 16), (16, 4_096), (256, 4_096), (1_024, 4_096), (3, 10), (4_096, 4_096)])
    func disjointTurns(inFlight: Int, devices: Int) {
        var owner = [Int: Int]()
        var clashes = 0, outOfRange = 0
        let turns = devices / inFlight
        for worker in 0..<inFlight {
            var seen = Set<Int>()
            for flow in 0..<(2 * turns) {
                let device = FlowRow.device(worker: worker, flow: flow, inFlight: inFlight, devices: devices)
                if !(0..<devices).contains(device) { outOfRange += 1 }
                if let other = owner[device], other != worker { clashes += 1 }
                owner[device] = worker
                seen.insert(device)
                // The flow after every one of its devices was used comes back to the first.
                if flow == turns { #expect(device == FlowRow.device(worker: worker, flow: 0, inFlight: inFlight, devices: devices)) }
            }
            #expect(seen.count == turns, "worker \(worker) takes all \(turns) of its devices")
        }
        #expect(clashes == 0)
        #expect(outOfRange == 0)
        #expect(owner.count == turns * inFlight)
    }

    @Test("with as many devices as workers each keeps its own; with fewer, a worker keeps device worker % devices")
    func ownDevice() {
        for flow in 0..<5 {
            #expect(FlowRow.device(worker: 7, flow: flow, inFlight: 16, devices: 16) == 7)
            #expect(FlowRow.device(worker: 7, flow: flow, inFlight: 16, devices: 4) == 3)
        }
    }
}
