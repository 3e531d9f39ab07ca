@testable import BenchSupport
import Foundation
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

func sampleReport(nsPerCall: Double = 100, throughput: Double = 5_000, p99: Double = 900) -> BenchReport {
    let latency = Percentiles(p0: 200, p25: 250, p50: 300, p75: 350, p90: 500, p99: p99, p999: 1_500, p100: 2_000)
    return BenchReport(
        machine: Machine(cores: 2, os: "Linux", swift: "6.3", date: "2026-11-22T00:00:00Z"),
        settings: Settings(secondsPerCell: 0.1, latencyMs: 0, seed: 1, sections: ["providers", "flows"], threads: [1, 2], inFlight: [1, 16], quick: false),
        providers: [
            ProviderRow(strategy: "CredentialStore", kind: "product", recommended: true, threads: 1, nsPerCall: nsPerCall, calls: 1_000),
            ProviderRow(strategy: "CredentialStore", kind: "product", recommended: true, threads: 2, nsPerCall: nsPerCall * 0.7, calls: 2_000),
            ProviderRow(strategy: "NSLock store, \"quoted\"", kind: "peer", recommended: false, threads: 1, nsPerCall: 150, calls: 900),
        ],
        floors: [FloorRow(name: "Mutex + dictionary lookup", threads: 1, nsPerOp: 80, ops: 5_000)],
        flows: [
            FlowRow(scenario: "login", mode: "closed", inFlight: 1, offeredPerS: nil, throughputPerS: throughput, completed: 10_000, errors: 0, latencyUs: latency),
            FlowRow(scenario: "login", mode: "closed", inFlight: 16, offeredPerS: nil, throughputPerS: throughput * 2, completed: 20_000, errors: 0, latencyUs: latency),
            FlowRow(scenario: "login", mode: "open", inFlight: 2, offeredPerS: 2_500, throughputPerS: 2_500, completed: 5_000, errors: 0, latencyUs: latency),
        ],
        contention: [ContentionRow(lock: "IdpServer.state", acquisitions: 100, contended: 5, contendedShare: 0.05, waitMs: 1.5)],
        memory: MemoryRow(parkedFlows: 100_000, bytesPerFlow: 1_800, threads: 30, poolLimit: 256, rssBeforeBytes: 1, rssParkedBytes: 2),
        targets: [TargetRow(name: "store vs floor", value: 1.25, limit: 1.5, met: true, detail: "100 vs 80 ns")]
    )
}

@Suite("BenchReport")
struct BenchReportTests {
    @Test("JSON round-trips and uses the documented snake_case keys")
    func jsonRoundTrip() throws {
        let report = sampleReport()
        let json = report.json()
        #expect(try BenchReport.decode(from: Data(json.utf8)) == report)
        for key in ["\"schema\" : \"idp-bench/1\"", "\"ns_per_call\"", "\"ns_per_op\"", "\"latency_us\"", "\"p999\"", "\"throughput_per_s\"",
                    "\"in_flight\"", "\"bytes_per_flow\"", "\"parked_flows\"", "\"recommended\"", "\"kind\"", "\"cores\"", "\"swift\"", "\"os\""] {
            #expect(json.contains(key), "missing \(key)")
        }
        #expect(!json.contains("nsPerCall"))
    }

    @Test("a figure that is not a finite number is written as a string and read back, instead of failing the encoding")
    func nonFiniteFigures() throws {
        let report = sampleReport(nsPerCall: .infinity, throughput: .nan)
        let json = report.json()
        #expect(json.contains("\"ns_per_call\" : \"inf\"") && json.contains("\"nan\""), "\(json)")
        let back = try BenchReport.decode(from: Data(json.utf8))
        #expect(back.providers[0].nsPerCall == .infinity && back.flows[0].throughputPerS.isNaN)
    }

