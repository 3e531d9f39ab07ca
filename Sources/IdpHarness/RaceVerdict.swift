import Foundation

/// Turns what the race hammer and ThreadSanitizer found into the report's checks and outcome
/// tables.
enum RaceVerdict {
    static let hammerCheck = "race hammer"
    static let raceCheck = "no data race (ThreadSanitizer)"

    static func add(hammer: RaceHammer.Findings?, flows: ThreadSanitizerPhase?, directory: String?, to report: inout ConformanceReport) {
        var checks: [ConformanceReport.Check] = []
        if let hammer {
            let table = ConformanceReport.OutcomeTable(check: hammerCheck, rows: HammerOutcome.allCases.compactMap { outcome in
                hammer.outcomes[outcome].map { .init(outcome: outcome.rawValue, count: $0, grade: outcome.grade) }
            })
            report.outcomes.append(table)
            let calls = hammer.outcomes.values.reduce(0, +)
            let detail: String
            if let stale = hammer.staleRound {
                detail = "stale: round \(stale) did not end within the hang timeout (a provider call never returned)"
            } else if table.acceptable {
                detail = "\(calls) direct calls in a warm-up and \(hammer.roundsRun) rounds of fresh instances, \(hammer.threads) OS threads released together: every answer right"
                    + (hammer.stoppedAfterRace ? " (it stopped there: ThreadSanitizer had found a race)" : "")
            } else {
                detail = "\(table.rows.filter { $0.grade != .acceptable }.map(\.count).reduce(0, +)) of \(calls) answers forbidden: "
                    + hammer.examples.joined(separator: "; ")
            }
            checks.append(.init(name: hammerCheck, passed: table.acceptable, detail: detail))
        }
        let phases = [hammer?.reports, flows].compactMap { $0 }
        report.threadSanitizer = ThreadSanitizerReports.isActive
        guard ThreadSanitizerReports.isActive else {
            checks.append(.init(name: raceCheck, passed: true,
                                detail: "ThreadSanitizer: off, so data races were not checked; run under `swift test --sanitize=thread`", checked: false))
            report.checks = checks + report.checks
            return
        }
        var rows: [ConformanceReport.OutcomeTable.Row] = []
        var problems: [String] = []
        for phase in phases {
            let findings = phase.findings
            let clean = phase.rounds - phase.roundsWithReports
            if clean > 0 || phase.reports.isEmpty {
                rows.append(.init(outcome: "\(phase.name): no report\(phase.rounds > 1 ? " (rounds)" : "")", count: max(1, clean), grade: .acceptable))
            }
            for (kind, reports) in Dictionary(grouping: findings, by: \.kind).sorted(by: { $0.key < $1.key }) {
                let label = kind.contains("race") ? "data race (ThreadSanitizer): \(kind)" : "ThreadSanitizer: \(kind)"
                rows.append(.init(outcome: "\(phase.name): \(label)", count: reports.count, grade: .forbidden))
                let frame = reports.lazy.compactMap(\.providerFrame).first
                problems.append("\(phase.name): \(kind)\(frame.map { " at \($0)" } ?? "") (\(reports.count) report\(reports.count == 1 ? "" : "s"))")
            }
            if phase.lost > 0 {
                rows.append(.init(outcome: "\(phase.name): ThreadSanitizer reports not read (the ring overflowed)", count: phase.lost, grade: .forbidden))
                problems.append("\(phase.name): \(phase.lost) more reports not read")
            }
            if !phase.mutexHandOffs.isEmpty {
                rows.append(.init(outcome: "\(phase.name): Mutex hand-off ThreadSanitizer cannot see (not a race)", count: phase.mutexHandOffs.count,
                                  grade: .acceptable))
            }
        }
        report.outcomes.append(.init(check: raceCheck, rows: rows))
        let blamed = phases.flatMap(\.findings)
        report.raceReports = blamed
        if !blamed.isEmpty { report.raceReportFile = write(blamed, provider: report.providerName, directory: directory) }
        let handOffs = phases.flatMap(\.mutexHandOffs).count
        let detail: String
        if problems.isEmpty {
            detail = "ThreadSanitizer: on; no report during " + phases.map(\.name).joined(separator: " or ")
                + (handOffs > 0 ? "; \(handOffs) reports were accesses inside Synchronization.Mutex.withLock on both sides, whose futex hand-off ThreadSanitizer cannot see: not counted as races" : "")
        } else {
            let races = phases.flatMap(\.findings).contains(where: \.isRace)
            detail = (races ? "data race (ThreadSanitizer): " : "ThreadSanitizer reported: ") + problems.joined(separator: "; ")
                + (report.raceReportFile.map { "; full text in \($0)" } ?? "")
        }
        checks.append(.init(name: raceCheck, passed: problems.isEmpty, detail: detail))
        report.checks = checks + report.checks
    }

    /// Writes the reports' text to a new file in `directory` (default: the temporary one); returns its path.
    private static func write(_ reports: [ThreadSanitizerReport], provider: String, directory: String?) -> String? {
        let safe = String(provider.map { $0.isLetter || $0.isNumber ? $0 : "-" }.prefix(60))
        let path = (directory.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("idpharness-tsan-\(safe)-\(getpid())-\(reports[0].number).txt").path
        var text = reports.map(\.text).joined(separator: "\n\n") + "\n"
        if let options = ProcessInfo.processInfo.environment["TSAN_OPTIONS"], options.contains("log_path") {
            text += "\nThreadSanitizer's own text went to the log_path of TSAN_OPTIONS (\(options)).\n"
        } else {
            text += "\nThreadSanitizer's own text of these reports is on the process's standard error.\n"
        }
        return (try? text.write(toFile: path, atomically: true, encoding: .utf8)) != nil ? path : nil
    }
}
