extension ConformanceReport {
    /// Which process ran the kit, and how a child process ended when it ended before its report.
    ///
    /// ```swift
    /// if let crash = report.execution.crash {
    ///     print(crash.summary)   // crashed: signal 11 (SIGSEGV) during the race hammer, round 3 of 8
    /// }
    /// ```
    public enum Execution: Sendable, Equatable {
        /// The calling process ran it; `note` says why, when crash isolation was asked for
        /// (``ProviderConformanceKit/Isolation/automatic``) but was not available.
        case inProcess(note: String?)
        /// A child process ran it and handed its report back.
        case childProcess(pid: Int32)
        /// A child process ran it and crashed, hung or exited before its report.
        case childProcessDied(Crash)
        /// Not run: `reason` says why (a kit call in a child process started for another kit
        /// call, or crash isolation required but not available).
        case notRun(reason: String)

        /// The child's end, when it ended before its report.
        public var crash: Crash? {
            if case .childProcessDied(let crash) = self { return crash }
            return nil
        }

        /// One line for the report: where the run ran.
        public var summary: String {
            switch self {
            case .inProcess(nil): "Ran in this process (isolation: inProcess)"
            case .inProcess(let note?): "Ran in this process: \(note)"
            case .childProcess(let pid): "Ran in a child process (pid \(pid))"
            case .childProcessDied(let crash): "Ran in a child process (pid \(crash.pid)), which \(crash.summary)"
            case .notRun(let reason): "Not run: \(reason)"
            }
        }
    }

    /// How a child process that ran the kit ended before its report, and where it was then.
    public struct Crash: Sendable, Equatable {
        /// How the child ended.
        public enum Cause: Sendable, Equatable {
            /// A fatal signal (its number).
            case signal(Int32)
            /// It exited with this status (ThreadSanitizer with `halt_on_error`, an `exit` call).
            case exit(Int32)
            /// It was still running after the time limit, and was killed.
            case hung(limit: Duration)
        }

        /// The child's process id.
        public let pid: Int32
        /// How it ended.
        public let cause: Cause
        /// The phase it was in: "the race hammer", "the engine flows", …
        public let phase: String
        /// The race hammer's round it was in (0: the warm-up), during the race hammer.
        public let hammerRound: Int?
        /// The race hammer's rounds in all (after the warm-up).
        public let hammerRounds: Int?
        /// The Swift runtime's fatal error line, if it printed one ("Fatal error: …").
        public let message: String?
        /// The crashed thread's stack, innermost frame first, as the crash output showed it.
        public let stack: [String]
        /// The file holding the child's whole output (standard output and error).
        public let outputFile: String?

        /// A crash record.
        /// - Parameters:
        ///   - pid: The child's process id.
        ///   - cause: How it ended.
        ///   - phase: The phase it was in.
        ///   - hammerRound: The race hammer's round, during the hammer.
        ///   - hammerRounds: The hammer's rounds in all.
        ///   - message: The runtime's fatal error line.
        ///   - stack: The crashed thread's frames, innermost first.
        ///   - outputFile: The file holding the child's output.
        package init(pid: Int32, cause: Cause, phase: String, hammerRound: Int? = nil, hammerRounds: Int? = nil, message: String? = nil,
                    stack: [String] = [], outputFile: String? = nil) {
            self.pid = pid
            self.cause = cause
            self.phase = phase
            self.hammerRound = hammerRound
            self.hammerRounds = hammerRounds
            self.message = message
            self.stack = stack
            self.outputFile = outputFile
        }

        /// "crashed: signal 11 (SIGSEGV) during the race hammer, round 3 of 8", "hung: …",
        /// "exited with status 66 …".
        public var summary: String {
            let when = Self.when(phase: phase, round: hammerRound, of: hammerRounds)
            switch cause {
            case .signal(let signal): return "crashed: signal \(signal) (\(Self.signalName(signal))) \(when)"
            case .exit(let status): return "exited with status \(status) before its report, \(when)"
            case .hung(let limit): return "hung: still running after \(limit) \(when), and was killed"
            }
        }

        static func when(phase: String, round: Int?, of rounds: Int?) -> String {
            guard let round else { return phase.hasPrefix("before") ? phase : "during \(phase)" }
            return "during \(phase), " + (round == 0 ? "the warm-up round" : "round \(round)") + (rounds.map { " of \($0)" } ?? "")
        }

        /// The signal's name: SIGSEGV, SIGILL, …
        package static func signalName(_ signal: Int32) -> String {
            let names: [Int32: String] = [1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
                                          9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
                                          31: "SIGSYS"]
            #if os(Linux)
            return names[signal] ?? "signal \(signal)"
            #else
            // Apple platforms number SIGBUS 10 and SIGSYS 12.
            let apple: [Int32: String] = [10: "SIGBUS", 12: "SIGSYS", 7: "SIGEMT", 31: "SIGUSR2", 30: "SIGUSR1"]
            return apple[signal] ?? names[signal] ?? "signal \(signal)"
            #endif
        }
    }
}

extension ConformanceReport {
    /// The report's lines on a child that ended before its report: how and where, the runtime's
    /// message, ThreadSanitizer's reports before the end, the crashed thread's stack.
    func crashSection(_ crash: Crash) -> [String] {
        var lines = ["", "Child process \(crash.pid) \(crash.summary)."]
        if let message = crash.message { lines += ["", "`\(message)`"] }
        if !raceReports.isEmpty {
            lines += ["", "ThreadSanitizer's reports before it (\(raceReports.count)):"]
            for report in raceReports.prefix(4) { lines += ["```", report.text, "```"] }
            if raceReports.count > 4 { lines.append("and \(raceReports.count - 4) more") }
        }
        if !crash.stack.isEmpty {
            lines += ["", "The crashed thread's stack:", "```"] + crash.stack.enumerated().map { "\($0.offset) \($0.element)" } + ["```"]
        }
        if let file = crash.outputFile { lines += ["", "The child's whole output: `\(file)`"] }
        return lines
    }
}
