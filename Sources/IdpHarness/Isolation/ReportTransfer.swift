import Foundation

/// A report as the child process writes it for its parent (JSON), every field carried: the
/// parent returns the child's report as if it had run the kit itself. ``ConformanceReport/json()``
/// is the form for people's tools; this one is the kit's own, and round-trips.
struct ReportTransfer: Codable, Sendable {
    /// A check's verdict.
    struct CheckForm: Codable, Sendable, Equatable {
        let name: String
        let passed: Bool
        let detail: String
        let checked: Bool
        let exercised: Bool

        init(_ check: ConformanceReport.Check) {
            (name, passed, detail, checked, exercised) = (check.name, check.passed, check.detail, check.checked, check.exercised)
        }

        var check: ConformanceReport.Check { .init(name: name, passed: passed, detail: detail, checked: checked, exercised: exercised) }
    }

    /// A stuck flow.
    struct StuckFlowForm: Codable, Sendable {
        let flow: String, user: String, client: String
        let step: Int?, attempt: Int?
        let thread: String?
        let waited: Duration

        init(_ stuck: ConformanceReport.StuckFlow) {
            (flow, user, client, step, attempt, thread, waited) = (stuck.flow, stuck.user, stuck.client, stuck.step, stuck.attempt, stuck.thread, stuck.waited)
        }

        var stuckFlow: ConformanceReport.StuckFlow {
            .init(flow: flow, user: user, client: client, step: step, attempt: attempt, thread: thread, waited: waited)
        }
    }

    let providerName: String
    let checks: [CheckForm]
    let stuckFlows: [StuckFlowForm]
    let flows: Int, threads: Int, users: Int
    let elapsed: Duration
    /// p50, p99, max.
    let flowLatency: [Duration]
    /// p50, p99, max.
    let providerCallLatency: [Duration]
    let providerCalls: Int
    let peakSDKThreads: Int
    let threadSanitizer: Bool
    let outcomes: [ConformanceReport.OutcomeTable]
    let raceReportFile: String?
    let raceReports: [ThreadSanitizerReport]
    /// p50, max.
    let providerOverlap: [Int]
    let controlledSeed: UInt64
    let controlledSchedules: Int

    init(_ report: ConformanceReport) {
        providerName = report.providerName
        checks = report.checks.map(CheckForm.init)
        stuckFlows = report.stuckFlows.map(StuckFlowForm.init)
        (flows, threads, users, elapsed) = (report.flows, report.threads, report.users, report.elapsed)
        flowLatency = [report.flowLatency.p50, report.flowLatency.p99, report.flowLatency.max]
        providerCallLatency = [report.providerCallLatency.p50, report.providerCallLatency.p99, report.providerCallLatency.max]
        (providerCalls, peakSDKThreads) = (report.providerCalls, report.peakSDKThreads)
        (threadSanitizer, outcomes, raceReportFile, raceReports) = (report.threadSanitizer, report.outcomes, report.raceReportFile, report.raceReports)
        providerOverlap = [report.providerOverlap.p50, report.providerOverlap.max]
        (controlledSeed, controlledSchedules) = (report.controlledSeed, report.controlledSchedules)
    }

    /// The report again; ``ConformanceReport/execution`` is left for the parent to say.
    var report: ConformanceReport {
        func triple(_ values: [Duration]) -> (p50: Duration, p99: Duration, max: Duration) {
            values.count == 3 ? (values[0], values[1], values[2]) : (.zero, .zero, .zero)
        }
        var report = ConformanceReport(providerName: providerName, checks: checks.map(\.check), stuckFlows: stuckFlows.map(\.stuckFlow),
                                       flows: flows, threads: threads, users: users, elapsed: elapsed, flowLatency: triple(flowLatency),
                                       providerCallLatency: triple(providerCallLatency), providerCalls: providerCalls, peakSDKThreads: peakSDKThreads)
        (report.threadSanitizer, report.outcomes, report.raceReportFile, report.raceReports) = (threadSanitizer, outcomes, raceReportFile, raceReports)
        if providerOverlap.count == 2 { report.providerOverlap = (providerOverlap[0], providerOverlap[1]) }
        (report.controlledSeed, report.controlledSchedules) = (controlledSeed, controlledSchedules)
        return report
    }
}
