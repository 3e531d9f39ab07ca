import Foundation

/// The cores the login throughput target is set for: the many-core machines users own. A machine
/// with fewer shows the figure as "n/a: needs 16 cores".
package let loginThroughputCores = 16

/// The benchmark's targets, each a ratio or a figure of this run against its limit. A target whose
/// figures this run did not measure is left out.
/// - Parameters:
///   - report: The run's report.
///   - latency: The simulated IDP latency the flows ran with.
/// - Returns: One row per target this run measured.
package func evaluateTargets(_ report: BenchReport, latency: Duration) -> [TargetRow] {
    var targets = evaluateProviderTargets(report)
    targets += evaluateLoginTargets(report, latency: latency)
    targets += evaluateFloorCostTargets(report, latency: latency)
    targets += evaluateCollapseTargets(report)
    targets += evaluateHoldTimeTargets(report.contention, inFlight: report.settings.inFlight.max(), preemption: report.preemption,
                                       pauses: report.machinePauses)
    targets += evaluateHeavyWorkTarget(report.contention, inFlight: report.settings.inFlight.max(), noted: report.heavyWorkNoted)
    targets += evaluateMemoryTargets(report)
    // The lone login is judged in µs above and shown split into measured parts (``LoneLoginSplit``),
    // not in floors: most of it is the IDP's work and one wake-up, which no engine work shortens.
    targets += evaluateEngineShareTarget(report, latency: latency)
    targets += evaluateFlatProviderTarget(report)
    targets += evaluateScalingTargets(report.scaling)
    return targets
}

/// The run's `Mutex` + dictionary lookup floor at `threads` threads, if measured.
private func mutexFloor(_ report: BenchReport, threads: Int) -> FloorRow? {
    report.floors.first { $0.name == "Mutex + dictionary lookup" && $0.threads == threads }
}

/// The provider targets: the recommended provider against the Mutex floor at 1 and 2 threads,
/// against every peer at every thread count, and its read path's scaling from 1 thread to 2.
/// - Parameter report: The run's report.
/// - Returns: One row per target the providers section measured.
private func evaluateProviderTargets(_ report: BenchReport) -> [TargetRow] {
    var targets: [TargetRow] = []
    let recommended = report.providers.filter(\.recommended)
    for threads in [1, 2] {
        guard let store = recommended.first(where: { $0.threads == threads }), let floor = mutexFloor(report, threads: threads) else { continue }
        targets.append(TargetRow(name: "\(store.strategy) vs Mutex floor, \(threads) thread\(threads == 1 ? "" : "s")",
                                 value: store.nsPerCall / floor.nsPerOp, limit: 1.5, met: store.nsPerCall / floor.nsPerOp <= 1.5,
                                 detail: "\(format(store.nsPerCall)) vs \(format(floor.nsPerOp)) ns"))
    }
    // Beats every peer at every thread count: the worst ratio store / peer must stay below 1.
    var worst: (ratio: Double, detail: String)?
    for store in recommended {
        for peer in report.providers where peer.kind == "peer" && peer.threads == store.threads {
            let ratio = store.nsPerCall / peer.nsPerCall
            if ratio > worst?.ratio ?? -1 {
                worst = (ratio, "worst: \(format(store.nsPerCall)) vs \(peer.strategy) \(format(peer.nsPerCall)) ns at \(store.threads) threads")
            }
        }
    }
    if let worst, let name = recommended.first?.strategy {
        targets.append(TargetRow(name: "\(name) vs best peer, every thread count", value: worst.ratio, limit: 1, met: worst.ratio < 1, detail: worst.detail))
    }
    if let one = recommended.first(where: { $0.threads == 1 }), let two = recommended.first(where: { $0.threads == 2 }) {
        targets.append(TargetRow(name: "stretch: \(one.strategy) read path scaling, 2 threads / 1", value: two.nsPerCall / one.nsPerCall,
                                 limit: 0.6, met: two.nsPerCall / one.nsPerCall <= 0.6, detail: "aggregate ns/call \(format(two.nsPerCall)) vs \(format(one.nsPerCall))"))
    }
    return targets
}

