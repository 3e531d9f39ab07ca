import IdpSdk
import IdpServer

/// What one run of the kit saw, for the checks to judge: plain values, read from the run's probes,
/// ledger, watchdog and IDP once the engine was done with every flow.
struct ConformanceEvidence: Sendable {
    /// The run's settings (some checks quote them).
    var configuration: ProviderConformanceKit.Configuration
    /// What the race hammer found; `nil` when it did not run.
    var hammer: RaceHammer.Findings?
    /// What the several-instances check's rounds found; `nil` when they did not run.
    var severalInstances: RaceHammer.Findings? = nil
    /// Why the several-instances rounds did not run although the run asked for them (one
    /// instance serves every user, say); `nil` when they ran or were not asked for.
    var severalInstancesNotExercised: String? = nil
    /// What the controlled phase found; `nil` when it did not run.
    var controlled: ControlledPhase.Findings? = nil
    /// Why the controlled phase did not run although the run asked for it.
    var controlledNotExercised: String? = nil
    /// ThreadSanitizer's reports during the run's phases.
    var threadSanitizer: ThreadSanitizerEvidence
    /// Why the run stopped before its flows (the IDP could not be set up), as a failed check.
    var stoppedBy: ConformanceReport.Check? = nil
    /// The engine's flows; `nil` in a run of the race hammer alone, or one stopped before them.
    var flows: FlowEvidence? = nil
    /// The flows under timeouts; `nil` without `providerWait`, or when a stuck flow stopped the run.
    var blocking: BlockingEvidence? = nil
    /// How long the run took: from the engine's flows on (the race hammer before them is not
    /// counted), or the whole run when it had no engine flows.
    var elapsed: Duration

    /// The report: every check's verdict and outcome table, ThreadSanitizer's part, and the
    /// figures.
    func report(providerName: String) -> ConformanceReport {
        let verdicts = ConformanceBattery.judge(self)
        var report: ConformanceReport
        if let flows {
            report = ConformanceReport(
                providerName: providerName, checks: verdicts.map(\.check), stuckFlows: flows.stuck, flows: flows.outcomes.count,
                threads: max(1, configuration.threads), users: max(1, configuration.users), elapsed: elapsed,
                flowLatency: Self.summary(flows.outcomes.filter { $0.result?.hasError() == false }.map(\.latency).sorted()),
                providerCallLatency: Self.summary(flows.callDurations), providerCalls: flows.callDurations.count,
                peakSDKThreads: flows.peakSDKThreads, providerOverlap: flows.overlapSummary)
        } else {
            report = ConformanceReport(
                providerName: providerName, checks: verdicts.map(\.check), stuckFlows: [], flows: 0, threads: configuration.hammerThreads,
                users: 0, elapsed: elapsed, flowLatency: (.zero, .zero, .zero), providerCallLatency: (.zero, .zero, .zero),
                providerCalls: 0, peakSDKThreads: 0)
        }
        report.outcomes = verdicts.compactMap(\.outcomes)
        (report.controlledSeed, report.controlledSchedules) = (configuration.controlledSeed, configuration.controlledSchedules)
        report.threadSanitizer = threadSanitizer.isActive
        if threadSanitizer.isActive {
            report.raceReports = threadSanitizer.blamed
            report.raceReportFile = threadSanitizer.reportFile
        }
        return report
    }

    /// p50, p99 and the maximum of `sorted`.
    static func summary(_ sorted: [Duration]) -> (p50: Duration, p99: Duration, max: Duration) {
        guard let last = sorted.last else { return (.zero, .zero, .zero) }
        func at(_ p: Double) -> Duration { sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))] }
        return (at(0.5), at(0.99), last)
    }
}

/// ThreadSanitizer's part of the evidence.
struct ThreadSanitizerEvidence: Sendable {
    /// Whether this process runs with ThreadSanitizer; without it nothing was checked.
    var isActive: Bool
    /// The reports of each phase (the race hammer's rounds, the engine's flows).
    var phases: [ThreadSanitizerPhase]
    /// The file holding the full text of the reports blamed on the provider, if there were any.
    var reportFile: String?

    /// The reports blamed on the provider (`Mutex` hand-offs excluded).
    var blamed: [ThreadSanitizerReport] { phases.flatMap(\.findings) }
}

/// The engine's flows of one run.
struct FlowEvidence: Sendable {
    /// Each flow's plan, result and latency.
    var outcomes: [Run.Outcome]
    /// The users, by the plans' user index.
    var users: [ProviderConformanceKit.User]
    /// What the probes noted of each flow's provider calls.
    var calls: [IdpSdkFlowID: ConformanceProbe.FlowCalls]
    /// The IDP's decisions on answers (codes issued, credentials rejected), by trace id.
    var decisions: [String: [AuditEntry]]
    /// Completions counted per flow.
    var completions: [IdpSdkFlowID: Int]
    /// The flows the watchdog found stuck.
    var stuck: [ConformanceReport.StuckFlow]
    /// Provider calls that ran off the SDK's threads, or inside a task, described.
    var misplacedCalls: [String]
    /// Time inside the provider, per call, sorted.
    var callDurations: [Duration]
    /// The most SDK threads alive at once.
    var peakSDKThreads: Int
    /// Per provider call, the calls inside the provider when it entered (itself included), sorted.
    var overlap: [Int] = []

    /// The median and the most of ``overlap``.
    var overlapSummary: (p50: Int, max: Int) {
        guard let most = overlap.last else { return (0, 0) }
        return (overlap[(overlap.count - 1) / 2], most)
    }

    /// Flows of users with credentials, neither re-asked nor cancelled.
    var plain: [Run.Outcome] {
        outcomes.filter { !$0.plan.expectsProviderError && !$0.plan.cancel && !$0.plan.corrupt }
    }

    /// What the probe noted of the flow's provider calls; `nil` for a flow without a result.
    func calls(of outcome: Run.Outcome) -> ConformanceProbe.FlowCalls? {
        outcome.result?.flowId.flatMap { calls[$0] }
    }

    /// The id of the flow's user.
    func userId(of outcome: Run.Outcome) -> String { users[outcome.plan.user].userId }
}

/// The flows run under flow timeouts shorter and longer than the provider's wait.
struct BlockingEvidence: Sendable {
    /// The flows of one timeout.
    struct Round: Sendable {
        /// The flow timeout.
        let timeout: Duration
        /// Whether the timeout is above the provider's wait (the flows must succeed) or below it
        /// (they must time out).
        let expectSuccess: Bool
        /// Each flow's plan, result and latency.
        var outcomes: [Run.Outcome]
        /// Completions counted per flow.
        var completions: [IdpSdkFlowID: Int]
    }

    /// Flows per round.
    let flows: Int
    /// The rounds: the shorter timeout first.
    var rounds: [Round]
}
