/// The provider was only ever called on the SDK's own threads, outside any task: never on the
/// caller's thread, the main thread or Swift concurrency's pool.
struct SDKThreadsCheck: ConformanceCheck {
    enum Outcome: String, CheckOutcome {
        case sdkThread = "called on an SDK thread, outside any task"
        case elsewhere = "called on another thread, or inside a task"

        static let acceptable: Set<Outcome> = [.sdkThread]
    }

    let name = ConformanceReport.CheckName.providerOnSDKThreads.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let flows = evidence.flows else { return nil }
        var tally = OutcomeTally<Outcome>()
        tally.note(.sdkThread, count: max(0, flows.callDurations.count - flows.misplacedCalls.count))
        for call in flows.misplacedCalls { tally.note(.elsewhere, problem: call) }
        let detail = tally.problems.isEmpty ? "every call ran on an SDK thread, outside any task" : ConformanceBattery.list(tally.problems)
        return tally.verdict(name, detail: detail)
    }
}
