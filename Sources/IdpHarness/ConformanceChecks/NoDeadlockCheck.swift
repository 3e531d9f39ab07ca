/// No flow waited longer than the hang timeout for its completion; a watchdog named each one that
/// did, with where it was stuck, and cancelled it.
struct NoDeadlockCheck: ConformanceCheck {
    enum Outcome: String, CheckOutcome {
        case inTime = "completed within the hang timeout"
        case stuck = "stuck past the hang timeout, then cancelled"

        static let acceptable: Set<Outcome> = [.inTime]
        static let stale: Set<Outcome> = [.stuck]
    }

    let name = ConformanceReport.CheckName.noDeadlock.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let flows = evidence.flows else { return nil }
        var tally = OutcomeTally<Outcome>()
        tally.note(.inTime, count: max(0, flows.outcomes.count - flows.stuck.count))
        for stuck in flows.stuck { tally.note(.stuck, problem: stuck.description) }
        let detail = flows.stuck.isEmpty ? "no flow waited longer than \(evidence.configuration.hangTimeout)"
            : "\(flows.stuck.count) stuck (the run stopped early): " + ConformanceBattery.list(tally.problems)
        return tally.verdict(name, detail: detail)
    }
}
