import Foundation
import IdpPrimitives

/// What the conformance kit found for one provider: a verdict per check, the outcomes it saw as
/// tables (in the manner of jcstress), whether ThreadSanitizer was looking, and the figures it
/// measured. ``description`` is Markdown; ``json()`` the same for machines.
public struct ConformanceReport: Sendable, CustomStringConvertible {
    /// One check's verdict.
    public struct Check: Sendable, Equatable {
        /// The check's name, as the report's table shows it.
        public let name: String
        /// Whether the check held; `true` also for a check that could not look (see ``checked``)
        /// or was not exercised (see ``exercised``), so that neither fails the report.
        public let passed: Bool
        /// What held, or what did not (naming flows, users, threads).
        public let detail: String
        /// `false` when the check could not look: data races without ThreadSanitizer.
        public let checked: Bool
        /// `false` when the provider never took the path the check judges: expiry, when it never
        /// read the kit's clock after a crossing; several instances, when one instance serves
        /// every user. Such a check did not pass; it says what it could not exercise.
        public let exercised: Bool

        /// A check's verdict.
        /// - Parameters:
        ///   - name: The check's name.
        ///   - passed: Whether the check held.
        ///   - detail: What held, or what did not.
        ///   - checked: `false` when the check could not look.
        ///   - exercised: `false` when the provider never took the path the check judges.
        package init(name: String, passed: Bool, detail: String, checked: Bool = true, exercised: Bool = true) {
            self.name = name
            self.passed = passed
            self.detail = detail
            self.checked = checked
            self.exercised = exercised
        }

        /// "held", "FAILED", "not checked" or "not exercised".
        public var verdict: String { !exercised ? "not exercised" : !checked ? "not checked" : passed ? "held" : "FAILED" }
    }

    /// How an outcome is graded, as jcstress grades them.
    public enum Grade: String, Sendable, Codable {
        /// What a correct provider may do.
        case acceptable
        /// What a correct provider never does.
        case forbidden
        /// No outcome: the call or round did not end within the hang timeout.
        case stale
        /// What the check judges did not happen: the provider did not read the kit's clock after
        /// an expiry crossing, or one instance serves every user. Neither fails nor passes.
        case notExercised = "not exercised"
    }

    /// One check's outcomes: each distinct outcome seen, how often, and its grade.
    public struct OutcomeTable: Sendable, Equatable, Codable {
        /// One outcome of a check and how often it was seen.
        public struct Row: Sendable, Equatable, Codable {
            /// The outcome, in words.
            public let outcome: String
            /// How often it was seen.
            public let count: Int
            /// Whether it is acceptable, forbidden or stale.
            public let grade: Grade
        }

        /// The check whose outcomes these are.
        public let check: String
        /// The outcomes seen, one row each.
        public let rows: [Row]

        /// Whether no outcome was forbidden or stale.
        public var acceptable: Bool { rows.allSatisfy { $0.grade == .acceptable || $0.grade == .notExercised || $0.count == 0 } }
    }

    /// ThreadSanitizer in this process: "on" (the kit read its reports) or "off" (races were not
    /// checked).
    public var threadSanitizer: Bool = false
    /// Outcome tables, one per check that counts outcomes.
    public var outcomes: [OutcomeTable] = []
    /// The file holding the full text of the ThreadSanitizer reports blamed on this provider, if any.
    public var raceReportFile: String?
    /// The reports blamed on this provider (Mutex hand-offs excluded).
    public var raceReports: [ThreadSanitizerReport] = []
    /// Which process ran the kit (see ``ProviderConformanceKit/Isolation``), and how a child
    /// process that crashed or hung ended.
    public var execution: Execution = .inProcess(note: nil)

    /// A stuck flow, as the watchdog saw it.
    public struct StuckFlow: Sendable, Equatable, CustomStringConvertible {
        /// The flow's id.
        public let flow: String
        /// The flow's user.
        public let user: String
        /// The IDP client the flow ran.
        public let client: String
        /// The step and attempt the provider was asked, if the flow was inside the provider.
        public let step: Int?
        /// The attempt at that step.
        public let attempt: Int?
        /// The thread the provider was running on, if the flow was inside it.
        public let thread: String?
        /// How long the flow had been waiting when the watchdog reported it.
        public let waited: Duration

