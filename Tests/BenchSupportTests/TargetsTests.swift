@testable import BenchSupport
import Testing

/// The floor-unit targets: a login's cost divided by the run's Mutex floor.
@Suite("evaluateTargets: flow cost in Mutex floors")
struct FloorUnitTargetTests {
    /// A run whose providers' floor reads `providersFloor`, with logins at 1 and 1,024 in flight
    /// measured beside floors of `floorAtOne` and `floorAt1024`.
    static func report(providersFloor: Double, floorAtOne: Double?, floorAt1024: Double?, throughput: Double, cpuUs: Double, p50Us: Double) -> BenchReport {
        var report = sampleReport()
        report.floors = [FloorRow(name: "Mutex + dictionary lookup", threads: 1, nsPerOp: providersFloor, ops: 1_000)]
        let latency = Percentiles(p0: p50Us / 2, p25: p50Us, p50: p50Us, p75: p50Us, p90: p50Us, p99: p50Us * 2, p999: p50Us * 2, p100: p50Us * 3)
        report.flows = [
            FlowRow(scenario: "login", mode: "closed", inFlight: 1, offeredPerS: nil, throughputPerS: 1e6 / p50Us, completed: 1_000, errors: 0,
                    latencyUs: latency, cpuUsPerFlow: cpuUs, floorNs: floorAtOne),
            FlowRow(scenario: "login", mode: "closed", inFlight: 1_024, offeredPerS: nil, throughputPerS: throughput, completed: 10_000, errors: 0,
                    latencyUs: latency, cpuUsPerFlow: cpuUs, floorNs: floorAt1024),
        ]
        return report
    }

    static func target(_ name: String, in report: BenchReport) throws -> TargetRow {
        try #require(evaluateTargets(report, latency: .zero).first { $0.name == name })
    }

    static let cost = "login CPU cost at 1024 in flight, in Mutex floors"
    static let process = "login process CPU at 1024 in flight, in Mutex floors"
    /// Retired: a lone login is shown split into measured parts instead (``LoneLoginSplit``).
    static let p50 = "login p50 at 1 in flight, in Mutex floors"

    @Test("with every floor alike, a cost under the limit is met, in the floor beside the cell, and the detail has one unit")
    func steadyRun() throws {
        // 2 cores / 25,000 logins/s = 80 µs, / 64 ns = 1,250 floors.
        let report = Self.report(providersFloor: 62, floorAtOne: 63, floorAt1024: 64, throughput: 25_000, cpuUs: 76.8, p50Us: 60)
        let cost = try Self.target(Self.cost, in: report)
        #expect(abs(cost.value - 1_250) < 0.01)
        #expect(cost.met)
        #expect(!cost.detail.contains("lowest floor"))
        let process = try Self.target(Self.process, in: report)
        #expect(abs(process.value - 1_200) < 0.01)
        #expect(process.met)
        #expect(!evaluateTargets(report, latency: .zero).contains { $0.name == Self.p50 })
    }

    @Test("a cell measured in a slow phase, whose floor read far above the run's lowest, is not met on the slow floor alone")
    func slowPhase() throws {
        // 2 cores / 16,050 logins/s = 124.6 µs: 1,187 floors of the 105 ns beside the cell, but
        // 2,077 of the run's lowest floor, 60 ns.
        let report = Self.report(providersFloor: 60, floorAtOne: 64, floorAt1024: 105, throughput: 16_050, cpuUs: 117, p50Us: 132)
        let cost = try Self.target(Self.cost, in: report)
        #expect(abs(cost.value - 2e9 / 16_050 / 105) < 0.01, "the value stays in the floor beside the cell")
        #expect(cost.value <= 1_400)
        #expect(!cost.met)
        #expect(cost.detail.contains("2077 at the run's lowest floor, 60.0 ns"))
        let process = try Self.target(Self.process, in: report)
        #expect(process.value <= 1_400)
        #expect(!process.met)
    }

    @Test("a cost met at the run's lowest floor too is met, and a lower floor elsewhere in the run counts as the lowest")
    func metInBothUnits() throws {
        // 2 cores / 30,000 logins/s = 66.7 µs: 635 floors of 105 ns, 1,111 of 60 ns (the 1-in-flight cell's).
        let report = Self.report(providersFloor: 70, floorAtOne: 60, floorAt1024: 105, throughput: 30_000, cpuUs: 60, p50Us: 50)
        let cost = try Self.target(Self.cost, in: report)
        #expect(cost.met)
        #expect(cost.detail.contains("at the run's lowest floor, 60.0 ns"))
    }

    @Test("a value just under the limit that the run's lowest floor puts over it is not met, and the detail says why")
    func lowestFloorDecides() throws {
        // 2 cores / 22,167 logins/s = 90.2 µs: 1,386 floors of the 65.1 ns beside the cell, within a
        // tenth of the run's lowest floor, 62 ns, where it is 1,455.
        let report = Self.report(providersFloor: 62, floorAtOne: 64, floorAt1024: 65.1, throughput: 22_167, cpuUs: 80, p50Us: 60)
        let cost = try Self.target(Self.cost, in: report)
        #expect(cost.value <= 1_400)
        #expect(!cost.met)
        #expect(cost.detail.contains("1455 at the run's lowest floor, 62.0 ns"))
        // Met in both units, within a tenth: one unit, as before.
        let process = try Self.target(Self.process, in: report)
        #expect(process.met)
        #expect(!process.detail.contains("lowest floor"))
    }

    @Test("a report from before floors were measured beside the cells uses the providers' floor, judged as before")
    func olderReport() throws {
        let report = Self.report(providersFloor: 64, floorAtOne: nil, floorAt1024: nil, throughput: 25_000, cpuUs: 76.8, p50Us: 60)
        let cost = try Self.target(Self.cost, in: report)
        #expect(abs(cost.value - 1_250) < 0.01)
        #expect(cost.met)
        #expect(cost.detail.contains("providers' floor"))
        #expect(!cost.detail.contains("lowest floor"))
    }

    @Test("a lone login is no longer judged in floors; its µs target stays, and its p50 is split into the IDP, the hand-back and the engine")
    func loneLoginIsSplit() throws {
        var report = Self.report(providersFloor: 62, floorAtOne: 64, floorAt1024: 64, throughput: 25_000, cpuUs: 76.8, p50Us: 96)
        #expect(LoneLoginSplit(flows: report.flows) == nil, "without the IDP's work and the hand-back there is no split")
        report.flows[0].handBackUs = 32
        report.flows[0].idpUs = 40
        let targets = evaluateTargets(report, latency: .zero)
        #expect(!targets.contains { $0.name == Self.p50 })
        #expect(targets.contains { $0.name == "login p50 at 1 in flight" })
        let split = try #require(LoneLoginSplit(flows: report.flows))
        #expect(split.p50Us == 96)
        #expect(split.idpUs == 40)
        #expect(split.handBackUs == 32)
        #expect(split.engineUs == 24)
    }
}
