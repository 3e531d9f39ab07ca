import IdpPrimitives

/// What the conformance kit found for one provider: a verdict per check, and the figures it
/// measured.
public struct ConformanceReport: Sendable, CustomStringConvertible {
    /// One check's verdict.
    public struct Check: Sendable, Equatable {
        public let name: String
        public let passed: Bool
        /// What held, or what did not (naming flows, users, threads).
        public let detail: String
    }

    /// A stuck flow, as the watchdog saw it.
    public struct StuckFlow: Sendable, Equatable, CustomStringConvertible {
        public let flow: String
        public let user: String
        public let client: String
        /// The step and attempt the provider was asked, if the flow was inside the provider.
        public let step: Int?
        public let attempt: Int?
        /// The thread the provider was running on, if the flow was inside it.
        public let thread: String?
        public let waited: Duration

        public var description: String {
            if let thread, let step, let attempt {
                return "\(flow) (user \(user), client \(client)) stuck in the provider at step \(step) attempt \(attempt) on thread \(thread) for \(waited)"
            }
            return "\(flow) (user \(user), client \(client)) stuck outside the provider for \(waited)"
        }
    }

    public let providerName: String
    public let checks: [Check]
    public let stuckFlows: [StuckFlow]
    /// Flows run in all, and how many OS threads started them.
    public let flows: Int
    public let threads: Int
    public let users: Int
    public let elapsed: Duration
    /// End-to-end flow latency percentiles (p50, p99, max), successful flows only.
    public let flowLatency: (p50: Duration, p99: Duration, max: Duration)
    /// Time inside `provideCredentials` (p50, p99, max).
    public let providerCallLatency: (p50: Duration, p99: Duration, max: Duration)
    public let providerCalls: Int
    public let peakSDKThreads: Int

    /// Whether every check held.
    public var passed: Bool { checks.allSatisfy(\.passed) }

    /// The check with this name.
    public func check(_ name: String) -> Check? { checks.first { $0.name == name } }

    /// Flows per second over the whole run.
    public var throughput: Double {
        let seconds = Self.seconds(elapsed)
        return seconds > 0 ? Double(flows) / seconds : 0
    }

    /// A Markdown report: the verdicts, then the figures.
    public var description: String {
        var lines = ["### \(providerName): \(passed ? "passed" : "FAILED")", "", "| check | verdict | detail |", "|---|---|---|"]
        for check in checks {
            lines.append("| \(check.name) | \(check.passed ? "held" : "**failed**") | \(check.detail.replacingOccurrences(of: "|", with: "/")) |")
        }
        lines.append("")
        lines.append("\(flows) flows from \(threads) OS threads over \(users) users in \(Self.format(elapsed)) s (\(String(format: "%.0f", throughput)) flows/s); "
            + "flow latency p50 \(Self.milliseconds(flowLatency.p50)) ms, p99 \(Self.milliseconds(flowLatency.p99)) ms, max \(Self.milliseconds(flowLatency.max)) ms; "
            + "\(providerCalls) provider calls, p50 \(Self.microseconds(providerCallLatency.p50)) µs, p99 \(Self.microseconds(providerCallLatency.p99)) µs, max \(Self.microseconds(providerCallLatency.max)) µs; "
            + "peak SDK threads \(peakSDKThreads)")
        for stuck in stuckFlows { lines.append("- stuck: \(stuck)") }
        return lines.joined(separator: "\n")
    }

    static func seconds(_ duration: Duration) -> Double {
        duration.timeInterval
    }

    static func format(_ duration: Duration) -> String { String(format: "%.1f", seconds(duration)) }
    static func milliseconds(_ duration: Duration) -> String { String(format: "%.2f", seconds(duration) * 1e3) }
    static func microseconds(_ duration: Duration) -> String { String(format: "%.1f", seconds(duration) * 1e6) }
}
