/// Two or more instances from the per-user factory answer for the same user at once, as an app's
/// two screens do when each creates its own handler: state the instances share behind the
/// provider (a keychain, a static cache, a singleton) is exercised as the app exercises it. Every
/// answer must be right, each instance's counted in its own rows.
///
/// With a shared provider (`sharedProvider:`) one instance serves every user, so there is nothing
/// to exercise; the check says so and neither passes nor fails.
struct SeveralInstancesCheck: ConformanceCheck {
    let name = ConformanceReport.CheckName.severalInstances.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        if let reason = evidence.severalInstancesNotExercised {
            return ConformanceVerdict(
                check: .init(name: name, passed: true, detail: "not exercised: \(reason)", exercised: false),
                outcomes: .init(check: name, rows: [.init(outcome: "not exercised: \(reason)", count: 1, grade: .notExercised)]))
        }
        guard let found = evidence.severalInstances else { return nil }
        var rows: [ConformanceReport.OutcomeTable.Row] = []
        for instance in 0..<found.instances {
            for outcome in HammerOutcome.allCases {
                guard let count = found.answers[.init(instance: instance, outcome: outcome, afterCrossing: false)] else { continue }
                rows.append(.init(outcome: "instance \(instance): \(outcome.rawValue)", count: count, grade: outcome.grade))
            }
        }
        let table = ConformanceReport.OutcomeTable(check: name, rows: rows)
        let calls = rows.map(\.count).reduce(0, +)
        let detail: String
        if let stale = found.staleRound, !found.staleAfterCrossing {
            detail = "stale: round \(stale) did not end within the hang timeout (a provider call never returned)"
        } else if table.acceptable {
            detail = "\(found.instances) instances of each of \(found.usersAsked.count) users, fresh each round, answered for their user at once "
                + "from \(found.threads) OS threads in a warm-up and \(found.roundsRun) rounds: all \(calls) answers right"
                + (found.crossings.contains(where: \.read) ? " (the answers after the rounds' expiry crossings: see expiry storms)" : "")
        } else {
            detail = "\(rows.filter { $0.grade != .acceptable }.map(\.count).reduce(0, +)) of \(calls) answers forbidden: "
                + found.examples.joined(separator: "; ")
        }
        return ConformanceVerdict(check: .init(name: name, passed: table.acceptable, detail: detail), outcomes: table)
    }
}
