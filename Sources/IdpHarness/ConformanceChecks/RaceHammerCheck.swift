/// Every answer the race hammer's direct calls got was right, and every round ended within the
/// hang timeout. The answers after a round's expiry crossing are the expiry check's when the
/// provider read the kit's clock after it.
struct RaceHammerCheck: ConformanceCheck {
    let name = ConformanceReport.CheckName.raceHammer.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let hammer = evidence.hammer else { return nil }
        let tally = OutcomeTally(counts: hammer.outcomes)
        let table = tally.table(check: name)
        let calls = hammer.outcomes.values.reduce(0, +)
        let storms = hammer.crossings.contains(where: \.read)
        let instances = hammer.instances > 1 ? " (\(hammer.instances) of each user, each thread calling its own)" : ""
        let detail: String
        if let stale = hammer.staleRound, !hammer.staleAfterCrossing {
            detail = "stale: round \(stale) did not end within the hang timeout (a provider call never returned)"
        } else if table.acceptable {
            detail = "\(calls) direct calls in a warm-up and \(hammer.roundsRun) rounds of fresh instances\(instances), \(hammer.threads) OS threads released together: every answer right"
                + (storms ? " (the answers after the rounds' expiry crossings: see expiry storms)" : "")
                + (hammer.stoppedAfterRace ? " (it stopped there: ThreadSanitizer had found a race)" : "")
        } else {
            detail = "\(table.rows.filter { $0.grade != .acceptable }.map(\.count).reduce(0, +)) of \(calls) answers forbidden: "
                + hammer.examples.joined(separator: "; ")
        }
        return ConformanceVerdict(check: .init(name: name, passed: table.acceptable, detail: detail), outcomes: table)
    }
}
