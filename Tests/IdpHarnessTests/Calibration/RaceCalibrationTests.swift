import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

/// The kit's calibration: every broken provider is caught in every one of `runs` fresh-instance
/// runs of the race hammer, and every correct provider passes every run.
///
/// The runs happen in a child process (this test binary again, one test selected) whose
/// ThreadSanitizer writes to a log file instead of standard error and keeps going after a report
/// (`TSAN_OPTIONS`), so the races found on purpose never reach CI's log; and with equal-stack
/// suppression off, so a race found in run 1 is reported again in run 2.
@Suite("Calibration: the kit catches every broken provider in every run", .serialized)
struct RaceCalibrationTests {
    /// Runs per provider: 20 where the full suite is asked for (`IDPHARNESS_FULL_SUITE=1`), 3
    /// otherwise. Every broken provider of the corpus is caught in every run, so
    /// the smaller set still fails each of them; the full set shows it is every run.
    static let runs = SuiteSize.pick(3, full: 20)

    /// The settings of every calibration run (also in the IdpHarness article "The conformance kit").
    static var settings: ProviderConformanceKit.Configuration {
        var configuration = ProviderConformanceKit.Configuration()
        configuration.hammerRounds = 8
        configuration.hammerThreads = 4
        configuration.hammerCallsPerThread = 16
        configuration.hangTimeout = .seconds(3)
        // The race hammer's calibration; the controlled phase has its own (ControlledCalibrationTests).
        configuration.controlledSchedules = 0
        return configuration
    }

    static let broken: [String: @Sendable ([ProviderConformanceKit.User]) -> any IdpSdkInteractionInterface] = [
        "LazyDictionaryProvider": { LazyDictionaryProvider($0) },
        "UnsynchronizedCounterProvider": { UnsynchronizedCounterProvider($0) },
        "SharedSlotProvider": { SharedSlotProvider($0) },
        "LockOrderInversionProvider": { LockOrderInversionProvider($0) },
        "DoubleCompletionProvider": { DoubleCompletionProvider($0) },
    ]

    /// The real-world shapes (RealWorldShapes.swift): per-user providers, each broken one caught in
    /// every run, each fix passing every run with its expiry exercised.
    static let brokenShapes: [String: @Sendable (ProviderConformanceKit.User) -> any IdpSdkInteractionInterface] = [
        "Auth0PerInstanceLockProvider": { Auth0PerInstanceLockProvider(user: $0) },
        "Auth0InstanceRenewalProvider": { Auth0InstanceRenewalProvider(user: $0) },
        "OktaUnstoredRefreshProvider": { OktaUnstoredRefreshProvider(user: $0) },
        "InterceptorDoubleLockProvider": { InterceptorDoubleLockProvider(user: $0) },
        "ReceiptDroppedCompletionProvider": { ReceiptDroppedCompletionProvider(user: $0) },
    ]

    static let correctShapes: [String: @Sendable (ProviderConformanceKit.User) -> any IdpSdkInteractionInterface] = [
        "Auth0ProcessBarrierProvider": { Auth0ProcessBarrierProvider(user: $0) },
        "Auth0InstanceRenewalProvider, renewals serialised": { Auth0InstanceRenewalProvider(user: $0, serialisesRenewals: true) },
        "OktaUnstoredRefreshProvider, ids compared": { OktaUnstoredRefreshProvider(user: $0, comparesIds: true) },
        "InterceptorHoppingProvider": { InterceptorHoppingProvider(user: $0) },
        "ReceiptDroppedCompletionProvider, every caller kept": { ReceiptDroppedCompletionProvider(user: $0, keepsEveryCaller: true) },
    ]

    /// Broken shapes that hang (a deadlock, a completion never called): a round is stale after a
    /// hang timeout of 1 s rather than 3, so their runs stay short.
    static let hanging: Set<String> = ["InterceptorDoubleLockProvider", "ReceiptDroppedCompletionProvider"]

    static let correct: [String: @Sendable ([ProviderConformanceKit.User]) -> any IdpSdkInteractionInterface] = [
        "LockedValueProvider": { LockedValueProvider($0) },
        "NSLockProvider": { NSLockProvider($0) },
        "PthreadMutexProvider": { PthreadMutexProvider($0) },
        "MutexProvider": { MutexProvider($0) },
        "actor behind AsyncCredentialBridge": { LazyCredentialActor.provider($0) },
        "CredentialStore": { users in
            let store = CredentialStore()
            for user in users where !user.credentials.isEmpty { store.set(user.credentials, userId: user.userId, tenantId: user.tenantId) }
            return store
        },
    ]