    @Test("a flow row's CPU per flow is written as cpu_us_per_flow, and a report from before it existed still reads, without it")
    func cpuPerFlowIsAnAddedField() throws {
        var report = sampleReport()
        report.flows[0].cpuUsPerFlow = 312.5
        let json = report.json()
        #expect(json.contains("\"cpu_us_per_flow\" : 312.5"))
        #expect(try BenchReport.decode(from: Data(json.utf8)) == report)

        let old = sampleReport().json()
        #expect(!old.contains("cpu_us_per_flow"))
        #expect(try BenchReport.decode(from: Data(old.utf8)).flows.allSatisfy { $0.cpuUsPerFlow == nil })
    }

    @Test("a 1-in-flight row's hand-back is written as hand_back_us and named in the flows table's note; older reports read without it")
    func handBackIsAnAddedField() throws {
        var report = sampleReport()
        report.flows[0].handBackUs = 27.5
        let json = report.json()
        #expect(json.contains("\"hand_back_us\" : 27.5"))
        #expect(try BenchReport.decode(from: Data(json.utf8)) == report)
        #expect(render(report, as: .text).contains("measured beside the cell (p50): login 27.5 µs."))

        let old = sampleReport()
        #expect(!old.json().contains("hand_back_us"))
        #expect(try BenchReport.decode(from: Data(old.json().utf8)).flows.allSatisfy { $0.handBackUs == nil })
        #expect(!render(old, as: .text).contains("wake-up"))
    }