/// The run's closed-loop login cells.
private func closedLoopLogins(_ report: BenchReport) -> [FlowRow] {
    report.flows.filter { $0.scenario == "login" && $0.mode == "closed" }
}

/// The login targets in µs and flows/s: throughput and the p99 / p50 spread at 1,024 in flight,
/// the p50 at 1 in flight.
/// - Parameters:
///   - report: The run's report.
///   - latency: The simulated IDP latency the flows ran with.
/// - Returns: One row per target the flows section measured; none when the latency was not zero.
private func evaluateLoginTargets(_ report: BenchReport, latency: Duration) -> [TargetRow] {
    var targets: [TargetRow] = []
    // End to end: the targets are for logins with zero simulated latency.
    let logins = closedLoopLogins(report)
    if latency == .zero, let busy = logins.first(where: { $0.inFlight == 1_024 }) {
        // A figure for the 16-core machines users own: fewer cores show it, but do not judge it.
        targets.append(TargetRow(name: "login throughput at 1024 in flight", value: busy.throughputPerS, limit: 100_000,
                                 met: busy.throughputPerS >= 100_000, detail: "flows/s, at least, on \(loginThroughputCores) cores",
                                 needsCores: report.machine.cores < loginThroughputCores ? loginThroughputCores : nil))
        let spread = busy.latencyUs.p99 / max(busy.latencyUs.p50, 0.001)
        targets.append(TargetRow(name: "login p99 / p50 at 1024 in flight", value: spread, limit: 3, met: spread <= 3,
                                 detail: "p99 \(format(busy.latencyUs.p99)) µs, p50 \(format(busy.latencyUs.p50)) µs"))
    }
    if latency == .zero, let single = logins.first(where: { $0.inFlight == 1 }) {
        targets.append(TargetRow(name: "login p50 at 1 in flight", value: single.latencyUs.p50, limit: 100,
                                 met: single.latencyUs.p50 <= 100, detail: "µs, at most"))
    }
    return targets
}

