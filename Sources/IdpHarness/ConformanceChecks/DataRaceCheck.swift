import Foundation

/// ThreadSanitizer reported nothing of the provider during the race hammer or the engine's
/// flows (its reports counted before and after each phase); without ThreadSanitizer the check
/// says it did not look.
struct DataRaceCheck: ConformanceCheck {
    let name = ConformanceReport.CheckName.noDataRace.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        let sanitizer = evidence.threadSanitizer
        guard sanitizer.isActive else {
            return ConformanceVerdict(check: .init(name: name, passed: true, detail: "ThreadSanitizer: off, so data races were not checked; run under `swift test --sanitize=thread`",
                                                   checked: false), outcomes: nil)
        }
        var rows: [ConformanceReport.OutcomeTable.Row] = []
        var problems: [String] = []
        for phase in sanitizer.phases {
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
        let handOffs = sanitizer.phases.flatMap(\.mutexHandOffs).count
        let detail: String
        if problems.isEmpty {
            detail = "ThreadSanitizer: on; no report during " + sanitizer.phases.map(\.name).joined(separator: " or ")
                + (handOffs > 0 ? "; \(handOffs) reports were accesses inside Synchronization.Mutex.withLock on both sides, whose futex hand-off ThreadSanitizer cannot see: not counted as races" : "")
        } else {
            detail = (sanitizer.blamed.contains(where: \.isRace) ? "data race (ThreadSanitizer): " : "ThreadSanitizer reported: ") + problems.joined(separator: "; ")
                + (sanitizer.reportFile.map { "; full text in \($0)" } ?? "")
        }
        return ConformanceVerdict(check: .init(name: name, passed: problems.isEmpty, detail: detail), outcomes: .init(check: name, rows: rows))
    }
}

extension ThreadSanitizerEvidence {
    /// The evidence of `phases`; when reports were blamed on the provider, their full text goes to a
    /// new file in `directory` (default: the temporary one).
    init(phases: [ThreadSanitizerPhase], provider: String, directory: String?) {
        self.init(isActive: ThreadSanitizerReports.isActive, phases: phases, reportFile: nil)
        let blamed = self.blamed
        if isActive, !blamed.isEmpty { reportFile = Self.write(blamed, provider: provider, directory: directory) }
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
