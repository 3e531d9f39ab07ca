@testable import BenchSupport
import Foundation
import Testing

/// Scaling rows at `cores`, each cell's throughput `perCore(cores)`, and provider cells whose
/// aggregate cost is `cost(cores)`.
func scalingRows(_ cores: [Int], throughput: (Int) -> Double = { Double($0) * 10_000 }, cost: (Int) -> Double = { 100 / Double($0) },
                 loneP50: (Int) -> Double = { _ in 80 }, lockShare: Double? = 0.01) -> [ScalingRow] {
    cores.map { count in
        ScalingRow(cores: count,
                   flows: scalingFlowCells.map { ScalingFlow(scenario: $0.scenario, inFlight: $0.inFlight, throughputPerS: throughput(count)) },
                   loneLoginP50Us: loneP50(count),
                   providers: [ScalingProvider(name: ScalingProvider.nothingShared, nsPerCall: cost(count)),
                               ScalingProvider(name: ScalingProvider.credentialStore, nsPerCall: cost(count) * 2)],
                   lock: count == cores.max() ? lockShare.map { ScalingLock(label: "IdpServer.grants", contendedShare: $0, acquisitions: 10_000) } : nil)
    }
}

@Suite("Scaling: speed-up, efficiency and the scaling targets")
struct ScalingTargetTests {
    static func names(_ targets: [TargetRow]) -> [String] { targets.map(\.name) }

    @Test("speed-up is throughput over the 1-core figure, efficiency is speed-up over cores, a cost's speed-up is the 1-core cost over this one")
    func arithmetic() {
        #expect(ScalingMath.speedUp(18_000, over: 10_000) == 1.8)
        #expect(ScalingMath.efficiency(1.8, cores: 2) == 0.9)
        #expect(ScalingMath.costSpeedUp(25, over: 100) == 4)
        #expect(ScalingMath.speedUp(nil, over: 10_000) == nil)
        #expect(ScalingMath.speedUp(5, over: 0) == nil)
        #expect(ScalingMath.costSpeedUp(0, over: 100) == nil)
    }

    @Test("on 2 cores no scaling target is evaluated, and each one left out says it needs more cores than the machine has")
    func twoCores() {
        let rows = scalingRows([1, 2])
        #expect(evaluateScalingTargets(rows).isEmpty)
        let left = unevaluatedScalingTargets(rows)
        #expect(left.count == 6)
        #expect(left.contains { $0.name.contains("efficiency at 8 cores") && $0.reason == "needs ≥ 8 cores; this machine has 2" })
        #expect(left.contains { $0.name.contains("lone login") && $0.reason == "needs ≥ 4 cores; this machine has 2" })
        #expect(left.contains { $0.name.contains("16 cores / 2") && $0.reason == "needs ≥ 16 cores; this machine has 2" })
        #expect(unevaluatedScalingTargets([]).isEmpty)
    }

    @Test("on 8 cores efficiency, the lock and the lone login are judged; the 16-core targets are not")
    func eightCores() throws {
        // 8 cores at 7.2× the 1-core throughput: efficiency 0.9.
        let rows = scalingRows([1, 2, 4, 8], throughput: { $0 == 8 ? 72_000 : Double($0) * 10_000 }, loneP50: { $0 == 8 ? 100 : 80 }, lockShare: 0.03)
        let targets = evaluateScalingTargets(rows)
        let efficiency = try #require(targets.first { $0.name == "login efficiency at 1024 in flight, 8 cores" })
        #expect(abs(efficiency.value - 0.9) < 1e-9)
        #expect(efficiency.met)
        #expect(targets.filter { $0.name.contains("efficiency") }.count == 3)
        let lock = try #require(targets.first { $0.name == "flow-path lock held at 8 cores" })
        #expect(lock.value == 3)
        #expect(!lock.met)
        #expect(lock.detail.contains("IdpServer.grants"))
        let lone = try #require(targets.first { $0.name == "lone login p50 at 8 cores / 2 cores" })
        #expect(lone.value == 1.25)
        #expect(!lone.met)
        #expect(!Self.names(targets).contains { $0.contains("16") })
        #expect(unevaluatedScalingTargets(rows).map(\.reason).allSatisfy { $0 == "needs ≥ 16 cores; this machine has 8" })
    }