    @Test("a contention row's hold times and acquisitions per login are written and shown; older reports read without them")
    func holdTimesAreAddedFields() throws {
        var report = sampleReport()
        report.contention = [ContentionRow(lock: "IdpServer.grants", acquisitions: 20_000, contended: 40, contendedShare: 0.002, waitMs: 3,
                                           perLogin: 2, holdP50Us: 0.31, holdP99Us: 4.1, holdMaxUs: 612)]
        let json = report.json()
        for key in ["\"per_login\" : 2", "\"hold_p50_us\" : 0.31", "\"hold_p99_us\" : 4.1", "\"hold_max_us\" : 612"] {
            #expect(json.contains(key), "missing \(key)")
        }
        #expect(try BenchReport.decode(from: Data(json.utf8)) == report)
        let text = render(report, as: .text)
        #expect(text.contains("held p99 µs"))
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("IdpServer.grants") })
        for cell in ["yes", "2.00", "0.31", "4.10", "612"] { #expect(line.contains(cell), "the row lacks \(cell): \(line)") }
        #expect(render(report, as: .csv).contains("contention,IdpServer.grants,,,,hold_p99_us,4.1"))

        let old = sampleReport()
        #expect(!old.json().contains("hold_p99_us"))
        #expect(try BenchReport.decode(from: Data(old.json().utf8)).contention.allSatisfy { $0.holdP99Us == nil && $0.perLogin == nil })
        let oldLine = try #require(render(old, as: .text).split(separator: "\n").first { $0.hasPrefix("IdpServer.state") })
        #expect(oldLine.split(separator: " ").suffix(3) == ["-", "-", "-"])
    }

    @Test("the contention run's preemptions are weighed against the flow-path locks' hold time, written, read and shown beside the long holds")
    func preemptionRecord() throws {
        var report = sampleReport()
        report.contention = [
            ContentionRow(lock: "IdpServer.grants", acquisitions: 20_000, contended: 40, contendedShare: 0.002, waitMs: 3, perLogin: 2,
                          holdP50Us: 0.31, holdP99Us: 4.1, holdMaxUs: 612, longHolds: 7, shortHoldMs: 30),
            ContentionRow(lock: "IdpSdk.Flow", acquisitions: 80_000, contended: 0, contendedShare: 0, waitMs: 0, perLogin: 8,
                          holdP50Us: 0.2, holdP99Us: 0.5, holdMaxUs: 900, longHolds: 5, shortHoldMs: 20),
            // Not on the flow path: neither its hold time nor its long holds count.
            ContentionRow(lock: "IdpSdk.TimerDriver", acquisitions: 6, contended: 0, contendedShare: 0, waitMs: 0, perLogin: 0.001,
                          holdP50Us: 1, holdP99Us: 30, holdMaxUs: 300, longHolds: 1, shortHoldMs: 400),
        ]
        let record = PreemptionRecord(rows: report.contention, involuntarySwitches: 1_000, cpuMs: 2_000)
        #expect(record.flowPathHoldMs == 50 && record.longHolds == 12)
        // 1,000 preemptions, flow-path locks held 50 ms of 2,000 ms of CPU time: 25 expected.
        #expect(record.expectedPreemptedHolds == 25)
        #expect(PreemptionRecord(involuntarySwitches: 9, cpuMs: 0, flowPathHoldMs: 1, longHolds: 0).expectedPreemptedHolds == 0)
        report.preemption = record
        let json = report.json()
        for key in ["\"contention_preemption\"", "\"involuntary_switches\" : 1000", "\"expected_preempted_holds\" : 25", "\"long_holds\" : 7", "\"short_hold_ms\" : 30"] {
            #expect(json.contains(key), "missing \(key)")
        }
        #expect(try BenchReport.decode(from: Data(json.utf8)) == report)
        let text = render(report, as: .text)
        #expect(text.contains("held ≥ 100 µs"))
        #expect(text.contains("off their cores 1000 times (involuntary context switches) in 2,000 ms of CPU time, 2.5% of which the flow-path locks were held (holds under 100 µs): had they fallen at random moments of running time, about 25.0 would have landed inside a flow-path hold"))
        #expect(text.contains("the profiler counted 12 flow-path holds of 100 µs or more."))
        // More long holds than preemptions could have made: some were long while their threads ran.
        report.preemption = PreemptionRecord(rows: report.contention, involuntarySwitches: 400, cpuMs: 2_000)
        #expect(report.preemption?.expectedPreemptedHolds == 10)
        #expect(render(report, as: .text).contains("the profiler counted 12 flow-path holds of 100 µs or more, more than preemption can account for: some holds were long while their threads ran."))
        report.preemption = record
        #expect(render(report, as: .csv).contains("contention,IdpServer.grants,,,,long_holds,7"))

        let old = sampleReport()
        #expect(!old.json().contains("contention_preemption") && !old.json().contains("long_holds"))
        let read = try BenchReport.decode(from: Data(old.json().utf8))
        #expect(read.preemption == nil && read.contention.allSatisfy { $0.longHolds == nil && $0.shortHoldMs == nil })
        #expect(!render(old, as: .text).contains("involuntary"))
    }

    @Test("another schema, a non-object and a missing key are refused with a message that names the problem")
    func decodeErrors() {
        #expect(throws: BenchReportError("schema is 'idp-bench/0', expected 'idp-bench/1'")) {
            try BenchReport.decode(from: Data(#"{"schema": "idp-bench/0"}"#.utf8))
        }
        #expect(throws: BenchReportError("not an idp-bench JSON report (not a JSON object)")) { try BenchReport.decode(from: Data("[1]".utf8)) }
        #expect(throws: BenchReportError("schema is 'missing', expected 'idp-bench/1'")) { try BenchReport.decode(from: Data("{}".utf8)) }
        let withoutFlows = sampleReport().json().replacingOccurrences(of: "\"flows\"", with: "\"flowz\"")
        #expect(throws: BenchReportError("missing key 'flows' at ")) { try BenchReport.decode(from: Data(withoutFlows.utf8)) }
    }

    @Test("text and markdown name every strategy, floor and section; empty sections are left out")
    func textAndMarkdown() {
        let report = sampleReport()
        let text = render(report, as: .text)
        for name in ["CredentialStore (recommended)", "NSLock store", "floor: Mutex + dictionary lookup", "IdpServer.state", "parked flows", "store vs floor", "open @2,500/s"] {
            #expect(text.contains(name), "text lacks \(name)")
        }
        let markdown = render(report, as: .markdown)
        #expect(markdown.contains("### provideCredentials hot path"))
        #expect(markdown.contains("| strategy | 1 thr | 2 thr |"))
        var empty = report
        empty.contention = []
        empty.memory = nil
        #expect(!render(empty, as: .text).contains("lock contention"))
        #expect(!render(empty, as: .markdown).contains("memory"))
    }

    @Test("CSV is one tidy table with RFC 4180 quoting")
    func csvOutput() {
        let lines = render(sampleReport(), as: .csv).split(separator: "\n").map(String.init)
        #expect(lines.first == "section,name,kind,threads,in_flight,metric,value")
        #expect(lines.contains("providers,CredentialStore,\"product,recommended\",1,,ns_per_call,100"))
        #expect(lines.contains("providers,\"NSLock store, \"\"quoted\"\"\",peer,1,,ns_per_call,150"))
        #expect(lines.contains("flows,login closed,,,16,throughput_per_s,10000"))
        #expect(lines.contains("flows,login closed,,,1,latency_us_p999,1500"))
        #expect(csvField("plain") == "plain")
        #expect(csvField("a\nb") == "\"a\nb\"")
    }

    @Test("numbers read well: one decimal under 100, thousands grouped above")
    func numberFormatting() {
        #expect(formatNumber(3.14159) == "3.1")
        #expect(formatNumber(1_234_567.4) == "1,234,567")
        #expect(formatNumber(-12_345) == "-12,345")
        #expect(formatNumber(100) == "100")
        #expect(formatRatio(0.6234) == "0.62")
        #expect(formatRatio(1.5) == "1.50")
        #expect(formatRatio(5_754) == "5,754")
    }

    #if canImport(FoundationXML) || canImport(Darwin)
    @Test("the SVG is well-formed XML with one line per strategy and floor and one per scenario percentile")
    func svgIsWellFormed() throws {
        let svg = renderSVG(sampleReport())
        final class Counter: NSObject, XMLParserDelegate {
            var polylines = 0
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
                if name == "polyline" { polylines += 1 }
            }
        }
        let parser = XMLParser(data: Data(svg.utf8))
        let counter = Counter()
        parser.delegate = counter
        #expect(parser.parse(), "SVG is not well-formed: \(parser.parserError.map { "\($0)" } ?? "")")
        // Two strategies and one floor; login p50 and p99 (the open loop is not drawn).
        #expect(counter.polylines == 5)
        #expect(svg.contains("NSLock store, &quot;quoted&quot;"))
        var empty = sampleReport()
        empty.flows = []
        #expect(renderSVG(empty).contains("no data"))
    }
    #endif
}