        /// The flow, its user and client, and where it was stuck (the provider's step, attempt and
        /// thread, or outside the provider) for how long.
        public var description: String {
            if let thread, let step, let attempt {
                return "\(flow) (user \(user), client \(client)) stuck in the provider at step \(step) attempt \(attempt) on thread \(thread) for \(waited)"
            }
            return "\(flow) (user \(user), client \(client)) stuck outside the provider for \(waited)"
        }
    }

    /// The provider's name, as given to the kit.
    public let providerName: String
    /// Every check's verdict, in the order the kit ran them.
    public var checks: [Check]
    /// The flows the watchdog found stuck; empty when none hung.
    public let stuckFlows: [StuckFlow]
    /// Flows run in all, and how many OS threads started them.
    public let flows: Int
    /// The OS threads that started flows.
    public let threads: Int
    /// The users the flows were spread over.
    public let users: Int
    /// How long the battery took.
    public let elapsed: Duration
    /// End-to-end flow latency percentiles (p50, p99, max), successful flows only.
    public let flowLatency: (p50: Duration, p99: Duration, max: Duration)
    /// Time inside `provideCredentials` (p50, p99, max).
    public let providerCallLatency: (p50: Duration, p99: Duration, max: Duration)
    /// How often the provider was called.
    public let providerCalls: Int
    /// The most SDK threads alive at once during the run.
    public let peakSDKThreads: Int
    /// Provider calls inside the provider at once during the engine's flows, as each call found
    /// on entering it (itself included): the median and the most.
    public var providerOverlap: (p50: Int, max: Int) = (0, 0)

    /// The controlled phase's seed in this run (the configuration's, or the environment's
    /// ``ProviderConformanceKit/controlledSeedVariable``): with it, a failure reruns the same way.
    public var controlledSeed: UInt64 = 0
    /// The controlled phase's schedule budget in this run (0: it did not run).
    public var controlledSchedules = 0

    /// Whether every check held.
    public var passed: Bool { checks.allSatisfy(\.passed) }

    /// The check with this name (a ``CheckName`` constant, or its name as a string literal), or
    /// `nil` when the run did not report it.
    public func check(_ name: CheckName) -> Check? { checks.first { $0.name == name.rawValue } }

    /// The one-line reproducer of the controlled phase's failing schedule, shrunk, for
    /// ``ProviderConformanceKit/replay(_:times:shrinking:name:instances:makeProvider:)``; `nil` when no
    /// schedule failed.
    public var controlledReproducer: String? {
        guard let check = check(.controlledInterleavings), !check.passed,
              let range = check.detail.range(of: ControlledInterleavingsCheck.reproducerLabel) else { return nil }
        return String(check.detail[range.upperBound...])
    }

    /// Flows per second over the whole run.
    public var throughput: Double {
        let seconds = Self.seconds(elapsed)
        return seconds > 0 ? Double(flows) / seconds : 0
    }

    /// A Markdown report: the verdicts, then the figures.
    public var description: String {
        var lines = ["### \(providerName): \(passed ? "passed" : "FAILED")", ""]
        if execution != .inProcess(note: nil) { lines += [execution.summary, ""] }
        lines += [threadSanitizer ? "ThreadSanitizer: on (its reports during each phase are part of the verdict)"
                         : "ThreadSanitizer: off (data races were not checked; run under `swift test --sanitize=thread`)",
                     "", "| check | verdict | detail |", "|---|---|---|"]
        for check in checks {
            lines.append("| \(check.name) | \(check.passed || !check.checked ? check.verdict : "**failed**") | \(check.detail.replacingOccurrences(of: "|", with: "/")) |")
        }
        if let crash = execution.crash { lines += crashSection(crash) }
        for table in outcomes {
            lines += ["", "| \(table.check): outcome | count | grade |", "|---|---:|---|"]
            for row in table.rows { lines.append("| \(row.outcome.replacingOccurrences(of: "|", with: "/")) | \(row.count) | \(row.grade.rawValue) |") }
        }
        if let raceReportFile { lines += ["", "Full ThreadSanitizer report text: `\(raceReportFile)`"] }
        guard flows > 0 else { return lines.joined(separator: "\n") }
        lines.append("")
        lines.append("\(flows) flows from \(threads) OS threads over \(users) users in \(Self.format(elapsed)) s (\(String(format: "%.0f", throughput)) flows/s); "
            + "flow latency p50 \(Self.milliseconds(flowLatency.p50)) ms, p99 \(Self.milliseconds(flowLatency.p99)) ms, max \(Self.milliseconds(flowLatency.max)) ms; "
            + "\(providerCalls) provider calls, p50 \(Self.microseconds(providerCallLatency.p50)) µs, p99 \(Self.microseconds(providerCallLatency.p99)) µs, max \(Self.microseconds(providerCallLatency.max)) µs; "
            + "calls in the provider at once p50 \(providerOverlap.p50), max \(providerOverlap.max); peak SDK threads \(peakSDKThreads)")
        for stuck in stuckFlows { lines.append("- stuck: \(stuck)") }
        return lines.joined(separator: "\n")
    }

