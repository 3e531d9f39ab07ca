import Foundation

/// How `idp-bench` prints its report.
public enum ReportFormat: String, CaseIterable, Sendable {
    /// Aligned plain-text tables.
    case text
    /// Markdown tables.
    case markdown
    /// The report's JSON, schema `"idp-bench/1"`.
    case json
    /// One tidy CSV table: a row per figure.
    case csv
}

/// The report in `format`.
/// - Parameters:
///   - report: The report to render.
///   - format: Text, Markdown, JSON or CSV.
/// - Returns: The rendered report.
public func render(_ report: BenchReport, as format: ReportFormat) -> String {
    switch format {
    case .json: report.json()
    case .csv: csv(report)
    case .text, .markdown: tables(report).map { $0.render(markdown: format == .markdown) }.joined(separator: "\n")
    }
}

/// A titled table of text cells; the first column is left-aligned, the others right-aligned.
struct Table {
    var title: String
    var header: [String]
    var rows: [[String]]
    var note: String?

    func render(markdown: Bool) -> String {
        var lines: [String] = []
        if markdown {
            lines.append("### \(title)\n")
            lines.append("| " + header.joined(separator: " | ") + " |")
            lines.append("|" + header.indices.map { $0 == 0 ? "---|" : "---:|" }.joined())
            for row in rows { lines.append("| " + row.joined(separator: " | ") + " |") }
        } else {
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
            func line(_ cells: [String]) -> String {
                cells.enumerated().map { column, cell in
                    let pad = String(repeating: " ", count: widths[column] - cell.count)
                    return column == 0 ? cell + pad : pad + cell
                }.joined(separator: "  ")
            }
            lines.append(title)
            lines.append(line(header))
            for row in rows { lines.append(line(row)) }
        }
        if let note { lines.append(markdown ? "\n\(note)" : note) }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A scaling column's title: its CPUs, and the physical cores they are on where fewer
/// ("16 cores (8 physical)").
func scalingColumnTitle(_ row: ScalingRow) -> String {
    let title = "\(row.cores) core\(row.cores == 1 ? "" : "s")"
    guard let physical = row.physicalCores, physical < row.cores else { return title }
    return title + " (\(physical) physical)"
}

/// The report's sections as tables; empty sections are left out.
func tables(_ report: BenchReport) -> [Table] {
    var tables: [Table] = []
    let machine = report.machine
    tables.append(Table(title: "idp-bench (\(BenchReport.currentSchema))", header: ["machine", ""], rows: [
        ["cpu", machine.cpu ?? "unknown"], ["cores", machine.coresDescription], ["os", machine.os], ["swift", machine.swift], ["date", machine.date],
        ["simulated IDP latency", "\(formatNumber(report.settings.latencyMs)) ms"], ["seed", "\(report.settings.seed)"],
    ]))
    let floors = report.floors.filter { !$0.isIdpOperation }
    let threads = Array(Set(report.providers.map(\.threads) + floors.map(\.threads))).sorted()
    if !report.providers.isEmpty || !floors.isEmpty {
        var rows: [[String]] = []
        for name in orderedUnique(floors.map(\.name)) {
            rows.append([floorLabel(name)] + threads.map { count in
                report.floors.first { $0.name == name && $0.threads == count }.map { formatNumber($0.nsPerOp) } ?? "-"
            })
        }
        for name in orderedUnique(report.providers.map(\.strategy)) {
            let first = report.providers.first { $0.strategy == name }!
            let label = "\(first.kind): \(name)\(first.recommended ? " (recommended)" : "")"
            rows.append([label] + threads.map { count in
                report.providers.first { $0.strategy == name && $0.threads == count }.map { formatNumber($0.nsPerCall) } ?? "-"
            })
        }
        tables.append(Table(title: "provideCredentials hot path: ns per call (all threads together; lower is better)",
                            header: ["strategy"] + threads.map { "\($0) thr" }, rows: rows))
    }
    let idpRows = report.floors.filter(\.isIdpOperation)
    if !idpRows.isEmpty {
        let idpThreads = Array(Set(idpRows.map(\.threads))).sorted()
        var rows: [[String]] = []
        for name in orderedUnique(idpRows.map(\.name)) {
            rows.append([String(name.dropFirst(FloorRow.idpPrefix.count))] + idpThreads.flatMap { count -> [String] in
                guard let row = idpRows.first(where: { $0.name == name && $0.threads == count }) else { return ["-", "-"] }
                let floor = idpRows.first { $0.name == FloorRow.idpFloor && $0.threads == count }
                return [formatNumber(row.nsPerOp), floor.map { "×" + formatNumber(row.nsPerOp / $0.nsPerOp) } ?? "-"]
            })
        }
        tables.append(Table(title: "IDP hot path: ns per operation and its multiple of the Mutex floor (same runs; lower is better)",
                            header: ["operation"] + idpThreads.flatMap { ["\($0) thr", "× floor"] }, rows: rows))
    }
    if !report.flows.isEmpty {
        let rows = report.flows.map { row in
            [row.scenario, row.mode == "open" ? "open @\(formatNumber(row.offeredPerS ?? 0))/s" : "closed", "\(row.inFlight)",
             formatNumber(row.throughputPerS), "\(row.errors)"] + row.latencyUs.named.map { formatNumber($0.value) }
        }
        tables.append(Table(title: "end to end: getAuthorizationCode through \(report.settings.flowPath ?? "engine, IDP and MC") (latency in µs)",
                            header: ["scenario", "loop", "in flight", "flows/s", "errors"] + Percentiles(p0: 0, p25: 0, p50: 0, p75: 0, p90: 0, p99: 0, p999: 0, p100: 0).named.map(\.name),
                            rows: rows, note: flowsNote(report.flows)))
    }
    if let split = report.loneLoginSplit {
        tables.append(loneLoginTable(split))
        if let parts = split.parts { tables.append(loginPartsTable(parts)) }
    }
    if !report.scaling.isEmpty {
        tables.append(scalingTable(report.scaling))
    }
    if !report.contention.isEmpty {
        tables.append(contentionTable(report.contention, inFlight: report.settings.inFlight.max(), preemption: report.preemption,
                                      pauses: report.machinePauses, heavyWorkNoted: report.heavyWorkNoted))
    }
    if let memory = report.memory {
        tables.append(Table(title: "memory with flows parked at the IDP", header: ["measure", "value"], rows: [
            ["parked flows", "\(memory.parkedFlows)"], ["resident bytes per flow", formatNumber(memory.bytesPerFlow)],
            ["OS threads", "\(memory.threads)"], ["SDK pool limit", "\(memory.poolLimit)"],
            ["resident before / parked (MB)", "\(formatNumber(Double(memory.rssBeforeBytes) / 1e6)) / \(formatNumber(Double(memory.rssParkedBytes) / 1e6))"],
        ]))
    }
    let unevaluated = unevaluatedScalingTargets(report.scaling)
    if !report.targets.isEmpty || !unevaluated.isEmpty {
        tables.append(Table(title: "targets", header: ["target", "measured", "limit", "", "detail"], rows: report.targets.map {
            [$0.name, formatRatio($0.value), formatRatio($0.limit), $0.verdict, $0.detail]
        } + unevaluated.map { [$0.name, "-", "-", "not evaluated", $0.reason] }))
    }
    return tables
}

/// The report as one tidy CSV table: a row per figure (RFC 4180 quoting).
func csv(_ report: BenchReport) -> String {
    var lines = ["section,name,kind,threads,in_flight,metric,value"]
    func add(_ section: String, _ name: String, kind: String = "", threads: Int? = nil, inFlight: Int? = nil, _ metric: String, _ value: Double) {
        let fields = [section, name, kind, threads.map(String.init) ?? "", inFlight.map(String.init) ?? "", metric, numberText(value)]
        lines.append(fields.map(csvField).joined(separator: ","))
    }
    for row in report.floors { add("floors", row.name, threads: row.threads, "ns_per_op", row.nsPerOp) }
    for row in report.providers {
        add("providers", row.strategy, kind: row.recommended ? "\(row.kind),recommended" : row.kind, threads: row.threads, "ns_per_call", row.nsPerCall)
    }
    for row in report.flows {
        let name = "\(row.scenario) \(row.mode)"
        add("flows", name, inFlight: row.inFlight, "throughput_per_s", row.throughputPerS)
        if let offered = row.offeredPerS { add("flows", name, inFlight: row.inFlight, "offered_per_s", offered) }
        add("flows", name, inFlight: row.inFlight, "errors", Double(row.errors))
        for (percentile, value) in row.latencyUs.named { add("flows", name, inFlight: row.inFlight, "latency_us_\(percentile)", value) }
    }
    for row in report.contention {
        add("contention", row.lock, "contended_share", row.contendedShare)
        add("contention", row.lock, "wait_ms", row.waitMs)
        for (metric, value) in [("per_login", row.perLogin), ("hold_p50_us", row.holdP50Us), ("hold_p99_us", row.holdP99Us), ("hold_max_us", row.holdMaxUs),
                                ("long_holds", row.longHolds.map { Double($0) }), ("short_hold_ms", row.shortHoldMs),
                                ("hold_max_on_core_us", row.holdMaxOnCoreUs), ("holds_left_core", row.holdsLeftCore.map { Double($0) }),
                                ("long_holds_on_core", row.longHoldsOnCore.map { Double($0) }), ("heavy_work", row.heavyWork.map { Double($0) })] {
            if let value { add("contention", row.lock, metric, value) }
        }
    }
    if let memory = report.memory {
        add("memory", "parked flows", "bytes_per_flow", memory.bytesPerFlow)
        add("memory", "parked flows", "threads", Double(memory.threads))
    }
    if let split = report.loneLoginSplit {
        for (metric, value) in [("p50_us", split.p50Us), ("idp_us", split.idpUs), ("hand_back_us", split.handBackUs), ("engine_us", split.engineUs)] {
            add("lone_login_split", "login", inFlight: 1, metric, value)
        }
        for part in (split.parts?.kinds ?? []) + (split.parts?.parts ?? []) {
            add("lone_login_parts", part.name, kind: part.kind, inFlight: 1, "p50_us", part.us)
        }
    }
    let base = report.scaling.first { $0.cores == 1 }
    for row in report.scaling {
        for flow in row.flows {
            let name = "\(flow.scenario) closed"
            add("scaling", name, threads: row.cores, inFlight: flow.inFlight, "throughput_per_s", flow.throughputPerS)
            if let speedUp = ScalingMath.speedUp(flow.throughputPerS, over: base?.throughput(flow.scenario, inFlight: flow.inFlight)) {
                add("scaling", name, threads: row.cores, inFlight: flow.inFlight, "speed_up", speedUp)
                add("scaling", name, threads: row.cores, inFlight: flow.inFlight, "efficiency", ScalingMath.efficiency(speedUp, cores: row.cores))
            }
        }
        add("scaling", "login closed", threads: row.cores, inFlight: 1, "latency_us_p50", row.loneLoginP50Us)
        for provider in row.providers {
            add("scaling", provider.name, threads: row.cores, "ns_per_call", provider.nsPerCall)
            if let speedUp = ScalingMath.costSpeedUp(provider.nsPerCall, over: base?.nsPerCall(provider.name)) {
                add("scaling", provider.name, threads: row.cores, "speed_up", speedUp)
            }
        }
        if let lock = row.lock { add("scaling", lock.label, threads: row.cores, inFlight: 1_024, "contended_share", lock.contendedShare) }
    }
    for target in report.targets { add("targets", target.name, kind: target.missed ? "missed" : target.verdict, "value", target.value) }
    for target in unevaluatedScalingTargets(report.scaling) { add("targets", target.name, kind: "not evaluated: \(target.reason)", "value", .nan) }
    return lines.joined(separator: "\n") + "\n"
}

/// A floor's row label: `floor: name`, or the name as it is when it carries its own kind
/// (`shared answer: …`, `floor: …`).
func floorLabel(_ name: String) -> String {
    name.contains(": ") ? name : "floor: \(name)"
}

/// The contention section: per lock, how often it was taken and found held, the wait, and how
/// long each acquisition held it; flow-path locks marked.
func contentionTable(_ rows: [ContentionRow], inFlight: Int?, preemption: PreemptionRecord? = nil, pauses: MachinePauses? = nil,
                     heavyWorkNoted: [String: UInt64]? = nil) -> Table {
    func micro(_ value: Double?) -> String { value.map(formatRatio) ?? "-" }
    let level = inFlight.map { " at \(formatNumber(Double($0))) in flight" } ?? ""
    let long = "held ≥ \(formatNumber(HoldTimeTargets.maxUs)) µs"
    let watched = rows.contains { $0.holdsLeftCore != nil }
    let heavy = rows.contains { $0.heavyWork != nil }
    return Table(title: "lock contention and hold times during closed-loop logins\(level)",
                 header: ["lock", "flow path", "acquisitions", "per login", "found held", "share", "waited ms", "held p50 µs", "held p99 µs", "held max µs", long]
                     + (watched ? ["max on core µs", "left core", "on core ≥ \(formatNumber(HoldTimeTargets.maxUs)) µs"] : [])
                     + (heavy ? ["heavy work under it"] : []),
                 rows: rows.map {
                     [$0.lock, $0.isFlowPath ? "yes" : "-", "\($0.acquisitions)", $0.perLogin.map(formatRatio) ?? "-", "\($0.contended)",
                      String(format: "%.2f%%", $0.contendedShare * 100), formatNumber($0.waitMs), micro($0.holdP50Us), micro($0.holdP99Us), micro($0.holdMaxUs),
                      $0.longHolds.map { "\($0)" } ?? "-"]
                         + (watched ? [micro($0.holdMaxOnCoreUs), $0.holdsLeftCore.map { "\($0)" } ?? "-", $0.longHoldsOnCore.map { "\($0)" } ?? "-"] : [])
                         + (heavy ? [heavyWorkCell($0)] : [])
                 },
                 note: "A hold runs from taking the lock to releasing it. A flow-path lock is one the run took at least once per two logins "
                     + "(acquisitions ÷ logins run while profiling ≥ \(formatRatio(ContentionRow.flowPathAcquisitionsPerLogin))): the locks logins wait behind. "
                     + "Its hold targets: p99 ≤ \(formatRatio(HoldTimeTargets.p99Us)) µs, max ≤ \(formatNumber(HoldTimeTargets.maxUs)) µs."
                     + (watched ? " Max on core is the longest hold whose thread the kernel never switched out before it released the lock; left core counts the holds "
                         + "whose thread it did switch out (preempted, or blocked under the lock), each lasting until its thread ran again; on core ≥ \(formatNumber(HoldTimeTargets.maxUs)) µs "
                         + "counts the holds that long whose thread kept its core. Where they are shown, the max target judges the holds on core." : "")
                     + (heavy ? " Heavy work under it counts the times the product hashed (SHA-256), drew random bytes, rendered a page or "
                         + "allocated a chunk or table while a thread held the lock: work that belongs before or after the critical section, "
                         + "counted on any machine however short it ran." + (heavyWorkNoted.map { " " + heavyWorkNote($0) } ?? "") : "")
                     + (preemption.map { " " + preemptionNote($0) } ?? "")
                     + (pauses.map { " " + pausesNote($0) } ?? ""))
}

/// A row's heavy work under its lock: the count, and its kinds when there was any.
func heavyWorkCell(_ row: ContentionRow) -> String {
    guard let count = row.heavyWork else { return "-" }
    return count == 0 ? "0" : "\(count) (\((row.heavyWorkKinds ?? []).joined(separator: ", ")))"
}

/// The heavy work the run noted in all, in a sentence.
func heavyWorkNote(_ noted: [String: UInt64]) -> String {
    let total = noted.values.reduce(0, +)
    guard total > 0 else { return "The run noted no heavy work at all: the column was not exercised." }
    return "The run noted \(formatNumber(Double(total))) heavy operations in all (" + noted.sorted { $0.key < $1.key }.map { "\($0.key) \(formatNumber(Double($0.value)))" }.joined(separator: ", ") + ")."
}

/// The contention run's preemptions against its long holds, in a sentence.
func preemptionNote(_ record: PreemptionRecord) -> String {
    let share = record.cpuMs > 0 ? record.flowPathHoldMs / record.cpuMs * 100 : 0
    return "During the run the kernel took the process's threads off their cores \(record.involuntarySwitches) times (involuntary context switches) "
        + "in \(formatNumber(record.cpuMs)) ms of CPU time, \(String(format: "%.1f%%", share)) of which the flow-path locks were held (holds under \(formatNumber(HoldTimeTargets.maxUs)) µs): "
        + "had they fallen at random moments of running time, about \(formatNumber(record.expectedPreemptedHolds)) would have landed inside a flow-path hold, which then lasts until its thread runs again "
        + "(an upper bound: a preemption on a wake-up follows the waking thread's release of its lock); "
        + "the profiler counted \(record.longHolds) flow-path holds of \(formatNumber(HoldTimeTargets.maxUs)) µs or more"
        + (record.holdsLeftCore.map { ", and saw \($0) flow-path holds whose thread was switched out" } ?? "")
        + (Double(record.longHolds) > record.expectedPreemptedHolds ? ", more than preemption can account for: some holds were long while their threads ran." : ".")
}

/// The machine's own pauses of spinning threads, in a sentence.
func pausesNote(_ pauses: MachinePauses) -> String {
    "Right after the run, with nothing else running, \(pauses.threads) threads (one per core) each spun \(formatNumber(pauses.seconds)) s reading the clock: "
        + "the machine paused them on their cores for up to \(formatNumber(pauses.longestOnCoreUs)) µs (\(pauses.onCoreOverLimit) pauses of "
        + "\(formatNumber(HoldTimeTargets.maxUs)) µs or more), and switched them out \(pauses.switchedOut) times; a hold across such a pause lasts that long with no work under its lock."
}

/// The lone login's p50 in measured parts.
func loneLoginTable(_ split: LoneLoginSplit) -> Table {
    func share(_ value: Double) -> String { split.p50Us > 0 ? String(format: "%.0f%%", value / split.p50Us * 100) : "-" }
    return Table(title: "lone login split: p50 at 1 in flight in measured parts (µs)", header: ["part", "µs", "share"], rows: [
        ["the IDP's own work (its requests handled by IdpServer directly)", formatNumber(split.idpUs), share(split.idpUs)],
        ["the wake-up of the caller's task (hand-back, p50)", formatNumber(split.handBackUs), share(split.handBackUs)],
        ["the engine's share (the rest: engine, MC, transport)", formatNumber(split.engineUs), share(split.engineUs)],
        ["login p50", formatNumber(split.p50Us), "100%"],
    ], note: "The IDP's work (200 logins' requests, with the engine's and the MasterController's parameters and headers, sent to the IdpServer directly, one at a time) and the hand-back are measured beside the 1-in-flight login cell in the same rounds, each as its p50; the engine's share is what is left, so the noise of both measurements lands in it."
        + (split.parts.map { " " + restInPhases(split, $0) } ?? ""))
}

/// The engine's share (the split's rest) beside the same logins' own phases: the work the engine,
/// the MasterController and the provider did, and how much longer the IDP's requests and the
/// hand-offs took in the logins than beside them.
func restInPhases(_ split: LoneLoginSplit, _ parts: LoginPartsFigures) -> String {
    let work = parts.us(of: "engine") + parts.us(of: "mc") + parts.us(of: "provider")
    func signed(_ value: Double) -> String { (value < 0 ? "−" : "+") + formatNumber(abs(value)) }
    return "Against the logins' own phases (the next table), the rest of \(formatNumber(split.engineUs)) µs holds "
        + "\(formatNumber(work)) µs of work (engine \(formatNumber(parts.us(of: "engine"))), MC \(formatNumber(parts.us(of: "mc"))), provider \(formatNumber(parts.us(of: "provider")))), "
        + "the IDP's requests taking \(signed(parts.us(of: "idp") - split.idpUs)) µs in the transport over the IDP's own work, "
        + "and the hand-offs \(signed(parts.us(of: "hand-off") - split.handBackUs)) µs over the one hand-back beside (p50s, which do not add up exactly)."
}

/// Lone logins split at their phases: each part's p50, then each kind of work's.
func loginPartsTable(_ figures: LoginPartsFigures) -> Table {
    func share(_ value: Double) -> String { figures.loginP50Us > 0 ? String(format: "%.0f%%", value / figures.loginP50Us * 100) : "-" }
    let kindNames = ["idp": "the IDP's work (its three requests, in the transport)", "hand-off": "thread hand-offs (to an SDK thread, back to the caller)",
                     "engine": "the engine's own work", "provider": "the provider", "mc": "the MasterController's work"]
    let parts = figures.parts.map { [$0.name, formatNumber($0.us), share($0.us)] }
    let kinds = figures.kinds.map { ["all \(kindNames[$0.kind] ?? $0.kind)", formatNumber($0.us), share($0.us)] }
    return Table(title: "lone login parts: p50 of each part of \(figures.logins) logins at 1 in flight (µs)", header: ["part", "µs", "share"],
                 rows: parts + kinds + [["login p50 (these logins, caller's first event to last result)", formatNumber(figures.loginP50Us), "100%"]],
                 note: "The logins of the 1-in-flight login cell, each with the clock read at the phases it passes (PhaseRecorder); a part is the time between two phases, its p50 over the logins in the cell's windows. A kind's p50 adds its parts per login first. Medians do not add up: the parts' p50s need not sum to the login's."
                    + (figures.callerPlaces.map { " Their code came back to the caller's task on \($0): the threads of Swift's pool the hand-back woke." } ?? ""))
}

/// The scaling section: every figure per core count, with speed-up over 1 core and efficiency.
func scalingTable(_ rows: [ScalingRow]) -> Table {
    let rows = rows.sorted { $0.cores < $1.cores }
    let base = rows.first { $0.cores == 1 }
    var lines: [[String]] = []
    for cell in scalingFlowCells where rows.contains(where: { $0.throughput(cell.scenario, inFlight: cell.inFlight) != nil }) {
        lines.append(["\(cell.scenario), \(cell.inFlight) in flight: flows/s"] + rows.map { row in
            row.throughput(cell.scenario, inFlight: cell.inFlight).map(formatNumber) ?? "-"
        })
        lines.append(["  speed-up / efficiency"] + rows.map { row in
            guard let speedUp = ScalingMath.speedUp(row.throughput(cell.scenario, inFlight: cell.inFlight),
                                                    over: base?.throughput(cell.scenario, inFlight: cell.inFlight)) else { return "-" }
            return "×\(formatRatio(speedUp)) / \(formatRatio(ScalingMath.efficiency(speedUp, cores: row.cores)))"
        })
    }
    /// A lone login's rows: its p50, each kind's p50 where split, and where its code came back
    /// where noted.
    func loneLogin(_ title: String, p50: (ScalingRow) -> Double?, parts: (ScalingRow) -> LoginPartsFigures?) {
        lines.append([title] + rows.map { p50($0).map(formatNumber) ?? "-" })
        if rows.contains(where: { parts($0) != nil }) {
            for kind in LoginPartsRecord.kinds {
                lines.append(["  of which \(kind), p50 µs"] + rows.map { row in parts(row).map { formatNumber($0.us(of: kind)) } ?? "-" })
            }
        }
        if rows.contains(where: { parts($0)?.callerPlaces != nil }) {
            lines.append(["  code back on"] + rows.map { parts($0)?.callerPlaces ?? "-" })
        }
    }
    if rows.contains(where: { $0.loneLoginBeforeP50Us != nil }) {
        loneLogin("login p50 at 1 in flight before the heavy cells, µs", p50: \.loneLoginBeforeP50Us, parts: \.loneLoginBeforeParts)
    }
    loneLogin("login p50 at 1 in flight, µs", p50: \.loneLoginP50Us, parts: \.loneLoginParts)
    for name in orderedUnique(rows.flatMap { $0.providers.map(\.name) }) {
        lines.append(["\(name): ns/call (aggregate)"] + rows.map { $0.nsPerCall(name).map(formatNumber) ?? "-" })
        lines.append(["  speed-up"] + rows.map { row in
            ScalingMath.costSpeedUp(row.nsPerCall(name), over: base?.nsPerCall(name)).map { "×" + formatRatio($0) } ?? "-"
        })
    }
    // A report that records its columns' physical cores was pinned one CPU per core first; an
    // older one took the first N allowed CPUs.
    let pinning = rows.contains { $0.physicalCores != nil }
        ? "N of the allowed CPUs, one per physical core before any core's second thread" : "the first N allowed CPUs"
    var note = "Each column is one child process pinned (sched_setaffinity) to \(pinning); provider cells run N threads. "
        + "Speed-up is over 1 core; efficiency is speed-up ÷ cores."
    if let lock = rows.compactMap({ row in row.lock.map { (row.cores, $0) } }).last {
        note += " Most contended flow-path lock at \(lock.0) cores (logins, 1,024 in flight, profiled): \(lock.1.label), "
            + String(format: "%.2f%%", lock.1.contendedShare * 100) + " of \(lock.1.acquisitions) acquisitions found it held."
    }
    let left = unevaluatedScalingTargets(rows)
    if !left.isEmpty {
        note += " Scaling targets not evaluated: " + left.map { "\($0.name) (\($0.reason))" }.joined(separator: "; ") + "."
    }
    return Table(title: "scaling: the same cells pinned to 1 … \(rows.last?.cores ?? 1) cores", header: ["measure"] + rows.map(scalingColumnTitle),
                 rows: lines, note: note)
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180 §2).
func csvField(_ text: String) -> String {
    guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
    return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// A number for people: one decimal below 100, whole above, with thousands separators.
func formatNumber(_ value: Double) -> String {
    guard value.isFinite else { return "\(value)" }
    if abs(value) < 100 { return String(format: "%.1f", value) }
    let whole = Int(value.rounded())
    let digits = String(abs(whole))
    var grouped = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { grouped += "," }
        grouped.append(digit)
    }
    return (whole < 0 ? "-" : "") + grouped
}

/// A target's figure: two decimals below 10, where ratios live and 0.62 must not read as 0.6.
func formatRatio(_ value: Double) -> String {
    abs(value) < 10 ? String(format: "%.2f", value) : formatNumber(value)
}

/// A number for machines: no grouping, full precision.
func numberText(_ value: Double) -> String {
    guard value.isFinite else { return "" }
    return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
}

/// The elements in first-seen order, without repeats.
func orderedUnique(_ items: [String]) -> [String] {
    var seen = Set<String>()
    return items.filter { seen.insert($0).inserted }
}

/// The note under the end-to-end table: how the open loop counts, and what a lone flow's hand-back
/// to the Swift pool cost beside the 1-in-flight cells.
func flowsNote(_ flows: [FlowRow]) -> String {
    var note = "The open loop counts latency from each flow's scheduled start; its in-flight figure is rate × p50."
    let handBacks = flows.compactMap { row in row.handBackUs.map { (row.scenario, $0) } }
    if !handBacks.isEmpty {
        note += " At 1 in flight each flow also pays one wake-up of the caller's task on the Swift pool, measured beside the cell (p50): "
            + handBacks.map { "\($0.0) \(formatNumber($0.1)) µs" }.joined(separator: ", ") + "."
    }
    if let spread = flows.first(where: \.isSpreadOverUsers) {
        note += " Each closed-loop flow runs on a device (a user) of its own; the rows \(spread.scenario) run their levels over the deepest level's users, each flow taking the next device of its worker's share."
    }
    return note
}