/// The login's cost in Mutex floors at 1,024 in flight: from the cores and the throughput, and
/// from the process's own CPU time per login.
/// - Parameters:
///   - report: The run's report.
///   - latency: The simulated IDP latency the flows ran with.
/// - Returns: One row per target the flows section measured; none when the latency was not zero
///   or the run has no floor.
private func evaluateFloorCostTargets(_ report: BenchReport, latency: Duration) -> [TargetRow] {
    var targets: [TargetRow] = []
    let logins = closedLoopLogins(report)
    // The flow's cost in floor units: how many bare Mutex lookups (this run's 1-thread floor) one
    // login costs, so a slower or busier machine moves figure and floor together. The floor is
    // the one measured beside the flow cell (``FlowRow/floorNs``), or for older reports the
    // providers section's.
    //
    // They do not move together exactly: a slow phase of a shared host can slow the floor beside
    // a cell more than the login. Noise only ever slows a floor, so the run's lowest floor
    // reading is the machine's own speed:
    // a floor-unit target is met only if it is met in both units, and the detail gives both when
    // they differ by more than a tenth or the lowest floor decides the verdict.
    if latency == .zero, let sectionFloor = mutexFloor(report, threads: 1)?.nsPerOp ?? logins.first?.floorNs, sectionFloor > 0 {
        let cores = Double(report.machine.cores)
        let lowestFloor = ([sectionFloor] + report.flows.compactMap(\.floorNs)).filter { $0 > 0 }.min() ?? sectionFloor
        func unit(_ row: FlowRow) -> (ns: Double, source: String) {
            if let beside = row.floorNs, beside > 0 { return (beside, "floor beside the cell") }
            return (sectionFloor, "providers' floor")
        }
        /// The target for `nanoseconds` of one login in floors: its value in `floorNs`, met only
        /// if it is also met at the run's lowest floor.
        func floorTarget(_ name: String, nanoseconds: Double, limit: Double, floorNs: Double, detail: String) -> TargetRow {
            let value = nanoseconds / floorNs
            let atLowest = nanoseconds / lowestFloor
            var detail = detail
            // Both units when they differ by more than a tenth, or when the lowest floor alone
            // decides the verdict (a value under the limit that is not met must say why).
            if lowestFloor < floorNs * 0.9 || (value <= limit) != (atLowest <= limit) {
                detail += "; \(format(atLowest)) at the run's lowest floor, \(format(lowestFloor)) ns (a slow phase: met only if both are)"
            }
            return TargetRow(name: name, value: value, limit: limit, met: value <= limit && atLowest <= limit, detail: detail)
        }
        if let busy = logins.first(where: { $0.inFlight == 1_024 }), busy.throughputPerS > 0 {
            let floorNs = unit(busy)
            targets.append(floorTarget("login CPU cost at 1024 in flight, in Mutex floors", nanoseconds: cores / busy.throughputPerS * 1e9, limit: 1_400, floorNs: floorNs.ns,
                                       detail: "\(Int(cores)) cores / \(format(busy.throughputPerS)) flows/s / \(format(floorNs.ns)) ns, \(floorNs.source) (goal 700)"))
            // The same from the process's own CPU time, which other load on the machine does not inflate.
            if let cpu = busy.cpuUsPerFlow {
                targets.append(floorTarget("login process CPU at 1024 in flight, in Mutex floors", nanoseconds: cpu * 1_000, limit: 1_400, floorNs: floorNs.ns,
                                           detail: "\(format(cpu)) µs CPU per login / \(format(floorNs.ns)) ns"))
            }
        }
    }
    return targets
}

/// The collapse targets: what is left of the best closed-loop throughput at 4,096 in flight, for
/// logins and activations, and for logins against the best lower level run over the same 4,096
/// users, where the flows section measured it.
/// - Parameter report: The run's report.
/// - Returns: One row per scenario the flows section measured at 4,096 in flight.
private func evaluateCollapseTargets(_ report: BenchReport) -> [TargetRow] {
    var targets: [TargetRow] = []
    /// The deepest row's throughput over the best of `compared` (which holds the deepest row).
    func collapse(_ name: String, deepest: FlowRow, compared: [FlowRow], over detail: String) -> TargetRow? {
        guard let best = compared.max(by: { $0.throughputPerS < $1.throughputPerS }), best.throughputPerS > 0 else { return nil }
        let ratio = deepest.throughputPerS / best.throughputPerS
        return TargetRow(name: name, value: ratio, limit: 0.9, met: ratio >= 0.9,
                         detail: "\(format(deepest.throughputPerS)) vs \(format(best.throughputPerS)) flows/s at \(best.inFlight) in flight\(detail)")
    }
    for scenario in ["login", "activation"] {
        let rows = report.flows.filter { $0.scenario == scenario && $0.mode == "closed" }
        guard let deepest = rows.first(where: { $0.inFlight == 4_096 }),
              let target = collapse("\(scenario) throughput at 4096 in flight / best level", deepest: deepest, compared: rows, over: "") else { continue }
        targets.append(target)
    }
    // The deepest login cell runs on as many users as flows in flight, a lower level on fewer:
    // against the lower levels run again over the deepest level's users, depth alone.
    let spreadScenario = FlowRow.scenario("login", spreadOver: 4_096)
    let spread = report.flows.filter { $0.scenario == spreadScenario && $0.mode == "closed" }
    if !spread.isEmpty, let deepest = closedLoopLogins(report).first(where: { $0.inFlight == 4_096 }),
       let target = collapse("login throughput at 4096 in flight / best level over the same 4096 users", deepest: deepest,
                             compared: spread + [deepest], over: " over 4096 users") {
        targets.append(target)
    }
    return targets
}

