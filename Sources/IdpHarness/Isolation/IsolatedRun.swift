import Foundation
import IdpPrimitives

/// The parent's side of a kit call run in a child process: starts the child, waits for it within
/// a time limit, and returns the child's report, or a report of its crash, or says that the child
/// never reached the call.
struct IsolatedRun: Sendable {
    enum Outcome: Sendable {
        /// The child's report, or the report of a child that ended before its report.
        case report(ConformanceReport)
        /// The child never reached the kit call (it selected no test, or the test took another
        /// path there); the text says what happened and how to make the call reachable.
        case notReached(String)
    }

    let call: KitCall
    let launch: ChildLaunch

    /// The longest a child may run: ten minutes, and more when the configuration's own timeouts
    /// could keep a correct run going longer (each flow may wait `hangTimeout`; the flows under
    /// timeouts may wait `providerWait` and five minutes more, twice).
    static func limit(for configuration: ProviderConformanceKit.Configuration) -> Duration {
        .seconds(600) + configuration.hangTimeout * 4 + (configuration.providerWait.map { ($0 + .seconds(300)) * 2 } ?? .zero)
    }

    /// The directory of one child's progress, report and output: in `raceReportDirectory` when
    /// the configuration names one, else the temporary directory.
    static func makeDirectory(in parent: String?) -> String? {
        let base = parent ?? NSTemporaryDirectory()
        let template = (base as NSString).appendingPathComponent("idpharness-kit-\(getpid())-XXXXXX")
        var bytes = Array(template.utf8CString)
        return bytes.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }.map { String(cString: $0) }
    }

    /// The child's environment: this process's, with the call's key and directory, a Swift
    /// backtrace of the crashed thread on a fatal signal, and under ThreadSanitizer its own stack
    /// for the signals Swift's traps raise instead (the backtracer cannot run under
    /// ThreadSanitizer: spawning it from the signal handler fails the sanitizer's own checks).
    static func environment(key: String, directory: String, threadSanitizer: Bool,
                            base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var environment = base
        environment[KitChild.keyVariable] = key
        environment[KitChild.directoryVariable] = directory
        if threadSanitizer {
            environment["SWIFT_BACKTRACE"] = "enable=no"
            let options = environment["TSAN_OPTIONS"].map { $0.isEmpty ? "" : $0 + ":" } ?? ""
            environment["TSAN_OPTIONS"] = options + "handle_sigill=1:handle_abort=1:handle_sigtrap=1"
        } else {
            environment["SWIFT_BACKTRACE"] = "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none"
        }
        return environment
    }

    func run() async -> Outcome {
        let threadSanitizer = ThreadSanitizerReports.isActive
        guard let directory = Self.makeDirectory(in: call.configuration.raceReportDirectory) else {
            return .notReached("could not make a directory for the child process's report")
        }
        let assignment = KitChild.Assignment(key: call.key, directory: directory)
        let environment = Self.environment(key: call.key, directory: directory, threadSanitizer: threadSanitizer)
        let limit = Self.limit(for: call.configuration)
        let child = ChildProcess(executable: launch.executable, arguments: launch.arguments, environment: environment, output: assignment.outputFile)
        let result = await child.run(limit: limit)
        let events = ProgressLog.read(path: assignment.progressFile)

        if let data = FileManager.default.contents(atPath: assignment.reportFile), let transfer = try? JSONDecoder().decode(ReportTransfer.self, from: data) {
            var report = transfer.report
            report.execution = .childProcess(pid: result.pid)
            try? FileManager.default.removeItem(atPath: directory)
            return .report(report)
        }
        guard events.contains(where: { if case .started = $0 { true } else { false } }) else {
            let output = (try? String(contentsOfFile: assignment.outputFile, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: directory)
            return .notReached(notReachedReason(result, output: output))
        }
        var output = (try? String(contentsOfFile: assignment.outputFile, encoding: .utf8)) ?? ""
        let sanitizerLog = Self.sanitizerLogFile(pid: result.pid, environment: environment)
        if let sanitizerLog, let text = try? String(contentsOfFile: sanitizerLog, encoding: .utf8) { output += "\n" + text }
        return .report(CrashReport(call: call, result: result, events: events, output: ChildOutput(output), limit: limit,
                                   outputFile: assignment.outputFile, sanitizerLog: sanitizerLog).report)
    }

    /// Where ThreadSanitizer wrote the child's text, when `TSAN_OPTIONS` sends it to a `log_path`.
    static func sanitizerLogFile(pid: Int32, environment: [String: String]) -> String? {
        guard let options = environment["TSAN_OPTIONS"] else { return nil }
        let paths = options.split(separator: ":").filter { $0.hasPrefix("log_path=") }.map { String($0.dropFirst("log_path=".count)) }
        guard let path = paths.last, path != "stderr", path != "stdout" else { return nil }
        return "\(path).\(pid)"
    }

    /// Why the child never began the run, and what makes the call reachable.
    func notReachedReason(_ result: ChildProcess.Result, output: String) -> String {
        let ended = switch result.end {
        case .exited(let status): "exited with status \(status)"
        case .signalled(let signal): "ended by signal \(signal) (\(ConformanceReport.Crash.signalName(signal)))"
        case .killedAtLimit: "was still running at its time limit"
        case .notStarted(let why): "could not start: \(why)"
        }
        let selected = output.contains("Test run with 0 tests") ? "it selected no test with --filter \(call.testFilter)" : "it did not reach this call"
        return "the child process \(ended) before the run began: \(selected). In its child the kit finds the call by rerunning the calling test "
            + "up to the same call (\(call.fileID):\(call.line) in \(call.function)): call the kit directly from the @Test function, with the same "
            + "provider name and configuration in every run, or set isolation to .inProcess"
    }
}
