/// Every code the IDP issued went to the flow's own user, and no flow was answered with another
/// user's name (the IDP's audit log, by the flows' trace ids).
struct CrossTalkCheck: ConformanceCheck {
    enum Outcome: String, CheckOutcome {
        case ownUser = "no code or answer for another user"
        case codeForAnotherUser = "a code issued to another user"
        case anotherUsersName = "answered with another user's name"

        static let acceptable: Set<Outcome> = [.ownUser]
    }

    let name = ConformanceReport.CheckName.noCrossTalk.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let flows = evidence.flows else { return nil }
        var tally = OutcomeTally<Outcome>()
        for outcome in flows.outcomes {
            let entries = flows.decisions[outcome.plan.trace.traceId] ?? []
            let expected = flows.userId(of: outcome)
            let codes = entries.filter { $0.event == .codeIssued && $0.userId != expected }
            let names = entries.filter { $0.event == .credentialsRejected && $0.detail.hasSuffix("username_mismatch") }
            for entry in codes {
                tally.note(problem: "\(outcome.flowId) of \(expected) got a code for \(entry.userId ?? "?")")
            }
            for _ in names {
                tally.note(problem: "\(outcome.flowId) of \(expected) was answered with another user's name")
            }
            tally.note(!codes.isEmpty ? .codeForAnotherUser : !names.isEmpty ? .anotherUsersName : .ownUser)
        }
        let detail = tally.problems.isEmpty ? "every code went to its own flow's user" : ConformanceBattery.list(tally.problems)
        return tally.verdict(name, detail: detail)
    }
}