/// The memory targets: resident bytes per parked flow, and the OS threads with the flows parked.
/// - Parameter report: The run's report.
/// - Returns: Three rows, or none when the memory section did not run.
private func evaluateMemoryTargets(_ report: BenchReport) -> [TargetRow] {
    var targets: [TargetRow] = []
    if let memory = report.memory {
        targets.append(TargetRow(name: "resident bytes per parked flow", value: memory.bytesPerFlow, limit: 2_048,
                                 met: memory.bytesPerFlow <= 2_048, detail: "\(memory.parkedFlows) flows parked"))
        // Bounded by the pool, not the flows: the pool's limit plus a few threads of the runtime.
        let limit = Double(memory.poolLimit + 16)
        targets.append(TargetRow(name: "OS threads with flows parked", value: Double(memory.threads), limit: limit,
                                 met: Double(memory.threads) <= limit, detail: "pool limit \(memory.poolLimit), \(memory.parkedFlows) flows"))
        targets.append(TargetRow(name: "OS threads with flows parked, at most 16", value: Double(memory.threads), limit: 16,
                                 met: memory.threads <= 16, detail: "\(memory.parkedFlows) flows parked"))
    }
    return targets
}

/// The engine's share of a lone login (its p50 less the IDP's own work and the one hand-back, as
/// ``LoneLoginSplit`` measures them) against the IDP's own work in the same run; and, where the
/// logins' phases were noted, the engine's and the MasterController's work in those logins against
/// the IDP's requests in the same logins (each kind's p50; the in-process transport at zero
/// latency calls the IDP directly, so its requests' time is the IDP's work there).
/// - Parameters:
///   - report: The run's report.
///   - latency: The simulated IDP latency the flows ran with.
/// - Returns: One or two rows, or none when the split was not measured or the latency was not zero.
private func evaluateEngineShareTarget(_ report: BenchReport, latency: Duration) -> [TargetRow] {
    guard latency == .zero, let split = report.loneLoginSplit ?? LoneLoginSplit(flows: report.flows), split.idpUs > 0 else { return [] }
    let ratio = split.engineUs / split.idpUs
    var detail = "engine \(format(split.engineUs)) vs IDP \(format(split.idpUs)) µs of a \(format(split.p50Us)) µs p50, hand-back \(format(split.handBackUs)) µs"
    if let parts = split.parts {
        detail += "; in the logins' own phases: hand-offs \(format(parts.us(of: "hand-off"))), engine \(format(parts.us(of: "engine"))), MC \(format(parts.us(of: "mc"))), IDP \(format(parts.us(of: "idp"))) µs"
    }
    var rows = [TargetRow(name: "lone login: the engine's share / the IDP's own work", value: ratio, limit: 1, met: ratio <= 1, detail: detail)]
    if let parts = split.parts, parts.us(of: "idp") > 0 {
        let engine = parts.us(of: "engine"), mc = parts.us(of: "mc"), idp = parts.us(of: "idp")
        let work = (engine + mc) / idp
        rows.append(TargetRow(name: "lone login: the engine's and the MC's work / the IDP's, in the logins' own phases", value: work, limit: 1,
                              met: work <= 1,
                              detail: "engine \(format(engine)) + MC \(format(mc)) vs IDP \(format(idp)) µs, p50s by kind over \(parts.logins) logins; not counted: hand-offs \(format(parts.us(of: "hand-off"))), provider \(format(parts.us(of: "provider"))) µs"))
    }
    return rows
}