    /// How each broken provider must be caught: by ThreadSanitizer's reports in the verdict, by
    /// the answer check, or as a hang (ThreadSanitizer of this toolchain reports no lock-order
    /// inversions; the hammer's threads, released together, turn this one into a real deadlock).
    static let expectedCatch: [String: String] = [
        "LazyDictionaryProvider": "data race (ThreadSanitizer)",
        "UnsynchronizedCounterProvider": "data race (ThreadSanitizer)",
        "SharedSlotProvider": "data race (ThreadSanitizer)",
        "LockOrderInversionProvider": "stale",
        "DoubleCompletionProvider": "forbidden answers",
        "Auth0PerInstanceLockProvider": "instances named",
        "Auth0InstanceRenewalProvider": "forbidden answers after the crossing",
        "OktaUnstoredRefreshProvider": "forbidden answers",
        "InterceptorDoubleLockProvider": "stale after the crossing",
        "ReceiptDroppedCompletionProvider": "stale after the crossing",
    ]

    @Test("each broken provider is caught in every run, by the check that fits its defect",
          .enabled(if: ThreadSanitizer.isActive, "needs a build with --sanitize=thread"), arguments: (Array(broken.keys) + Array(brokenShapes.keys)).sorted())
    func brokenProviderCaught(name: String) async throws {
        let results = await Self.calibrate(name)
        print("calibration: \(name): caught in \(results.filter { !$0.passed }.count) of \(results.count) runs; \(Self.summary(results))")
        #expect(results.count == Self.runs)
        #expect(results.allSatisfy { !$0.passed }, "\(name) passed \(results.filter(\.passed).count) runs")
        switch Self.expectedCatch[name] {
        case "data race (ThreadSanitizer)":
            #expect(results.allSatisfy { !$0.raceKinds.isEmpty && $0.failures.contains("no data race (ThreadSanitizer): data race (ThreadSanitizer)") })
        case "stale":
            #expect(results.allSatisfy { $0.failures.contains("race hammer: stale") })
        case "instances named":
            #expect(results.allSatisfy { $0.failures.contains("instances 0 and 1 of hammer-") && $0.failures.contains("answered at once") })
        case "forbidden answers after the crossing":
            #expect(results.allSatisfy { $0.failures.contains("expiry storms: ") && $0.failures.contains("answers after the crossings forbidden") })
        case "stale after the crossing":
            #expect(results.allSatisfy { $0.failures.contains("expiry storms: stale: round") && $0.failures.contains("after its crossing") })
        default:
            #expect(results.allSatisfy { $0.raceKinds.isEmpty && $0.failures.contains("answers forbidden") })
        }
    }