@Suite("Comparison")
struct ComparisonTests {
    @Test("identical reports show no regression")
    func identical() {
        let comparison = Comparison.compare(base: sampleReport(), new: sampleReport(), thresholdPercent: 10)
        #expect(!comparison.regressed)
        #expect(comparison.changes.allSatisfy { $0.verdict == .unchanged })
        #expect(comparison.render().contains("0 regressed"))
    }

    @Test("a figure 20% slower regresses at a 10% threshold, 5% slower does not, and more throughput is an improvement")
    func thresholds() {
        let slower = Comparison.compare(base: sampleReport(), new: sampleReport(nsPerCall: 120), thresholdPercent: 10)
        #expect(slower.regressed)
        #expect(slower.changes.first { $0.figure == "providers: CredentialStore @1 threads: ns_per_call" }?.verdict == .regressed)
        #expect(!Comparison.compare(base: sampleReport(), new: sampleReport(nsPerCall: 105), thresholdPercent: 10).regressed)
        let faster = Comparison.compare(base: sampleReport(), new: sampleReport(throughput: 6_000), thresholdPercent: 10)
        #expect(!faster.regressed)
        #expect(faster.changes.first { $0.figure == "flows: login closed @1 in flight: throughput_per_s" }?.verdict == .improved)
        let lessThroughput = Comparison.compare(base: sampleReport(), new: sampleReport(throughput: 4_000), thresholdPercent: 10)
        #expect(lessThroughput.regressed)
        #expect(Comparison.compare(base: sampleReport(), new: sampleReport(p99: 1_000), thresholdPercent: 10).regressed)
        #expect(!Comparison.compare(base: sampleReport(), new: sampleReport(p99: 1_000), thresholdPercent: 20).regressed)
        var cheaper = sampleReport(), costlier = sampleReport()
        cheaper.flows[0].cpuUsPerFlow = 60
        costlier.flows[0].cpuUsPerFlow = 75
        let cpu = Comparison.compare(base: cheaper, new: costlier, thresholdPercent: 10)
        #expect(cpu.changes.first { $0.figure == "flows: login closed @1 in flight: cpu µs per flow" }?.verdict == .regressed)
        #expect(!Comparison.compare(base: cheaper, new: cheaper, thresholdPercent: 10).regressed)
    }