/// Every product provider no slower per call at the run's most threads than at 1 thread
/// (aggregate ns per call): the worst ratio.
/// - Parameter report: The run's report.
/// - Returns: One row, or none when the providers section did not measure 1 thread and more.
private func evaluateFlatProviderTarget(_ report: BenchReport) -> [TargetRow] {
    guard let most = report.providers.map(\.threads).max(), most > 1 else { return [] }
    var worst: (ratio: Double, detail: String)?
    for one in report.providers where one.kind == "product" && one.threads == 1 {
        guard let many = report.providers.first(where: { $0.strategy == one.strategy && $0.threads == most }), one.nsPerCall > 0 else { continue }
        let ratio = many.nsPerCall / one.nsPerCall
        if ratio > worst?.ratio ?? -1 {
            worst = (ratio, "worst: \(one.strategy) \(format(many.nsPerCall)) ns at \(most) threads vs \(format(one.nsPerCall)) at 1")
        }
    }
    guard let worst else { return [] }
    return [TargetRow(name: "every product provider at \(most) threads no slower per call than at 1", value: worst.ratio, limit: 1,
                      met: worst.ratio <= 1, detail: worst.detail)]
}

private func format(_ value: Double) -> String {
    value < 100 ? String(format: "%.1f", value) : String(format: "%.0f", value)
}

/// The limits on how long a flow-path lock may be held, during closed-loop logins (the contention
/// section), on any machine: a hold is as long on 2 cores as on 16.
package enum HoldTimeTargets {
    /// The most a flow-path lock's 99th-percentile hold may be, in µs.
    package static let p99Us = 2.0
    /// The most any one hold of a flow-path lock may be, in µs.
    package static let maxUs = 100.0
}

/// The hold-time targets: the worst flow-path lock's p99 hold and its longest hold, each against
/// its limit (``HoldTimeTargets``), naming every flow-path lock over it. Left out when the
/// contention rows have no hold times or no flow-path lock (``ContentionRow/isFlowPath``).
///
/// Where the lock profiler watched whether each holder kept its core (every flow-path row has
/// ``ContentionRow/holdMaxOnCoreUs`` and the run a ``PreemptionRecord`` with its holds that left
/// their core), the max target judges the holds whose thread kept its core: the work under the
/// lock. A hold whose thread the kernel switched out lasts until the thread runs again, however
/// little work it did; those holds are counted in the detail, with the longest hold of all. They
/// cannot outnumber the kernel's preemptions of the process's threads unless a thread blocked
/// under a lock, so more of them than preemptions misses the target. Elsewhere the max target
/// judges every hold. Where the run measured the machine's own pauses (``MachinePauses``), a
/// missed max target's detail gives the longest of them beside it.
/// - Parameters:
///   - rows: The contention section's rows.
///   - inFlight: The logins in flight during the contention run.
///   - preemption: The contention run's preemption record, if any.
///   - pauses: The machine's own pauses of spinning threads, if measured.
/// - Returns: Two rows, or none.
func evaluateHoldTimeTargets(_ rows: [ContentionRow], inFlight: Int?, preemption: PreemptionRecord? = nil, pauses: MachinePauses? = nil) -> [TargetRow] {
    let flowPath = rows.filter(\.isFlowPath)
    let level = inFlight.map { "logins at \($0) in flight" } ?? "logins"
    let watched = preemption?.holdsLeftCore != nil && flowPath.allSatisfy { $0.holdMaxUs == nil || ($0.holdMaxOnCoreUs != nil && $0.holdsLeftCore != nil) }
    var targets: [TargetRow] = []
    for (metric, limit, value) in [("p99", HoldTimeTargets.p99Us, \ContentionRow.holdP99Us),
                                   (watched ? "max, holder on its core" : "max", HoldTimeTargets.maxUs, watched ? \ContentionRow.holdMaxOnCoreUs : \ContentionRow.holdMaxUs)] {
        let measured = flowPath.compactMap { row in row[keyPath: value].map { (lock: row.lock, us: $0) } }
        guard let worst = measured.max(by: { $0.us < $1.us }) else { continue }
        let over = measured.filter { $0.us > limit }.sorted { $0.us > $1.us }
        var detail = over.isEmpty
            ? "µs, at most; worst \(worst.lock), \(measured.count) flow-path locks, \(level)"
            : "µs, at most; over: " + over.map { "\($0.lock) \(formatRatio($0.us))" }.joined(separator: ", ") + " (of \(measured.count) flow-path locks, \(level))"
        var met = over.isEmpty
        if metric != "p99", watched, let preemption, let leftCore = preemption.holdsLeftCore {
            let blocked = leftCore > preemption.involuntarySwitches
            met = met && !blocked
            let longest = flowPath.compactMap { row in row.holdMaxUs.map { (lock: row.lock, us: $0) } }.max { $0.us < $1.us }
            detail += "; \(leftCore) holds left their core"
                + (blocked ? ", more than the kernel's \(preemption.involuntarySwitches) preemptions of the process's threads: some blocked under their lock"
                           : " (the kernel preempted the process's threads \(preemption.involuntarySwitches) times)")
                + (longest.map { ", the longest hold of all \(formatNumber($0.us)) µs (\($0.lock))" } ?? "")
        }
        if metric != "p99", !over.isEmpty, let pauses {
            detail += "; alone, the machine paused a spinning thread on its core for up to \(formatNumber(pauses.longestOnCoreUs)) µs "
                + "(\(pauses.onCoreOverLimit) pauses of \(formatNumber(limit)) µs or more in \(pauses.threads) × \(formatNumber(pauses.seconds)) s"
            let threadSeconds = Double(pauses.threads) * pauses.seconds
            if watched, let preemption, threadSeconds > 0 {
                let expected = Double(pauses.onCoreOverLimit) / threadSeconds * preemption.flowPathHoldMs / 1e3
                let onCore = flowPath.reduce(0) { $0 + ($1.longHoldsOnCore ?? 0) }
                detail += ": at that rate about \(formatRatio(expected)) would fall inside the run's flow-path holds, which had \(onCore) of \(formatNumber(limit)) µs or more on core"
            }
            detail += ")"
        }
        targets.append(TargetRow(name: "flow-path lock hold \(metric), \(level)", value: worst.us, limit: limit, met: met, detail: detail))
    }
    return targets
}

