/// Two-step flows are answered step by step, and a flow whose answer the IDP rejected is asked
/// again: the provider answers again (the flow then succeeds) or ends the flow with its own error.
/// Not resending a secret the IDP refused is a fair choice; anything else is a failure.
struct MultiStepCheck: ConformanceCheck {
    enum Outcome: String, CheckOutcome {
        case twoStepSucceeded = "two-step flow: answered both steps and succeeded"
        case answeredAgain = "re-asked after a rejection: answered again and succeeded"
        case gaveUp = "re-asked after a rejection: ended with the provider's own error"
        case twoStepShort = "two-step flow: ended before its second step"
        case twoStepFailed = "two-step flow: ended with an error"
        case neverReasked = "rejected, but the provider was never asked again"
        case otherError = "re-asked after a rejection: ended with an error that was not the provider's"
        case noCompletion = "no completion"

        static let acceptable: Set<Outcome> = [.twoStepSucceeded, .answeredAgain, .gaveUp]
        static let stale: Set<Outcome> = [.noCompletion]
    }

    let name = ConformanceReport.CheckName.multiStep.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let flows = evidence.flows else { return nil }
        var reasks = OutcomeTally<Outcome>()
        let reasked = flows.outcomes.filter(\.plan.corrupt)
        for outcome in reasked {
            let flow = outcome.flowId
            guard let result = outcome.result, let calls = flows.calls(of: outcome) else {
                reasks.note(.noCompletion, problem: "\(flow): no completion")
                continue
            }
            if !calls.sawRejection {
                reasks.note(.neverReasked, problem: "\(flow): the provider was never re-asked")
            } else if let error = result.idpSdkError {
                if error == calls.lastError {
                    reasks.note(.gaveUp)
                } else {
                    reasks.note(.otherError, problem: "\(flow): ended with \(error) after a re-ask")
                }
            } else {
                reasks.note(.answeredAgain)
            }
        }
        var steps = OutcomeTally<Outcome>()
        let stepwise = flows.plain.filter { $0.plan.client == ProviderConformanceKit.stepwiseClient }
        for outcome in stepwise {
            if let calls = flows.calls(of: outcome), calls.lastStep < 2 {
                steps.note(.twoStepShort, problem: "\(outcome.flowId): two-step client answered in \(calls.lastStep) step(s)")
            } else {
                switch outcome.result {
                case nil: steps.note(.noCompletion)
                case let result? where result.hasError(): steps.note(.twoStepFailed)
                case _?: steps.note(.twoStepSucceeded)
                }
            }
        }
        let problems = reasks.problems + steps.problems
        let detail = problems.isEmpty
            ? "\(stepwise.count) two-step flows; \(reasked.count) flows re-asked after a rejected answer: \(reasked.count - reasks[.gaveUp]) answered again and succeeded, \(reasks[.gaveUp]) ended with the provider's own error"
            : ConformanceBattery.list(problems)
        let all = OutcomeTally(counts: steps.counts.merging(reasks.counts, uniquingKeysWith: +))
        return all.verdict(name, detail: detail)
    }
}