    @Test("rows in one report only are listed but are no regression")
    func unmatchedRows() {
        var fewer = sampleReport()
        fewer.providers.removeLast()
        let comparison = Comparison.compare(base: sampleReport(), new: fewer, thresholdPercent: 10)
        #expect(!comparison.regressed)
        #expect(comparison.changes.contains { $0.verdict == .onlyInBase && $0.figure.contains("NSLock") })
        #expect(Comparison.compare(base: fewer, new: sampleReport(), thresholdPercent: 10).changes.contains { $0.verdict == .onlyInNew })
    }

    /// Reports whose `CredentialStore @1 threads` cell measured each of `values` ns per call.
    private func runs(_ values: [Double]) -> [BenchReport] { values.map { sampleReport(nsPerCall: $0) } }

    private func storeCell(_ comparison: Comparison) -> Comparison.Change? {
        comparison.changes.first { $0.figure == "providers: CredentialStore @1 threads: ns_per_call" }
    }

    @Test("several runs a side are compared by their medians, with each side's range")
    func mediansAndRanges() throws {
        let comparison = Comparison.compare(bases: runs([100, 96, 104]), news: runs([130, 120, 126, 124]), thresholdPercent: 10)
        let cell = try #require(storeCell(comparison))
        #expect(cell.baseSample == Comparison.Sample([96, 100, 104]))
        #expect(cell.base == 100 && cell.new == 125)
        #expect(cell.baseSample?.range == 96...104 && cell.newSample?.range == 120...130)
        #expect(cell.newSample?.runs == 4)
        #expect(cell.changePercent == 25)
        #expect(cell.verdict == .regressed)
        #expect(comparison.regressed)
        let text = comparison.render()
        #expect(text.contains("3 base and 4 new runs"))
        #expect(text.contains("96–104") && text.contains("120–130"))
        #expect(Comparison.Sample([]) == nil)
    }

    @Test("a median moved past the threshold is no regression while a new run is no worse than a base run, nor an improvement while one is no better")
    func overlappingRunsAreNotVerdicts() throws {
        // The medians are 20% apart, but one base run (130) is slower than a new one (118).
        let noisy = Comparison.compare(bases: runs([100, 130, 90]), news: runs([120, 118, 125]), thresholdPercent: 10)
        #expect(try #require(storeCell(noisy)).verdict == .overlapping)
        #expect(!noisy.regressed)
        #expect(noisy.render().contains("moved past it with the runs overlapping"))
        let faster = Comparison.compare(bases: runs([120, 118, 125]), news: runs([100, 130, 90]), thresholdPercent: 10)
        #expect(try #require(storeCell(faster)).verdict == .overlapping)
        let clearlyFaster = Comparison.compare(bases: runs([120, 118, 125]), news: runs([100, 104, 96]), thresholdPercent: 10)
        #expect(try #require(storeCell(clearlyFaster)).verdict == .improved)
        // Apart, but within the threshold: unchanged.
        let close = Comparison.compare(bases: runs([100, 101, 102]), news: runs([105, 106, 107]), thresholdPercent: 10)
        #expect(try #require(storeCell(close)).verdict == .unchanged)
        // Less throughput in every new run is a regression; more in one of them is not.
        let slower = Comparison.compare(bases: [sampleReport(throughput: 5_000), sampleReport(throughput: 5_200)],
                                        news: [sampleReport(throughput: 4_000), sampleReport(throughput: 4_100)], thresholdPercent: 10)
        #expect(slower.changes.first { $0.figure == "flows: login closed @1 in flight: throughput_per_s" }?.verdict == .regressed)
        let mixed = Comparison.compare(bases: [sampleReport(throughput: 5_000), sampleReport(throughput: 5_200)],
                                       news: [sampleReport(throughput: 3_000), sampleReport(throughput: 5_100)], thresholdPercent: 10)
        #expect(mixed.changes.first { $0.figure == "flows: login closed @1 in flight: throughput_per_s" }?.verdict == .overlapping)
    }

