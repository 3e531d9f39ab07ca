/// A provider that blocks: with a flow timeout of half its wait every flow ends once with
/// `timedOut`; with a timeout well above it every flow succeeds.
struct BlockingCheck: ConformanceCheck {
    enum Outcome: String, CheckOutcome {
        case timedOut = "timeout below the provider's wait: timed out"
        case succeeded = "timeout above the provider's wait: succeeded"
        case notTimedOut = "timeout below the provider's wait: ended otherwise"
        case notSucceeded = "timeout above the provider's wait: did not succeed"
        case miscounted = "a round's completions were not one per flow"

        static let acceptable: Set<Outcome> = [.timedOut, .succeeded]
    }

    let name = ConformanceReport.CheckName.blockingUnderTimeouts.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let blocking = evidence.blocking else { return nil }
        var tally = OutcomeTally<Outcome>()
        for round in blocking.rounds {
            let completions = round.completions.values.reduce(0, +)
            if round.completions.values.contains(where: { $0 > 1 }) || completions != blocking.flows {
                tally.note(.miscounted, problem: "timeout \(round.timeout): \(completions) completions for \(blocking.flows) flows")
            }
            for outcome in round.outcomes {
                if round.expectSuccess, outcome.result?.hasError() == false {
                    tally.note(.succeeded)
                } else if !round.expectSuccess, outcome.result?.idpSdkError?.code == .timedOut {
                    tally.note(.timedOut)
                } else {
                    tally.note(round.expectSuccess ? .notSucceeded : .notTimedOut,
                               problem: "timeout \(round.timeout): \(outcome.flowId) ended with \(outcome.result?.description ?? "nothing")")
                }
            }
        }
        let detail = tally.problems.isEmpty
            ? "\(blocking.flows) flows with a timeout of half the provider's wait each ended once with timedOut; with a timeout well above it all succeeded"
            : tally.problems.prefix(5).joined(separator: "; ")
        return tally.verdict(name, detail: detail)
    }
}
