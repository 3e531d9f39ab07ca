import Foundation
import IdpPrimitives

/// The child process's side: this process was started for one kit call (its key in
/// `IDPHARNESS_KIT_CHILD`, its directory in `IDPHARNESS_KIT_CHILD_DIR`). The first call with that
/// key runs, notes its progress in the directory as it goes, writes its report there and ends
/// the process at once; every other kit call returns a report saying it did not run.
enum KitChild {
    static let keyVariable = "IDPHARNESS_KIT_CHILD"
    static let directoryVariable = "IDPHARNESS_KIT_CHILD_DIR"

    /// The call this process was started for, and where its progress and report go; `nil` in a
    /// process that is no kit child.
    struct Assignment: Sendable {
        let key: String
        let directory: String

        var progressFile: String { directory + "/progress" }
        var reportFile: String { directory + "/report.json" }
        var outputFile: String { directory + "/output" }
    }

    static let assignment: Assignment? = {
        let environment = ProcessInfo.processInfo.environment
        guard let key = environment[keyVariable], let directory = environment[directoryVariable] else { return nil }
        return Assignment(key: key, directory: directory)
    }()

    /// Whether the call has run (or is running): a second call with the same key does not.
    private static let claimed = LockedValue(false)

    static func perform(_ call: KitCall, assignment: Assignment, _ body: @Sendable () async -> ConformanceReport) async -> ConformanceReport {
        let key = call.key
        guard key == assignment.key, claimed.withLock({ claimed in defer { claimed = true }; return !claimed }) else {
            return KitIsolation.notRun(call, check: .run, checked: false,
                                       detail: "not run: this process is a child process started for another kit call (\(assignment.key)); this call is \(key)")
        }
        let progress = ProgressLog(path: assignment.progressFile)
        progress?.write(.started(pid: getpid(), threadSanitizer: ThreadSanitizerReports.isActive))
        KitProgress.record(to: progress)
        let report = await body()
        KitProgress.record(to: nil)
        if let data = try? JSONEncoder().encode(ReportTransfer(report)) {
            let partial = assignment.reportFile + ".partial"
            if FileManager.default.createFile(atPath: partial, contents: data) { rename(partial, assignment.reportFile) }
        }
        progress?.write(.reported)
        // The report is all the parent wants: the process ends here, without running the rest of
        // the test, other tests, or exit handlers that could wait on threads a provider left stuck.
        fflush(nil)
        _exit(0)
    }
}
