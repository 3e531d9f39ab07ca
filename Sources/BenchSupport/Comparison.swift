import Foundation

/// Reports side by side: every figure both sides measured, its change, and whether it regressed
/// past a threshold. `idp-bench compare` prints it and exits 2 on a regression.
///
/// Either side may be several runs of one binary. A figure is then each side's median, and a move
/// past the threshold counts only where every new run lies beyond every base run
/// (``Verdict/overlapping`` otherwise): on a machine whose runs differ from one another by
/// more than the threshold, one pair of runs cannot tell a regression from that spread. Two sets
/// of `n` runs of one binary, taken interleaved, fail to overlap by chance in at most 2 of
/// C(2n, n) cases, a figure: 1 in 10 for 3 runs a side, 1 in 126 for 5.
package struct Comparison: Sendable {
    /// What happened to one figure.
    package enum Verdict: String, Sendable {
        /// Its median moved the right way by more than the threshold, and every new run is better
        /// than every base run.
        case improved
        /// Its median moved the wrong way by more than the threshold, and every new run is worse
        /// than every base run.
        case regressed
        /// It moved by no more than the threshold.
        case unchanged
        /// Its median moved by more than the threshold, but the new runs and the base runs overlap.
        case overlapping = "runs overlap"
        /// Only the base reports measured it.
        case onlyInBase = "only in base"
        /// Only the new reports measured it.
        case onlyInNew = "only in new"
    }

    /// One figure's values over one side's runs.
    package struct Sample: Sendable, Equatable {
        /// The median of the runs' values (the mean of the middle two for an even count).
        package let median: Double
        /// The smallest and largest value.
        package let range: ClosedRange<Double>
        /// How many runs measured the figure.
        package let runs: Int

        /// The sample of `values`; `nil` when there are none.
        package init?(_ values: [Double]) {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            let middle = sorted.count / 2
            median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
            range = sorted[0]...sorted[sorted.count - 1]
            runs = sorted.count
        }
    }

    /// One figure on both sides.
    package struct Change: Sendable {
        /// Which figure: section, row key and metric.
        package let figure: String
        /// The base runs' values; `nil` if none measured the figure.
        package let baseSample: Sample?
        /// The new runs' values; `nil` if none measured the figure.
        package let newSample: Sample?
        /// Change from the base median to the new one, in percent of the base median; `nil` unless
        /// both sides measured the figure.
        package let changePercent: Double?
        /// What happened to the figure.
        package let verdict: Verdict

        /// The base median; `nil` if no base run measured the figure.
        package var base: Double? { baseSample?.median }
        /// The new median; `nil` if no new run measured the figure.
        package var new: Double? { newSample?.median }
    }

    /// Every figure either side measured, in the reports' order.
    package let changes: [Change]
    /// The change, in percent, past which a figure counts as moved.
    package let thresholdPercent: Double
    /// How many reports each side had.
    package let runs: (base: Int, new: Int)

    /// Whether any figure got worse by more than the threshold, every new run beyond every base run.
    package var regressed: Bool { changes.contains { $0.verdict == .regressed } }

    /// Compares one report with another: ``compare(bases:news:thresholdPercent:)`` with one run
    /// a side.
    package static func compare(base: BenchReport, new: BenchReport, thresholdPercent: Double) -> Comparison {
        compare(bases: [base], news: [new], thresholdPercent: thresholdPercent)
    }

    /// Matches the reports' rows by key: providers by strategy and threads (ns per call), floors
    /// by name and threads (ns per op), closed-loop flows by scenario and in-flight level
    /// (throughput, p50, p99, the process's CPU per flow), open-loop flows by scenario (p50 and p99), the memory row (bytes
    /// per flow, threads), the contention section's flow-path locks by label (hold p50 and p99,
    /// share found held) and the scaling section by core count (each flow cell's throughput, the
    /// lone login's p50, each provider cell's ns per call). A figure regressed when its median
    /// moved the wrong way (up for times, sizes and shares, down for throughput) by more than
    /// `thresholdPercent` of the base median and every new run is worse than every base run.
    /// - Parameters:
    ///   - bases: The runs compared against, at least one.
    ///   - news: The runs compared, at least one.
    ///   - thresholdPercent: The change, in percent of the base median, past which a figure
    ///     counts as moved.
    /// - Returns: Every figure's change and verdict.
    package static func compare(bases: [BenchReport], news: [BenchReport], thresholdPercent: Double) -> Comparison {
        let base = Figures(bases), new = Figures(news)
        var changes: [Change] = []
        for key in base.order {
            guard let baseSample = Sample(base.values[key] ?? []) else { continue }
            guard let newSample = Sample(new.values[key] ?? []) else {
                changes.append(Change(figure: key, baseSample: baseSample, newSample: nil, changePercent: nil, verdict: .onlyInBase))
                continue
            }
            let higherIsBetter = base.higherIsBetter[key] ?? false
            changes.append(change(key, baseSample, newSample, higherIsBetter: higherIsBetter, thresholdPercent: thresholdPercent))
        }
        for key in new.order where base.values[key] == nil {
            changes.append(Change(figure: key, baseSample: nil, newSample: Sample(new.values[key] ?? []), changePercent: nil, verdict: .onlyInNew))
        }
        return Comparison(changes: changes, thresholdPercent: thresholdPercent, runs: (bases.count, news.count))
    }

    /// The change of one figure measured on both sides.
    private static func change(_ key: String, _ base: Sample, _ new: Sample, higherIsBetter: Bool, thresholdPercent: Double) -> Change {
        let percent = base.median == 0 ? (new.median == 0 ? 0 : .infinity) : (new.median - base.median) / base.median * 100
        let worse = higherIsBetter ? -percent : percent
        let verdict: Verdict
        // Every new run beyond every base run: the two ranges do not overlap.
        let above = new.range.lowerBound > base.range.upperBound, below = new.range.upperBound < base.range.lowerBound
        if worse > thresholdPercent {
            verdict = (higherIsBetter ? below : above) ? .regressed : .overlapping
        } else if worse < -thresholdPercent {
            verdict = (higherIsBetter ? above : below) ? .improved : .overlapping
        } else {
            verdict = .unchanged
        }
        return Change(figure: key, baseSample: base, newSample: new, changePercent: percent, verdict: verdict)
    }

    /// Every figure of one side's runs, by key, in the order the runs first name them.
    private struct Figures {
        var order: [String] = []
        var values: [String: [Double]] = [:]
        var higherIsBetter: [String: Bool] = [:]

        init(_ reports: [BenchReport]) {
            for report in reports {
                // A key one run names twice counts once, its first value, as one run's figure.
                var seen = Set<String>()
                Self.figures(of: report) { key, value, better in
                    guard seen.insert(key).inserted, value.isFinite else { return }
                    if values[key] == nil {
                        order.append(key)
                        higherIsBetter[key] = better
                    }
                    values[key, default: []].append(value)
                }
            }
        }

        /// Passes each figure of `report` to `add`: its key, its value, and whether a higher value
        /// is better.
        static func figures(of report: BenchReport, _ add: (String, Double, Bool) -> Void) {
            for row in report.providers { add("providers: \(row.strategy) @\(row.threads) threads: ns_per_call", row.nsPerCall, false) }
            for row in report.floors { add("floors: \(row.name) @\(row.threads) threads: ns_per_op", row.nsPerOp, false) }
            for row in report.flows {
                // An open loop's rate is chosen per run (half the run's lowest closed-loop login
                // throughput unless given): its latency is compared, and its throughput, which is
                // the rate offered, is not.
                guard row.mode != "open" else {
                    add("flows: \(row.scenario) open: p50 µs", row.latencyUs.p50, false)
                    add("flows: \(row.scenario) open: p99 µs", row.latencyUs.p99, false)
                    continue
                }
                let key = "flows: \(row.scenario) \(row.mode) @\(row.inFlight) in flight"
                add("\(key): throughput_per_s", row.throughputPerS, true)
                add("\(key): p50 µs", row.latencyUs.p50, false)
                add("\(key): p99 µs", row.latencyUs.p99, false)
                if let cpu = row.cpuUsPerFlow { add("\(key): cpu µs per flow", cpu, false) }
            }
            if let memory = report.memory {
                add("memory: bytes_per_flow", memory.bytesPerFlow, false)
                add("memory: threads", Double(memory.threads), false)
            }
            for row in report.contention where row.isFlowPath {
                if let p50 = row.holdP50Us { add("contention: \(row.lock): hold p50 µs", p50, false) }
                if let p99 = row.holdP99Us { add("contention: \(row.lock): hold p99 µs", p99, false) }
                add("contention: \(row.lock): found_held_share", row.contendedShare, false)
            }
            for row in report.scaling {
                for flow in row.flows {
                    add("scaling: \(flow.scenario) @\(flow.inFlight) in flight @\(row.cores) cores: throughput_per_s", flow.throughputPerS, true)
                }
                add("scaling: lone login @\(row.cores) cores: p50 µs", row.loneLoginP50Us, false)
                if let before = row.loneLoginBeforeP50Us { add("scaling: lone login before the heavy cells @\(row.cores) cores: p50 µs", before, false) }
                for provider in row.providers {
                    add("scaling: \(provider.name) @\(row.cores) cores: ns_per_call", provider.nsPerCall, false)
                }
            }
        }
    }

    /// An aligned table of every figure and a summary line; with more than one run a side, each
    /// side's range beside its median.
    package func render() -> String {
        let ranged = runs.base > 1 || runs.new > 1
        func range(_ sample: Sample?) -> String {
            guard let sample else { return "-" }
            return "\(Self.format(sample.range.lowerBound))–\(Self.format(sample.range.upperBound))"
        }
        let rows = changes.map { change in
            let values = ranged
                ? [change.base.map(Self.format) ?? "-", range(change.baseSample), change.new.map(Self.format) ?? "-", range(change.newSample)]
                : [change.base.map(Self.format) ?? "-", change.new.map(Self.format) ?? "-"]
            return [change.figure] + values + [change.changePercent.map { String(format: "%+.1f%%", $0) } ?? "-", change.verdict.rawValue]
        }
        let header = ranged
            ? ["figure", "base median", "base range", "new median", "new range", "change", "verdict"]
            : ["figure", "base", "new", "change", "verdict"]
        let runsNote = ranged ? ", \(runs.base) base and \(runs.new) new runs" : ""
        let table = Table(title: "idp-bench compare (threshold \(formatNumber(thresholdPercent))%\(runsNote))", header: header, rows: rows)
        let regressions = changes.filter { $0.verdict == .regressed }.count
        let improvements = changes.filter { $0.verdict == .improved }.count
        let spread = changes.filter { $0.verdict == .overlapping }.count
        return table.render(markdown: false)
            + "\(changes.count) figures: \(regressions) regressed, \(improvements) improved past \(formatNumber(thresholdPercent))%"
            + (ranged ? ", \(spread) moved past it with the runs overlapping" : "") + "\n"
    }

    /// A figure's value: three significant digits below 100 (hold times and shares are small),
    /// whole and grouped above.
    private static func format(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 100 else { return formatNumber(value) }
        return String(format: "%.3g", value)
    }
}
