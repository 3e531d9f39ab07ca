/// Plain flows (users with credentials, neither re-asked nor cancelled), many at once from many OS
/// threads, each user's flows sharing one provider instance, all succeed. The detail also says how
/// far the flows' calls overlapped inside the provider (the calls each found there as it entered).
struct ConcurrentFlowsCheck: ConformanceCheck {
    enum Outcome: String, CheckOutcome {
        case succeeded = "succeeded"
        case failed = "ended with an error"
        case noCompletion = "no completion"

        static let acceptable: Set<Outcome> = [.succeeded]
        static let stale: Set<Outcome> = [.noCompletion]
    }

    let name = ConformanceReport.CheckName.concurrentFlows.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let flows = evidence.flows else { return nil }
        let plain = flows.plain
        var tally = OutcomeTally<Outcome>()
        for outcome in plain {
            let problem = "\(outcome.flowId) (\(flows.userId(of: outcome)), \(outcome.plan.client)): "
            switch outcome.result {
            case nil: tally.note(.noCompletion, problem: problem + "no completion")
            case let result? where result.hasError(): tally.note(.failed, problem: problem + (result.idpSdkError?.description ?? ""))
            case _?: tally.note(.succeeded)
            }
        }
        let overlap = flows.overlapSummary
        let detail = (tally.problems.isEmpty
            ? "\(plain.count) flows of \(Set(plain.map(\.plan.user)).count) users from \(evidence.configuration.threads) OS threads all succeeded"
            : "\(tally.problems.count) of \(plain.count) flows failed: " + ConformanceBattery.list(tally.problems))
            + "; calls in the provider at once: p50 \(overlap.p50), max \(overlap.max)"
        return tally.verdict(name, also: !plain.isEmpty, detail: detail)
    }
}