    @Test("(the child process of the calibration tests)",
          .enabled(if: ProcessInfo.processInfo.environment["IDPHARNESS_CALIBRATION"] != nil))
    func calibrationChild() async {
        let environment = ProcessInfo.processInfo.environment
        let name = environment["IDPHARNESS_CALIBRATION"] ?? ""
        let runs = Int(environment["IDPHARNESS_CALIBRATION_RUNS"] ?? "") ?? Self.runs
        let shared = Self.broken[name] ?? Self.correct[name]
        let perUser = Self.brokenShapes[name] ?? Self.correctShapes[name]
        guard shared != nil || perUser != nil else {
            print("CALIBRATION|\(name)|unknown provider")
            return
        }
        var configuration = Self.settings
        configuration.raceReportDirectory = environment["IDPHARNESS_CALIBRATION_DIR"]
        if Self.hanging.contains(name) { configuration.hangTimeout = .seconds(1) }
        // This test is the child process, and runs all its runs in itself.
        configuration.isolation = .inProcess
        for run in 0..<runs {
            let report: ConformanceReport
            if let perUser {
                report = await ProviderConformanceKit.hammer(configuration, name: name, instances: .perUser) { user in perUser(user) }
            } else if let shared {
                report = await ProviderConformanceKit.hammer(configuration, name: name, instances: .shared) { users in shared(users) }
            } else {
                return
            }
            if environment["IDPHARNESS_CALIBRATION_SHOW"] != nil { print(report) }
            let failed = report.checks.filter { !$0.passed }.map { "\($0.name): \($0.detail)" }.joined(separator: " // ")
            let rows = report.outcomes.flatMap(\.rows)
            let forbidden: [String] = rows.filter { [.forbidden, .stale].contains($0.grade) }.map(\.outcome).uniqued()
            let line = ["CALIBRATION", name, "\(run)", report.passed ? "passed" : "caught", report.threadSanitizer ? "on" : "off",
                        report.raceReports.map(\.kind).uniqued().joined(separator: ","),
                        forbidden.joined(separator: ","),
                        "\(rows.filter { $0.outcome.contains("Mutex") }.map(\.count).reduce(0, +))",
                        failed.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "|", with: "/"),
                        report.check("expiry storms")?.verdict ?? "-"]
            print(line.joined(separator: "|"))
        }
    }

    struct RunResult {
        let passed: Bool
        let raceKinds: String
        let forbidden: String
        let mutexHandOffs: Int
        let failures: String
        /// The expiry check's verdict ("held", "not exercised", "FAILED").
        var expiry = "-"
    }

    static func summary(_ results: [RunResult]) -> String {
        let kinds = results.map(\.raceKinds).filter { !$0.isEmpty }.uniqued().joined(separator: "; ")
        let forbidden = results.map(\.forbidden).filter { !$0.isEmpty }.uniqued().joined(separator: "; ")
        return "ThreadSanitizer kinds: [\(kinds)]; forbidden outcomes: [\(forbidden)]; Mutex hand-offs: \(results.map(\.mutexHandOffs).reduce(0, +))"
    }

    /// Runs the provider `runs` times in child processes; a child that crashes counts as one run
    /// caught (a crash is what the kit reports then) and the rest run in a new child.
    static func calibrate(_ name: String) async -> [RunResult] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("idpharness-calibration-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var results: [RunResult] = []
        while results.count < runs {
            let (status, output) = await NegativeControlTests.runChild(filter: "calibrationChild", environment: [
                "IDPHARNESS_CALIBRATION": name,
                "IDPHARNESS_CALIBRATION_RUNS": "\(runs - results.count)",
                "IDPHARNESS_CALIBRATION_DIR": directory.path,
                "TSAN_OPTIONS": "halt_on_error=0:exitcode=0:report_signal_unsafe=0:suppress_equal_stacks=0:suppress_equal_addresses=0:log_path=\(directory.path)/tsan",
            ])
            let lines = output.split(separator: "\n").filter { $0.hasPrefix("CALIBRATION|\(name)|") }
            for line in lines {
                let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                guard fields.count >= 9 else { continue }
                results.append(RunResult(passed: fields[3] == "passed", raceKinds: fields[5], forbidden: fields[6],
                                         mutexHandOffs: Int(fields[7]) ?? 0, failures: fields[8], expiry: fields.count > 9 ? fields[9] : "-"))
            }
            if lines.isEmpty || status != 0 {
                results.append(RunResult(passed: false, raceKinds: "", forbidden: "the process crashed (status \(status))", mutexHandOffs: 0,
                                         failures: String(output.suffix(2_000))))
            }
        }
        return results
    }
}

/// The calibration's correct providers, beside the broken ones (a suite of their own, so the two
/// sets of child processes overlap): every correct provider passes every run.
@Suite("Calibration: every correct provider passes every run", .serialized)
struct RaceCalibrationCorrectTests {
    @Test("each correct provider passes every run", .enabled(if: ThreadSanitizer.isActive, "needs a build with --sanitize=thread"),
          arguments: (Array(RaceCalibrationTests.correct.keys) + Array(RaceCalibrationTests.correctShapes.keys)).sorted())
    func correctProviderPasses(name: String) async throws {
        let results = await RaceCalibrationTests.calibrate(name)
        print("calibration: \(name): passed \(results.filter(\.passed).count) of \(results.count) runs; \(RaceCalibrationTests.summary(results))")
        #expect(results.count == RaceCalibrationTests.runs)
        #expect(results.allSatisfy { $0.passed }, "\(results.filter { !$0.passed }.map(\.failures).first ?? "")")
        // A fix of a real-world shape passes with its refresh path run: the kit's clock was read
        // after the crossings.
        if RaceCalibrationTests.correctShapes[name] != nil {
            #expect(results.allSatisfy { $0.expiry == "held" }, "expiry storms: \(results.map(\.expiry).uniqued())")
        }
    }
}

extension Array where Element: Hashable {
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
