import Foundation
import IdpHarness
import Testing
import TestSupport

/// Real-world shapes of crashing providers, each run through the kit `runs` times in child
/// processes: under ThreadSanitizer the broken port fails every run, with a verdict whether or not
/// it crashed (without it, the runs it crashes fail and the others cannot see the race), the
/// parent gets every report, and the fix passes every run.
@Suite("Real-world crash shapes: a verdict in every run, crash or not", .serialized)
struct RealWorldCrashShapeTests {
    /// As many runs as the calibration makes (``RaceCalibrationTests/runs``).
    static let runs = RaceCalibrationTests.runs

    /// The calibration's settings (8 rounds after the warm-up, 4 threads, 16 calls each).
    static var settings: ProviderConformanceKit.Configuration { RaceCalibrationTests.settings }

    static func summary(_ reports: [ConformanceReport]) -> String {
        let crashed = reports.filter { $0.execution.crash != nil }
        let raced = reports.filter { !$0.raceReports.isEmpty }
        let forbidden = reports.filter { $0.check("race hammer")?.passed == false }
        return "\(reports.filter { !$0.passed }.count) of \(reports.count) failed: \(crashed.count) crashed "
            + "(\(crashed.compactMap { $0.execution.crash?.summary }.uniqued().joined(separator: "; "))), "
            + "\(raced.count) with ThreadSanitizer's reports, \(forbidden.count) with a failed race hammer"
    }

    @Test("okta-mobile-swift #170's shape (coalesced refresh behind a concurrent queue): every run's report reaches the parent, and under ThreadSanitizer every run fails")
    func concurrentQueueRefresh() async {
        // The loop stands in each test, not in a helper: the kit is called from the @Test
        // function itself, which each run's child process runs again up to that call.
        var reports: [ConformanceReport] = []
        for _ in 0..<Self.runs {
            reports.append(await ProviderConformanceKit.hammer(Self.settings, name: "ConcurrentQueueRefreshSession", instances: .shared) { users in
                SessionRefreshingProvider.concurrentQueue(users)
            })
        }
        print("crash shapes: ConcurrentQueueRefreshSession: \(Self.summary(reports))")
        if let crashed = reports.first(where: { $0.execution.crash != nil }) { print(crashed) }
        if let caught = reports.first(where: { !$0.passed && $0.execution.crash == nil }) { print(caught) }
        for crash in reports.compactMap(\.execution.crash) { CrashIsolationTests.removeDirectory(of: crash) }
        #expect(reports.count == Self.runs)
        #expect(reports.allSatisfy { Self.ranInChild($0) })
        // A crash is a verdict: failed, with the signal and the phase.
        #expect(reports.filter { $0.execution.crash != nil }.allSatisfy { report in
            !report.passed && report.check("process survived")?.detail.hasPrefix("crashed: signal ") == true
        })
        if ThreadSanitizer.isActive {
            #expect(reports.allSatisfy { !$0.passed }, "\(reports.first { $0.passed }.map(\.description) ?? "")")
        } else {
            // Without ThreadSanitizer only a crash or a wrong answer shows the race; a run without
            // either passes, and its race check says it did not look.
            #expect(reports.filter(\.passed).allSatisfy { $0.check("no data race (ThreadSanitizer)")?.verdict == "not checked" })
        }
    }

    @Test("its fix, a lock around the coalesced refresh, passes every run")
    func lockedRefresh() async {
        var reports: [ConformanceReport] = []
        for _ in 0..<Self.runs {
            reports.append(await ProviderConformanceKit.hammer(Self.settings, name: "LockedRefreshSession", instances: .shared) { users in
                SessionRefreshingProvider.locked(users)
            })
        }
        print("crash shapes: LockedRefreshSession: \(Self.summary(reports))")
        #expect(reports.count == Self.runs)
        #expect(reports.allSatisfy { $0.passed }, "\(reports.first { !$0.passed }.map(\.description) ?? "")")
        #expect(reports.allSatisfy { Self.ranInChild($0) })
    }

    static func ranInChild(_ report: ConformanceReport) -> Bool {
        if case .childProcess = report.execution { return true }
        return report.execution.crash != nil
    }
}