    @Test("on 16 cores throughput at 16 over 2, CredentialStore's cost and the nothing-shared floor are judged; efficiency at 8 is not")
    func sixteenCores() throws {
        // Throughput 14,000 per core beyond 2: 16 cores / 2 = 7.47; costs fall 16× from 1 thread.
        let rows = scalingRows([1, 2, 4, 8, 16], throughput: { $0 <= 2 ? Double($0) * 15_000 : Double($0) * 14_000 })
        let targets = evaluateScalingTargets(rows)
        let login = try #require(targets.first { $0.name == "login throughput at 4096 in flight, 16 cores / 2" })
        #expect(abs(login.value - 224_000.0 / 30_000) < 1e-9)
        #expect(login.met)
        #expect(targets.contains { $0.name == "activation throughput at 1024 in flight, 16 cores / 2" })
        let store = try #require(targets.first { $0.name == "CredentialStore ns/call at 16 threads / 1 thread" })
        #expect(abs(store.value - 1.0 / 16) < 1e-9)
        #expect(store.met)
        let floor = try #require(targets.first { $0.name == "floor: nothing shared, speed-up at 16 threads" })
        #expect(abs(floor.value - 16) < 1e-9)
        #expect(floor.met)
        #expect(!targets.contains { $0.name.contains("efficiency") })
        #expect(targets.contains { $0.name == "flow-path lock held at 16 cores" && $0.met })
    }

    @Test("a scaling target whose figures were not measured is left out, and evaluateTargets includes the measured ones")
    func onlyMeasured() {
        var rows = scalingRows([1, 2, 4, 8, 16])
        rows[4].providers = []
        rows[4].lock = nil
        let targets = evaluateScalingTargets(rows)
        #expect(!targets.contains { $0.name.contains("CredentialStore") || $0.name.contains("nothing shared") || $0.name.contains("lock") })
        var report = sampleReport()
        report.scaling = rows
        #expect(evaluateTargets(report, latency: .zero).contains { $0.name == "login throughput at 1024 in flight, 16 cores / 2" })
    }

    @Test("core counts are the powers of two up to every allowed core, and the maximum when it is not one")
    func coreCounts() {
        #expect(scalingCoreCounts(allowed: 1) == [1])
        #expect(scalingCoreCounts(allowed: 2) == [1, 2])
        #expect(scalingCoreCounts(allowed: 6) == [1, 2, 4, 6])
        #expect(scalingCoreCounts(allowed: 16) == [1, 2, 4, 8, 16])
        #expect(scalingCoreCounts(allowed: 0).isEmpty)
    }
}

@Suite("Scaling: report, rendering and RESULTS.md")
struct ScalingReportTests {
    static func report() -> BenchReport {
        var report = sampleReport()
        report.scaling = scalingRows([1, 2], throughput: { $0 == 1 ? 10_000 : 18_000 })
        report.loneLoginSplit = LoneLoginSplit(p50Us: 100, idpUs: 45, handBackUs: 30)
        return report
    }

    @Test("scaling rows and the lone login split round-trip through JSON in snake_case")
    func jsonRoundTrip() throws {
        var report = Self.report()
        for index in report.scaling.indices {
            report.scaling[index].physicalCores = report.scaling[index].cores
            report.scaling[index].loneLoginBeforeP50Us = 50
            report.scaling[index].loneLoginBeforeParts = LoginPartsFigures(logins: 10, loginP50Us: 50, parts: [], kinds: [], callerThreads: 2, callerCPUs: 1)
        }
        let json = report.json()
        for key in ["\"scaling\"", "\"physical_cores\" : 2", "\"lone_login_before_p50_us\" : 50", "\"caller_threads\" : 2", "\"caller_cpus\" : 1", "\"lone_login_p50_us\"", "\"contended_share\"", "\"lone_login_split\"", "\"engine_us\" : 25", "\"idp_us\" : 45"] {
            #expect(json.contains(key), "missing \(key)")
        }
        #expect(try BenchReport.decode(from: Data(json.utf8)) == report)
    }