    /// The report as pretty-printed JSON (sorted keys): verdicts, outcome tables, ThreadSanitizer
    /// and figures.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(JSONForm(self))) ?? Data(), as: UTF8.self)
    }

    private struct JSONForm: Encodable {
        struct CheckForm: Encodable {
            let name: String, verdict: String, passed: Bool, checked: Bool, exercised: Bool, detail: String
        }
        let provider: String
        let passed: Bool
        let threadSanitizer: String
        let checks: [CheckForm]
        let outcomes: [OutcomeTable]
        let raceReportFile: String?
        let raceReports: [ThreadSanitizerReport]
        let flows: Int, threads: Int, users: Int, elapsedSeconds: Double, providerCalls: Int, peakSdkThreads: Int
        let flowLatencyMs: [String: Double], providerCallLatencyUs: [String: Double], providerOverlap: [String: Int]
        let stuckFlows: [String]
        let execution: String

        init(_ report: ConformanceReport) {
            provider = report.providerName
            passed = report.passed
            threadSanitizer = report.threadSanitizer ? "on" : "off"
            checks = report.checks.map {
                CheckForm(name: $0.name, verdict: $0.verdict, passed: $0.passed, checked: $0.checked, exercised: $0.exercised, detail: $0.detail)
            }
            outcomes = report.outcomes
            raceReportFile = report.raceReportFile
            raceReports = report.raceReports
            (flows, threads, users) = (report.flows, report.threads, report.users)
            elapsedSeconds = report.elapsed.timeInterval
            providerCalls = report.providerCalls
            peakSdkThreads = report.peakSDKThreads
            let flow = report.flowLatency, call = report.providerCallLatency
            flowLatencyMs = ["p50": flow.p50.timeInterval * 1e3, "p99": flow.p99.timeInterval * 1e3, "max": flow.max.timeInterval * 1e3]
            providerCallLatencyUs = ["p50": call.p50.timeInterval * 1e6, "p99": call.p99.timeInterval * 1e6, "max": call.max.timeInterval * 1e6]
            providerOverlap = ["p50": report.providerOverlap.p50, "max": report.providerOverlap.max]
            stuckFlows = report.stuckFlows.map(\.description)
            execution = report.execution.summary
        }

        enum CodingKeys: String, CodingKey {
            case provider, passed, threadSanitizer = "thread_sanitizer", checks, outcomes, raceReportFile = "race_report_file"
            case raceReports = "race_reports", flows, threads, users, elapsedSeconds = "elapsed_s", providerCalls = "provider_calls"
            case peakSdkThreads = "peak_sdk_threads", flowLatencyMs = "flow_latency_ms", providerCallLatencyUs = "provider_call_latency_us"
            case providerOverlap = "provider_overlap"
            case stuckFlows = "stuck_flows", execution
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        duration.timeInterval
    }

    static func format(_ duration: Duration) -> String { String(format: "%.1f", seconds(duration)) }
    static func milliseconds(_ duration: Duration) -> String { String(format: "%.2f", seconds(duration) * 1e3) }
    static func microseconds(_ duration: Duration) -> String { String(format: "%.1f", seconds(duration) * 1e6) }
}