    /// `sampleReport()` with a flow-path lock, a lock taken now and then, and one scaling row.
    private func reportWithLocks(holdP99Us: Double, foundHeld: Double = 0.01, rareHoldP99Us: Double = 1, storeAtTwoCores: Double = 40,
                                 openRate: Double = 2_500) -> BenchReport {
        var report = sampleReport()
        report.contention = [
            ContentionRow(lock: "IdpServer.grants", acquisitions: 70_000, contended: 700, contendedShare: foundHeld, waitMs: 3, perLogin: 7,
                          holdP50Us: 0.8, holdP99Us: holdP99Us, holdMaxUs: 90),
            ContentionRow(lock: "IdpSdk.TimerDriver", acquisitions: 12, contended: 0, contendedShare: 0, waitMs: 0, perLogin: 0.001,
                          holdP50Us: 0.5, holdP99Us: rareHoldP99Us, holdMaxUs: 2),
        ]
        report.scaling = [ScalingRow(cores: 2, flows: [ScalingFlow(scenario: "login", inFlight: 1_024, throughputPerS: 20_000)], loneLoginP50Us: 75,
                                     providers: [ScalingProvider(name: ScalingProvider.credentialStore, nsPerCall: storeAtTwoCores)])]
        report.flows[2].offeredPerS = openRate
        return report
    }

    @Test("a flow-path lock's hold times and share found held are compared; a lock taken now and then is not")
    func contentionFigures() {
        let base = reportWithLocks(holdP99Us: 2)
        let longer = Comparison.compare(base: base, new: reportWithLocks(holdP99Us: 3), thresholdPercent: 10)
        #expect(longer.regressed)
        #expect(longer.changes.first { $0.figure == "contention: IdpServer.grants: hold p99 µs" }?.verdict == .regressed)
        let moreHeld = Comparison.compare(base: base, new: reportWithLocks(holdP99Us: 2, foundHeld: 0.02), thresholdPercent: 10)
        #expect(moreHeld.changes.first { $0.figure == "contention: IdpServer.grants: found_held_share" }?.verdict == .regressed)
        let rare = Comparison.compare(base: base, new: reportWithLocks(holdP99Us: 2, rareHoldP99Us: 50), thresholdPercent: 10)
        #expect(!rare.regressed)
        #expect(!rare.changes.contains { $0.figure.contains("TimerDriver") })
        // A report from before hold times compares its share found held and lists the rest as new.
        var older = base
        older.contention[0].holdP50Us = nil
        older.contention[0].holdP99Us = nil
        let fromOlder = Comparison.compare(base: older, new: base, thresholdPercent: 10)
        #expect(fromOlder.changes.first { $0.figure == "contention: IdpServer.grants: hold p99 µs" }?.verdict == .onlyInNew)
        #expect(fromOlder.changes.first { $0.figure == "contention: IdpServer.grants: found_held_share" }?.verdict == .unchanged)
    }

    @Test("the scaling section is compared by core count, and an open loop by scenario whatever rate each run offered")
    func scalingAndOpenLoop() {
        let base = reportWithLocks(holdP99Us: 2, openRate: 2_500)
        let comparison = Comparison.compare(base: base, new: reportWithLocks(holdP99Us: 2, storeAtTwoCores: 60, openRate: 2_600), thresholdPercent: 10)
        #expect(comparison.changes.first { $0.figure == "scaling: CredentialStore @2 cores: ns_per_call" }?.verdict == .regressed)
        #expect(comparison.changes.first { $0.figure == "scaling: login @1024 in flight @2 cores: throughput_per_s" }?.verdict == .unchanged)
        #expect(comparison.changes.first { $0.figure == "scaling: lone login @2 cores: p50 µs" }?.verdict == .unchanged)
        #expect(comparison.changes.first { $0.figure == "flows: login open: p99 µs" }?.verdict == .unchanged)
        #expect(!comparison.changes.contains { $0.verdict == .onlyInBase || $0.verdict == .onlyInNew })
    }
}