    @Test("a report from before the scaling section, without its keys, still reads, with no scaling rows and no split")
    func oldReportDecodes() throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(Self.report().json().utf8)) as? [String: Any])
        var old = object
        old["scaling"] = nil
        old["lone_login_split"] = nil
        let decoded = try BenchReport.decode(from: JSONSerialization.data(withJSONObject: old))
        #expect(decoded.scaling.isEmpty)
        #expect(decoded.loneLoginSplit == nil)
        #expect(decoded.flows == Self.report().flows)
    }

    @Test("text, markdown and CSV show the scaling table with speed-up and efficiency, and say which targets were not evaluated and why")
    func rendering() {
        let report = Self.report()
        let text = render(report, as: .text)
        #expect(text.contains("scaling: the same cells pinned to 1 … 2 cores"))
        #expect(text.contains("login, 1024 in flight: flows/s"))
        #expect(text.contains("×1.80 / 0.90"))
        #expect(text.contains("floor: nothing shared: ns/call (aggregate)"))
        #expect(text.contains("IdpServer.grants, 1.00% of 10000 acquisitions"))
        #expect(text.contains("needs ≥ 8 cores; this machine has 2"))
        #expect(text.contains("not evaluated"))
        #expect(text.contains("lone login split"))
        #expect(text.contains("the engine's share"))
        let markdown = render(report, as: .markdown)
        #expect(markdown.contains("| measure | 1 core | 2 cores |"))
        let csv = render(report, as: .csv)
        #expect(csv.contains("scaling,login closed,,2,1024,efficiency,0.9"))
        #expect(csv.contains("scaling,login closed,,2,1024,speed_up,1.8"))
        #expect(csv.contains("lone_login_split,login,,,1,engine_us,25"))
        #expect(!render(sampleReport(), as: .text).contains("scaling"))
        #expect(!text.contains("before the heavy cells"), "a report without the first lone login shows no row for it")
        #expect(!text.contains("code back on"))
    }

    @Test("the lone login before the heavy cells, and the threads and CPUs the code came back on, get rows of their own")
    func loneLoginBeforeAndAfter() {
        var report = Self.report()
        report.scaling[1].loneLoginBeforeP50Us = 41.5
        report.scaling[1].loneLoginBeforeParts = LoginPartsFigures(logins: 10, loginP50Us: 41.5, parts: [],
                                                                   kinds: [LoginPart(name: "hand-off", kind: "hand-off", us: 9.5),
                                                                           LoginPart(name: "idp", kind: "idp", us: 17.5)], callerThreads: 2, callerCPUs: 1)
        report.scaling[1].loneLoginParts = LoginPartsFigures(logins: 10, loginP50Us: 80, parts: [],
                                                             kinds: [LoginPart(name: "hand-off", kind: "hand-off", us: 30)], callerThreads: 16, callerCPUs: 15)
        let text = render(report, as: .text)
        #expect(text.contains("login p50 at 1 in flight before the heavy cells, µs"))
        #expect(text.contains("41.5"))
        #expect(text.contains("9.5"))
        #expect(text.contains("17.5"), "the lone login before the heavy cells is split by kind, as the one after them")
        #expect(text.contains("2 threads / 1 CPU"))
        #expect(text.contains("16 threads / 15 CPUs"))
    }

    @Test("the lone login target's detail holds the lone logins before the heavy cells, the hand-offs and where the code came back")
    func loneLoginTargetDetail() throws {
        var rows = scalingRows([1, 2, 4], loneP50: { $0 == 4 ? 120 : 60 })
        rows[1].loneLoginBeforeP50Us = 55
        rows[2].loneLoginBeforeP50Us = 58
        rows[1].loneLoginParts = LoginPartsFigures(logins: 1, loginP50Us: 60, parts: [], kinds: [LoginPart(name: "hand-off", kind: "hand-off", us: 20)])
        rows[2].loneLoginParts = LoginPartsFigures(logins: 1, loginP50Us: 120, parts: [], kinds: [LoginPart(name: "hand-off", kind: "hand-off", us: 75)],
                                                   callerThreads: 4, callerCPUs: 4)
        let lone = try #require(evaluateScalingTargets(rows).first { $0.name == "lone login p50 at 4 cores / 2 cores" })
        #expect(!lone.met)
        #expect(lone.detail.contains("120 vs 60.0 µs, at most, after the heavy cells"))
        #expect(lone.detail.contains("before them 58.0 vs 55.0 µs"))
        #expect(lone.detail.contains("hand-offs after them 75.0 vs 20.0 µs"))
        #expect(lone.detail.contains("the code back on 4 threads / 4 CPUs at 4 cores"))
    }

    @Test("RESULTS.md holds the scaling table and lists the scaling targets not evaluated, with the reason")
    func results() {
        let document = renderResults(Self.report())
        #expect(document.contains("### scaling: the same cells pinned to 1 … 2 cores"))
        #expect(document.contains("### scaling targets not evaluated"))
        #expect(document.contains("- efficiency at 8 cores ≥ 0.85: needs ≥ 8 cores; this machine has 2."))
        #expect(document.contains("### lone login split"))
        #expect(!renderResults(sampleReport()).contains("scaling targets not evaluated"))
    }

    #if canImport(FoundationXML) || canImport(Darwin)
    @Test("the SVG draws a third chart, speed-up against cores, only when the scaling section ran")
    func svg() {
        #expect(renderSVG(Self.report()).contains("Scaling: speed-up over 1 core against cores"))
        #expect(!renderSVG(sampleReport()).contains("Scaling:"))
    }
    #endif
}
