import Foundation

/// Two reports side by side: every figure both measured, its change, and whether it regressed
/// past a threshold. `idp-bench compare BASE.json NEW.json` prints it and exits 2 on a regression.
package struct Comparison: Sendable {
    /// What happened to one figure.
    package enum Verdict: String, Sendable {
        /// It moved the right way by more than the threshold.
        case improved
        /// It moved the wrong way by more than the threshold.
        case regressed
        /// It moved by no more than the threshold.
        case unchanged
        /// Only the base report measured it.
        case onlyInBase = "only in base"
        /// Only the new report measured it.
        case onlyInNew = "only in new"
    }

    /// One figure in both reports.
    package struct Change: Sendable {
        /// Which figure: section, row key and metric.
        package let figure: String
        /// The base report's value; `nil` if it did not measure the figure.
        package let base: Double?
        /// The new report's value; `nil` if it did not measure the figure.
        package let new: Double?
        /// Change from base to new, in percent of base; `nil` unless both exist.
        package let changePercent: Double?
        /// What happened to the figure.
        package let verdict: Verdict
    }

    /// Every figure either report measured, in the reports' order.
    package let changes: [Change]
    /// The change, in percent, past which a figure counts as moved.
    package let thresholdPercent: Double

    /// Whether any figure got worse by more than the threshold.
    package var regressed: Bool { changes.contains { $0.verdict == .regressed } }

    /// Matches the reports' rows by key: providers by strategy and threads (ns per call), floors
    /// by name and threads (ns per op), flows by scenario, loop and in-flight level (throughput,
    /// p50 and p99), and the memory row (bytes per flow, threads). A figure regressed when it moved
    /// the wrong way (up for times and sizes, down for throughput) by more than `thresholdPercent`.
    /// - Parameters:
    ///   - base: The report to compare against.
    ///   - new: The report compared.
    ///   - thresholdPercent: The change, in percent of base, past which a figure counts as moved.
    /// - Returns: Every figure's change and verdict.
    package static func compare(base: BenchReport, new: BenchReport, thresholdPercent: Double) -> Comparison {
        var changes: [Change] = []
        func figures(_ report: BenchReport) -> [(key: String, value: Double, higherIsBetter: Bool)] {
            var figures: [(String, Double, Bool)] = []
            for row in report.providers { figures.append(("providers: \(row.strategy) @\(row.threads) threads: ns_per_call", row.nsPerCall, false)) }
            for row in report.floors { figures.append(("floors: \(row.name) @\(row.threads) threads: ns_per_op", row.nsPerOp, false)) }
            for row in report.flows {
                let key = "flows: \(row.scenario) \(row.mode) @\(row.mode == "open" ? "\(formatNumber(row.offeredPerS ?? 0))/s" : "\(row.inFlight) in flight")"
                figures.append(("\(key): throughput_per_s", row.throughputPerS, true))
                figures.append(("\(key): p50 µs", row.latencyUs.p50, false))
                figures.append(("\(key): p99 µs", row.latencyUs.p99, false))
            }
            if let memory = report.memory {
                figures.append(("memory: bytes_per_flow", memory.bytesPerFlow, false))
                figures.append(("memory: threads", Double(memory.threads), false))
            }
            return figures
        }
        let baseFigures = figures(base)
        let newFigures = Dictionary(figures(new).map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let baseKeys = Set(baseFigures.map(\.key))
        for figure in baseFigures {
            guard let counterpart = newFigures[figure.key] else {
                changes.append(Change(figure: figure.key, base: figure.value, new: nil, changePercent: nil, verdict: .onlyInBase))
                continue
            }
            let percent = figure.value == 0 ? (counterpart.value == 0 ? 0 : .infinity) : (counterpart.value - figure.value) / figure.value * 100
            let worse = figure.higherIsBetter ? -percent : percent
            let verdict: Verdict = worse > thresholdPercent ? .regressed : (worse < -thresholdPercent ? .improved : .unchanged)
            changes.append(Change(figure: figure.key, base: figure.value, new: counterpart.value, changePercent: percent, verdict: verdict))
        }
        for figure in figures(new) where !baseKeys.contains(figure.key) {
            changes.append(Change(figure: figure.key, base: nil, new: figure.value, changePercent: nil, verdict: .onlyInNew))
        }
        return Comparison(changes: changes, thresholdPercent: thresholdPercent)
    }

    /// An aligned table of every figure and a summary line.
    package func render() -> String {
        let rows = changes.map { change in
            [change.figure, change.base.map(formatNumber) ?? "-", change.new.map(formatNumber) ?? "-",
             change.changePercent.map { String(format: "%+.1f%%", $0) } ?? "-", change.verdict.rawValue]
        }
        let table = Table(title: "idp-bench compare (threshold \(formatNumber(thresholdPercent))%)", header: ["figure", "base", "new", "change", "verdict"], rows: rows)
        let regressions = changes.filter { $0.verdict == .regressed }.count
        let improvements = changes.filter { $0.verdict == .improved }.count
        return table.render(markdown: false)
            + "\(changes.count) figures: \(regressions) regressed, \(improvements) improved past \(formatNumber(thresholdPercent))%\n"
    }
}
