import Foundation

/// Where each kit call runs: the kit's public entry points hand every run to ``perform(_:_:)``.
///
/// - In a child process started for a kit call, the call with that call's key runs here and the
///   process ends with its report (``KitChild``); every other call is not run.
/// - Otherwise, with ``ProviderConformanceKit/Isolation/inProcess`` the run happens in this
///   process; with ``ProviderConformanceKit/Isolation/automatic`` or
///   ``ProviderConformanceKit/Isolation/childProcess`` in a child (``IsolatedRun``), and where no
///   child can make the call, here (automatic, saying why) or not at all (childProcess).
enum KitIsolation {
    static func perform(_ call: KitCall, _ body: @escaping @Sendable () async -> ConformanceReport) async -> ConformanceReport {
        if let assignment = KitChild.assignment {
            return await KitChild.perform(call, assignment: assignment, body)
        }
        let isolation = call.configuration.isolation
        guard isolation != .inProcess else { return await body() }
        let launch: ChildLaunch
        switch ChildLaunch.forCall(call) {
        case .success(let found): launch = found
        case .failure(let unavailable): return await without(isolation, call: call, reason: unavailable.reason, body)
        }
        switch await IsolatedRun(call: call, launch: launch).run() {
        case .report(let report): return report
        case .notReached(let reason): return await without(isolation, call: call, reason: reason, body)
        }
    }

    /// The run when no child can make the call: here, saying why (automatic), or not at all
    /// (childProcess).
    private static func without(_ isolation: ProviderConformanceKit.Isolation, call: KitCall, reason: String,
                                _ body: @Sendable () async -> ConformanceReport) async -> ConformanceReport {
        guard isolation == .automatic else {
            return notRun(call, check: .crashIsolation, checked: true,
                          detail: "isolation is .childProcess, and no child process could run this call: \(reason)")
        }
        var report = await body()
        report.execution = .inProcess(note: "crash isolation was not available (\(reason)); a crash would have ended this process")
        return report
    }

    /// A report of a call that did not run: one failed check that says why.
    static func notRun(_ call: KitCall, check: ConformanceReport.CheckName, checked: Bool, detail: String) -> ConformanceReport {
        var report = ConformanceReport(
            providerName: call.name, checks: [.init(name: check.rawValue, passed: false, detail: detail, checked: checked)], stuckFlows: [], flows: 0,
            threads: 0, users: 0, elapsed: .zero, flowLatency: (.zero, .zero, .zero), providerCallLatency: (.zero, .zero, .zero), providerCalls: 0,
            peakSDKThreads: 0)
        report.threadSanitizer = ThreadSanitizerReports.isActive
        report.execution = .notRun(reason: detail)
        return report
    }
}
