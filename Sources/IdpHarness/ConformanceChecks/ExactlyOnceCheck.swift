/// Every flow completed exactly once: its completion handler ran once, never twice, never not at
/// all.
struct ExactlyOnceCheck: ConformanceCheck {
    enum Outcome: String, CheckOutcome {
        case once = "completed once"
        case more = "completed more than once"
        case never = "never completed"

        static let acceptable: Set<Outcome> = [.once]
        static let stale: Set<Outcome> = [.never]
    }

    let name = ConformanceReport.CheckName.exactlyOnce.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let flows = evidence.flows else { return nil }
        var tally = OutcomeTally<Outcome>()
        tally.note(.once, count: flows.completions.values.filter { $0 == 1 }.count)
        for (flow, count) in flows.completions where count > 1 {
            tally.note(.more, problem: "\(flow) completed \(count) times")
        }
        for outcome in flows.outcomes where outcome.result == nil {
            tally.note(.never, problem: "\(outcome.flowId) never completed")
        }
        let completions = flows.completions.values.reduce(0, +)
        let detail = tally.problems.isEmpty ? "\(completions) completions for \(flows.outcomes.count) flows" : ConformanceBattery.list(tally.problems)
        return tally.verdict(name, also: flows.completions.count == flows.outcomes.count, detail: detail)
    }
}
