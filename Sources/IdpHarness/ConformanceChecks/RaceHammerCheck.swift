/// Every answer the race hammer's direct calls got was right, and every round ended within the
/// hang timeout.
struct RaceHammerCheck: ConformanceCheck {
    let name = "race hammer"

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let hammer = evidence.hammer else { return nil }
        let tally = OutcomeTally(counts: hammer.outcomes)
        let table = tally.table(check: name)
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
        return ConformanceVerdict(check: .init(name: name, passed: table.acceptable, detail: detail), outcomes: table)
    }
}
