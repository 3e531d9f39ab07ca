extension ConformanceReport {
    /// The name of a check of the kit, as ``Check/name`` holds it and as ``check(_:)`` looks it up.
    ///
    /// ```swift
    /// let controlled = report.check(.controlledInterleavings)
    /// #expect(controlled?.passed == true, "\(controlled?.detail ?? "")")
    /// ```
    ///
    /// Every check the kit reports has a constant here; a string literal is read as a name too.
    public struct CheckName: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name as the report prints it.
        public let rawValue: String

        /// The check named `rawValue`.
        /// - Parameter rawValue: The name as the report prints it.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The check named `value`.
        /// - Parameter value: The name as the report prints it.
        public init(stringLiteral value: String) { rawValue = value }

        /// The name as the report prints it.
        public var description: String { rawValue }

        /// Fresh instances called at once from OS threads released together.
        public static let raceHammer = CheckName(rawValue: "race hammer")
        /// Two instances of each user answering at once.
        public static let severalInstances = CheckName(rawValue: "several instances")
        /// Calls at once after the kit's clock moved past every cached secret's expiry.
        public static let expiryStorms = CheckName(rawValue: "expiry storms")
        /// The provider's threads, tasks and actors run one at a time, in orders chosen from a seed.
        public static let controlledInterleavings = CheckName(rawValue: "controlled interleavings")
        /// ThreadSanitizer's reports during the run.
        public static let noDataRace = CheckName(rawValue: "no data race (ThreadSanitizer)")
        /// The engine's flows from many OS threads at once.
        public static let concurrentFlows = CheckName(rawValue: "concurrent flows")
        /// Two-step clients and re-asks after a wrong answer.
        public static let multiStep = CheckName(rawValue: "multi-step and re-asks")
        /// Every code went to its own flow's user.
        public static let noCrossTalk = CheckName(rawValue: "no cross-talk")
        /// The provider's errors reached the caller unchanged.
        public static let errorPropagation = CheckName(rawValue: "error propagation")
        /// Flows cancelled while the provider ran.
        public static let cancellation = CheckName(rawValue: "cancellation")
        /// Every flow completed exactly once.
        public static let exactlyOnce = CheckName(rawValue: "exactly-once completion")
        /// No flow stuck.
        public static let noDeadlock = CheckName(rawValue: "no deadlock")
        /// Every call ran on an SDK thread, outside any task.
        public static let providerOnSDKThreads = CheckName(rawValue: "provider on SDK threads")
        /// A provider that blocks, under the flows' timeouts.
        public static let blockingUnderTimeouts = CheckName(rawValue: "blocking under timeouts")
        /// The child process the run happened in did not crash.
        public static let processSurvived = CheckName(rawValue: "process survived")
        /// The in-process IDP the flows need could be set up.
        public static let settingUpTheIDP = CheckName(rawValue: "setting up the IDP")
        /// The kit's own run ended as planned.
        public static let kitRun = CheckName(rawValue: "the kit's run")
        /// A child process could run the call (isolation `.childProcess`).
        public static let crashIsolation = CheckName(rawValue: "crash isolation")
        /// The child process found the call it was started for.
        public static let run = CheckName(rawValue: "run")
        /// The kit's configuration, as the environment may change it, could be read.
        public static let configuration = CheckName(rawValue: "configuration")

        /// Every name above: the battery's checks in the report's order, then those a run that
        /// crashed, stopped early or did not run reports.
        public static let all: [CheckName] = [
            .raceHammer, .severalInstances, .expiryStorms, .controlledInterleavings, .noDataRace, .concurrentFlows, .multiStep, .noCrossTalk,
            .errorPropagation, .cancellation, .exactlyOnce, .noDeadlock, .providerOnSDKThreads, .blockingUnderTimeouts, .processSurvived,
            .settingUpTheIDP, .kitRun, .crashIsolation, .run, .configuration,
        ]
    }
}
