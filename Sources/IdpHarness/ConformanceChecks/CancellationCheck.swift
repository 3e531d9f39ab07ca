/// Flows cancelled right after they started complete once: cancelled, or done if they finished
/// first.
struct CancellationCheck: ConformanceCheck {
    enum Outcome: String, CheckOutcome {
        case cancelled = "cancelled"
        case finishedFirst = "finished before the cancel took effect"
        case otherError = "ended with an error other than cancelled"
        case noCompletion = "no completion after cancel"

        static let acceptable: Set<Outcome> = [.cancelled, .finishedFirst]
        static let stale: Set<Outcome> = [.noCompletion]
    }

    let name = ConformanceReport.CheckName.cancellation.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let flows = evidence.flows else { return nil }
        var tally = OutcomeTally<Outcome>()
        let cancelled = flows.outcomes.filter(\.plan.cancel)
        for outcome in cancelled {
            guard let result = outcome.result else {
                tally.note(.noCompletion, problem: "\(outcome.flowId): no completion after cancel")
                continue
            }
            switch result.idpSdkError {
            case nil: tally.note(.finishedFirst)
            case let error? where error.code == .cancelled: tally.note(.cancelled)
            case let error?: tally.note(.otherError, problem: "\(outcome.flowId): ended with \(error.description) after cancel")
            }
        }
        let detail = tally.problems.isEmpty
            ? "\(cancelled.count) flows cancelled while running completed once (\(tally[.cancelled]) cancelled, the rest had finished)"
            : ConformanceBattery.list(tally.problems)
        return tally.verdict(name, detail: detail)
    }
}
