/// Flows for users the provider has no credentials for end with exactly the error the provider
/// returned.
struct ErrorPropagationCheck: ConformanceCheck {
    enum Outcome: String, CheckOutcome {
        case providersError = "ended with exactly the provider's error"
        case answered = "the provider answered instead of returning an error"
        case otherEnd = "ended otherwise than with the provider's error"
        case noCompletion = "no completion"

        static let acceptable: Set<Outcome> = [.providersError]
        static let stale: Set<Outcome> = [.noCompletion]
    }

    let name = ConformanceReport.CheckName.errorPropagation.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let flows = evidence.flows else { return nil }
        var tally = OutcomeTally<Outcome>()
        let errorFlows = flows.outcomes.filter(\.plan.expectsProviderError)
        for outcome in errorFlows {
            let flow = outcome.flowId
            guard let result = outcome.result, result.flowId != nil else {
                tally.note(.noCompletion, problem: "\(flow): no completion")
                continue
            }
            let ended = result.idpSdkError?.description ?? "a code"
            guard let returned = flows.calls(of: outcome)?.lastError else {
                tally.note(.answered, problem: "\(flow) (no credentials): the provider answered instead of returning an error; the flow ended with \(ended)")
                continue
            }
            if result.idpSdkError == returned {
                tally.note(.providersError)
            } else {
                tally.note(.otherEnd, problem: "\(flow): the provider returned \(returned) but the flow ended with \(ended)")
            }
        }
        let detail = tally.problems.isEmpty
            ? (errorFlows.isEmpty ? "not exercised" : "\(errorFlows.count) flows without credentials ended with exactly the provider's error; the other flows were undisturbed")
            : ConformanceBattery.list(tally.problems)
        return tally.verdict(name, detail: detail)
    }
}