/// The heavy-work target: no heavy work (hashing, randomness, rendering, large allocations) noted
/// while a thread held a flow-path lock during the contention run, on any machine. Left out when
/// the report has no heavy-work record (older reports); not met, and said to be not exercised,
/// when the run noted no heavy work at all, under a lock or not.
/// - Parameters:
///   - rows: The contention section's rows.
///   - inFlight: The logins in flight during the contention run.
///   - noted: The heavy work the run noted in all, by kind.
/// - Returns: One row, or none.
func evaluateHeavyWorkTarget(_ rows: [ContentionRow], inFlight: Int?, noted: [String: UInt64]?) -> [TargetRow] {
    let flowPath = rows.filter(\.isFlowPath)
    guard let noted, !flowPath.isEmpty, flowPath.allSatisfy({ $0.heavyWork != nil }) else { return [] }
    let level = inFlight.map { "logins at \($0) in flight" } ?? "logins"
    let name = "heavy work under a flow-path lock, \(level)"
    let total = noted.values.reduce(0, +)
    guard total > 0 else {
        return [TargetRow(name: name, value: 0, limit: 0, met: false, detail: "not exercised: the run noted no heavy work at all")]
    }
    let under = flowPath.filter { ($0.heavyWork ?? 0) > 0 }.sorted { ($0.heavyWork ?? 0) > ($1.heavyWork ?? 0) }
    let count = under.reduce(UInt64(0)) { $0 + ($1.heavyWork ?? 0) }
    let detail = under.isEmpty
        ? "times, at most; none of the run's \(formatNumber(Double(total))) heavy operations under any of \(flowPath.count) flow-path locks"
        : "times, at most; under " + under.map { "\($0.lock) \(heavyWorkCell($0))" }.joined(separator: "; ")
            + " (of \(formatNumber(Double(total))) heavy operations the run noted)"
    return [TargetRow(name: name, value: Double(count), limit: 0, met: under.isEmpty, detail: detail)]
}
