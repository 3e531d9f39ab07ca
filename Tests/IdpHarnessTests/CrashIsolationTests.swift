import Foundation
import CredentialProviders
@testable import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

/// BROKEN ON PURPOSE: writes through a null pointer (a real SIGSEGV) on its first call when
/// `crashes` is set; otherwise answers from the user's values.
struct SegfaultingProvider: IdpSdkInteractionInterface {
    let users: [String: [String: String]]
    let crashes: Bool

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if crashes, let address = UnsafeMutablePointer<Int>(bitPattern: 16) { address.pointee = 1 }
        return StaticCredentials(users[interactionData.userId ?? ""] ?? [:]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: counts its calls in a plain `Int` (a data race), and writes through a null
/// pointer (a real SIGSEGV) once the count passes 40: a race that ends in a crash.
final class RaceThenSegfaultProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    let users: [String: [String: String]]
    var calls = 0

    init(_ users: [ProviderConformanceKit.User]) {
        self.users = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        calls += 1
        if calls > 40, let address = UnsafeMutablePointer<Int>(bitPattern: 16) { address.pointee = 1 }
        return StaticCredentials(users[interactionData.userId ?? ""] ?? [:]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: answers the race hammer's direct calls, and traps on the first call of an
/// engine flow (the engine's calls carry the flow's traceparent; the hammer's carry none).
struct TrapInEngineFlowsProvider: IdpSdkInteractionInterface {
    let user: ProviderConformanceKit.User

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if interactionData.traceParent != nil { fatalError("TrapInEngineFlowsProvider traps on purpose") }
        return StaticCredentials(user.credentials).provideCredentials(interactionData)
    }
}

@Suite("Crash isolation: the kit runs in a child process, and a crash there is a verdict", .heavy)
struct CrashIsolationTests {
    static var quick: ProviderConformanceKit.Configuration {
        var configuration = RaceHammerTests.quick
        configuration.hangTimeout = .seconds(30)
        return configuration
    }

    /// Removes the directory the kit kept a crashed child's output in.
    static func removeDirectory(of crash: ConformanceReport.Crash) {
        guard let file = crash.outputFile else { return }
        try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent)
    }

    // MARK: Through child processes

    @Test("a provider that crashes in round 3 of the race hammer is reported as crashed there, and the calling process lives on")
    func crashInHammerRound() async throws {
        // Given a provider whose instances of round 3 write through a null pointer
        let round = LockedValue(0)
        // When the kit hammers it (the factory is called once a round; 0 is the warm-up)
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "SegfaultingProvider", instances: .shared) { users in
            let number = round.withLock { number in defer { number += 1 }; return number }
            return SegfaultingProvider(users: Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) }), crashes: number == 3)
        }
        // Then the verdict names the signal, the phase and the round
        print(report)
        #expect(!report.passed)
        let crash = try #require(report.execution.crash, "\(report)")
        defer { Self.removeDirectory(of: crash) }
        #expect(crash.cause == .signal(SIGSEGV))
        #expect(crash.pid != getpid())
        let check = try #require(report.check("process survived"))
        #expect(!check.passed)
        #expect(check.detail.hasPrefix("crashed: signal \(SIGSEGV) (SIGSEGV) during the race hammer, round 3 of 4"), "\(check.detail)")
        #expect(report.description.contains("crashed: signal \(SIGSEGV) (SIGSEGV) during the race hammer, round 3 of 4"))
        // and the stack names the provider's frame
        #expect(crash.stack.contains { $0.contains("SegfaultingProvider.provideCredentials") }, "\(crash.stack)")
        // and the checks the crash kept from being judged say so, never "held"
        #expect(report.check("race hammer")?.verdict == "not checked")
        #expect(report.check("no data race (ThreadSanitizer)")?.checked == ThreadSanitizer.isActive)
    }

    @Test("under ThreadSanitizer, the reports printed before a crash are part of its verdict",
          .enabled(if: ThreadSanitizer.isActive, "needs a build with --sanitize=thread"))
    func racesBeforeTheCrash() async throws {
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "RaceThenSegfaultProvider", instances: .shared) { users in RaceThenSegfaultProvider(users) }
        print(report)
        let crash = try #require(report.execution.crash, "\(report)")
        defer { Self.removeDirectory(of: crash) }
        #expect(crash.cause == .signal(SIGSEGV))
        #expect(!report.raceReports.isEmpty)
        #expect(report.raceReports.contains { $0.providerFrame?.contains("RaceThenSegfaultProvider.provideCredentials") == true })
        #expect(report.check("no data race (ThreadSanitizer)")?.passed == false)
        #expect(report.check("no data race (ThreadSanitizer)")?.detail.hasPrefix("data race (ThreadSanitizer): the child process up to its end:") == true)
        #expect(report.check("process survived")?.detail.hasPrefix("crashed: signal \(SIGSEGV) (SIGSEGV) during the race hammer, the warm-up round of 4") == true)
        #expect(report.description.contains("ThreadSanitizer's reports before it"))
        #expect(!report.description.contains("WARNING: ThreadSanitizer"))
    }

    @Test("a provider that traps during the engine's flows keeps the race hammer's verdicts judged before the crash")
    func crashAfterTheHammer() async throws {
        var configuration = NegativeControlTests.small
        configuration.hammerRounds = 2
        let report = await ProviderConformanceKit.run(configuration, name: "TrapInEngineFlowsProvider", instances: .perUser) { user in TrapInEngineFlowsProvider(user: user) }
        print(report)
        #expect(!report.passed)
        let crash = try #require(report.execution.crash, "\(report)")
        defer { Self.removeDirectory(of: crash) }
        #expect(crash.phase == "the engine's flows")
        #expect(crash.message?.contains("Fatal error: TrapInEngineFlowsProvider traps on purpose") == true, "\(crash.message ?? "no message")")
        #expect(report.check("process survived")?.detail.hasPrefix("crashed: signal ") == true)
        #expect(report.check("process survived")?.detail.contains("during the engine's flows") == true)
        // The race hammer ended before the crash: its verdict and table came back.
        #expect(report.check("race hammer")?.passed == true)
        #expect(report.check("race hammer")?.checked == true)
        #expect(report.outcomes.contains { $0.check == "race hammer" })
        // The flow checks were never judged.
        for name in [ConformanceReport.CheckName.concurrentFlows, .noCrossTalk, .exactlyOnce] {
            #expect(report.check(name)?.verdict == "not checked", "\(name)")
        }
        #expect(report.checks.map(\.name) == ["race hammer", "several instances", "expiry storms", "controlled interleavings", "no data race (ThreadSanitizer)",
                                              "process survived", "concurrent flows",
                                              "multi-step and re-asks", "no cross-talk", "error propagation", "cancellation",
                                              "exactly-once completion", "no deadlock", "provider on SDK threads"])
    }

    @Test("a correct provider run in a child process reports as it would in this process, and says where it ran")
    func correctProviderInChild() async throws {
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "StaticCredentials", instances: .perUser) { user in StaticCredentials(user.credentials) }
        #expect(report.passed, "\(report)")
        guard case .childProcess(let pid) = report.execution else {
            Issue.record("ran \(report.execution.summary)")
            return
        }
        #expect(pid != getpid())
        #expect(report.checks.map(\.name) == ["race hammer", "several instances", "expiry storms", "controlled interleavings", "no data race (ThreadSanitizer)"])
        #expect(report.description.contains("Ran in a child process (pid \(pid))"))
        #expect(report.threadSanitizer == ThreadSanitizer.isActive)
    }

    /// Calls the kit on behalf of the test that calls this: its child process cannot find the
    /// call, since the filter it gets selects tests by the calling function's name.
    static func hammerFromHelper(_ configuration: ProviderConformanceKit.Configuration) async -> ConformanceReport {
        await ProviderConformanceKit.hammer(configuration, name: "StaticCredentials", instances: .perUser) { user in StaticCredentials(user.credentials) }
    }

    @Test("called from a helper function, the kit runs in this process and says why it could not isolate the run")
    func helperFallsBackInProcess() async {
        let report = await Self.hammerFromHelper(Self.quick)
        #expect(report.passed, "\(report)")
        guard case .inProcess(let note?) = report.execution else {
            Issue.record("ran \(report.execution.summary)")
            return
        }
        #expect(note.contains("crash isolation was not available"))
        #expect(note.contains("call the kit directly from the @Test function"))
        #expect(report.description.contains("Ran in this process: crash isolation was not available"))
    }

    @Test("with isolation .childProcess, a call its child cannot reach does not run, and fails saying why")
    func childProcessRequired() async {
        var configuration = Self.quick
        configuration.isolation = .childProcess
        let report = await Self.hammerFromHelper(configuration)
        #expect(!report.passed)
        #expect(report.checks.map(\.name) == ["crash isolation"])
        #expect(report.check("crash isolation")?.detail.contains("isolation is .childProcess") == true)
        #expect(report.check("crash isolation")?.detail.contains("call the kit directly from the @Test function") == true)
    }

    // MARK: The parts, without processes

    @Test("a child process ends with its exit status or the signal that ended it, its output in the file, killed at its limit, and nothing of its left running")
    func childProcessEnds() async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("idpharness-child-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        func shell(_ script: String, limit: Duration = .seconds(60)) async -> ChildProcess.Result {
            await ChildProcess(executable: "/bin/sh", arguments: ["-c", script], environment: ["PATH": "/bin:/usr/bin"], output: output).run(limit: limit)
        }
        let exited = await shell("echo out; echo err >&2; exit 3")
        #expect(exited.end == .exited(3))
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "out\nerr\n")
        #expect(await shell("kill -SEGV $$").end == .signalled(SIGSEGV))
        let hung = await shell("sleep 30", limit: .milliseconds(300))
        #expect(hung.end == .killedAtLimit)
        #expect(hung.elapsed < .seconds(20))
        // A grandchild left running (a crash reporter of a child that died, say) goes with it.
        let leftBehind = await shell("(sleep 1; echo late) & echo early; exit 0")
        #expect(leftBehind.end == .exited(0))
        try await Task.sleep(for: .seconds(2))
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "early\n")
        #expect(await ChildProcess(executable: "/nonexistent", arguments: [], environment: [:], output: output).run(limit: .seconds(5)).status == -1)
    }

    @Test("the filter selects the calling test by module, function and file, with the function's punctuation escaped")
    func testFilter() throws {
        let call = KitCall(entry: .hammerShared, name: "P", configuration: .init(), fileID: "IdpHarnessTests/CrashIsolationTests.swift",
                           function: "crash(in:)", line: 12)
        #expect(call.testFilter == #"^IdpHarnessTests\.(.*/)?crash\(in:\)/CrashIsolationTests\.swift:"#)
        let regex = try Regex(call.testFilter)
        #expect("IdpHarnessTests.CrashIsolationTests/crash(in:)/CrashIsolationTests.swift:40:6".contains(regex))
        #expect("IdpHarnessTests.Outer/Inner/crash(in:)/CrashIsolationTests.swift:40:6".contains(regex))
        #expect("IdpHarnessTests.crash(in:)/CrashIsolationTests.swift:40:2".contains(regex))
        #expect(!"IdpHarnessTests.CrashIsolationTests/crashIn()/CrashIsolationTests.swift:40:6".contains(regex))
        #expect(!"IdpHarnessTests.CrashIsolationTests/crash(in:)/OtherTests.swift:40:6".contains(regex))
    }

    @Test("the key differs by call site, provider name and configuration, and is stable")
    func key() {
        func call(line: Int = 1, name: String = "P", flows: Int = 10) -> KitCall {
            var configuration = ProviderConformanceKit.Configuration()
            configuration.flows = flows
            return KitCall(entry: .runPerUser, name: name, configuration: configuration, fileID: "M/F.swift", function: "f()", line: line)
        }
        #expect(call().key == call().key)
        #expect(call().key.hasPrefix("M/F.swift:1 "))
        #expect(call(line: 2).key != call().key)
        #expect(call(name: "Q").key != call().key)
        #expect(call(flows: 11).key != call().key)
    }

    @Test("the child runs the same executable with the calling test's filter, without the parent's selection or output options")
    func launchArguments() throws {
        let call = KitCall(entry: .runPerUser, name: "P", configuration: .init(), fileID: "M/F.swift", function: "f()", line: 1)
        let testing = try ChildLaunch.forCall(call, arguments: ["/x/PkgPackageTests.xctest", "--testing-library", "swift-testing", "--filter", "Old",
                                                                "--xunit-output", "/tmp/x.xml", "--skip=Slow", "--parallel"],
                                              executable: "/x/PkgPackageTests.xctest").get()
        #expect(testing.executable == "/x/PkgPackageTests.xctest")
        #expect(testing.arguments == ["--testing-library", "swift-testing", "--parallel", "--filter", call.testFilter])
        let plain = try ChildLaunch.forCall(call, arguments: ["/x/tool", "check", "--fast"], executable: "/x/tool").get()
        #expect(plain.arguments == ["check", "--fast"])
        let xctest = ChildLaunch.forCall(call, arguments: ["/x/PkgPackageTests.xctest"], executable: "/x/PkgPackageTests.xctest")
        #expect(throws: ChildLaunch.Unavailable.self) { try xctest.get() }
    }

    @Test("the child's environment asks for a stack on a crash, the backtracer's or, under ThreadSanitizer, the sanitizer's")
    func childEnvironment() {
        let plain = IsolatedRun.environment(key: "k", directory: "/d", threadSanitizer: false, base: ["PATH": "/bin"])
        #expect(plain[KitChild.keyVariable] == "k" && plain[KitChild.directoryVariable] == "/d" && plain["PATH"] == "/bin")
        #expect(plain["SWIFT_BACKTRACE"]?.contains("enable=yes") == true)
        let sanitized = IsolatedRun.environment(key: "k", directory: "/d", threadSanitizer: true, base: ["TSAN_OPTIONS": "log_path=/tmp/t"])
        #expect(sanitized["SWIFT_BACKTRACE"] == "enable=no")
        #expect(sanitized["TSAN_OPTIONS"] == "log_path=/tmp/t:handle_sigill=1:handle_abort=1:handle_sigtrap=1")
        #expect(IsolatedRun.sanitizerLogFile(pid: 42, environment: sanitized) == "/tmp/t.42")
    }

    @Test("the time limit of a child grows with the configuration's own timeouts")
    func timeLimit() {
        var configuration = ProviderConformanceKit.Configuration()
        #expect(IsolatedRun.limit(for: configuration) == .seconds(720))
        configuration.providerWait = .seconds(1)
        #expect(IsolatedRun.limit(for: configuration) == .seconds(720 + 602))
    }

    static let backtracerOutput = """
        IdpHarnessTests/RaceHammerTests.swift:141: Fatal error: CrashingProvider crashes on purpose
        IdpHarnessTests/RaceHammerTests.swift:141: Fatal error: CrashingProvider crashes on purpose

        *** Signal 4: Backtracing from 0x7fb0014f9361... done ***

        *** Program crashed: Illegal instruction at 0x00007fb0014f9361 ***

        Thread 6 "oot.default-qos" crashed:

          0              0x00007fb0014f9361 _assertionFailure(_:_:file:line:flags:) + 225 in libswiftCore.so
          1 [ra]         0x0000557b1a1e4e6e CrashingProvider.provideCredentials(_:) + 109 in IdpHarnessPackageTests.xctest at /w/Tests/IdpHarnessTests/RaceHammerTests.swift:141:9
          2 [ra] [thunk] 0x0000557b1a1e0fa9 protocol witness for IdpSdkInteractionInterface.provideCredentials(_:) in conformance CrashingProvider + 8 in IdpHarnessPackageTests.xctest at //<compiler-generated>
        ...

        Backtrace took 0.32s
        """

    @Test("the Swift backtracer's output gives the signal, the fatal error and the crashed thread's frames")
    func backtracerOutput() {
        let output = ChildOutput(Self.backtracerOutput)
        #expect(output.signal == 4)
        #expect(output.message == "IdpHarnessTests/RaceHammerTests.swift:141: Fatal error: CrashingProvider crashes on purpose")
        #expect(output.stack() == [
            "_assertionFailure(_:_:file:line:flags:) in libswiftCore.so",
            "CrashingProvider.provideCredentials(_:) at /w/Tests/IdpHarnessTests/RaceHammerTests.swift:141:9",
            "protocol witness for IdpSdkInteractionInterface.provideCredentials(_:) in conformance CrashingProvider at //<compiler-generated>",
        ])
        #expect(output.sanitizerReports.isEmpty)
    }

    static let sanitizerOutput = """
        ==================
        WARNING: ThreadSanitizer: data race (pid=4242)
          Write of size 8 at 0x7b0c00001234 by thread T3:
            #0 $s15IdpHarnessTests22LazyDictionaryProviderC18provideCredentialsy0A3Sdk0ahI6ResultVAE0aH15InteractionDataVF /w/BrokenProviders.swift:25:19 (IdpHarnessPackageTests.xctest+0x75a1b2) (BuildId: 5c4b5d9dfff7170845d7c005e3d614868f773153)
            #1 $s10IdpHarness11HammerRoundC6hammer6threadySi_tF /w/RaceHammer.swift:148:48 (IdpHarnessPackageTests.xctest+0x4ab44a) (BuildId: 5c4b5d9dfff7170845d7c005e3d614868f773153)

          Previous read of size 1 at 0x7b0c00001234 by thread T2:
            #0 $s15IdpHarnessTests22LazyDictionaryProviderC18provideCredentialsy0A3Sdk0ahI6ResultVAE0aH15InteractionDataVF /w/BrokenProviders.swift:24:12 (IdpHarnessPackageTests.xctest+0x75a0c0) (BuildId: 5c4b5d9dfff7170845d7c005e3d614868f773153)

          Location is heap block of size 64 at 0x7b0c00001200 allocated by thread T1:
            #0 malloc /llvm/tsan_interceptors_posix.cpp:666:5 (IdpHarnessPackageTests.xctest+0xd93c7)

          Thread T3 (tid=4250, running) created by main thread at:
            #0 pthread_create /llvm/tsan_interceptors_posix.cpp:1022:3 (IdpHarnessPackageTests.xctest+0xd9000)

        SUMMARY: ThreadSanitizer: data race /w/BrokenProviders.swift:25:19 in $s15IdpHarnessTests22LazyDictionaryProviderC18provideCredentialsy0A3Sdk0ahI6ResultVAE0aH15InteractionDataVF
        ==================
        ThreadSanitizer:DEADLYSIGNAL
        ==4242==ERROR: ThreadSanitizer: SEGV on unknown address 0x000000000010 (pc 0x55 bp 0x7f sp 0x7f T4)
        ==4242==The signal is caused by a WRITE memory access.
            #0 $s15IdpHarnessTests19SegfaultingProviderV18provideCredentialsy0A3Sdk0ah7ProvideG6ResultVAE0aH15InteractionDataVF /w/CrashIsolationTests.swift:16:66 (IdpHarnessPackageTests.xctest+0x1) (BuildId: 5c4b5d9dfff7170845d7c005e3d614868f773153)
            #1 $s6Foundation6ThreadC4mainyyF <null> (libFoundation.so+0x3795f8) (BuildId: bbe2057ad9a7c4b7122ec47d2500ff98e0395cef)

        ==4242==Register values:
        """

    @Test("ThreadSanitizer's text gives its reports, in the form of the hook's, and the stack and signal of a crash it handled")
    func sanitizerOutput() throws {
        let output = ChildOutput(Self.sanitizerOutput)
        let reports = output.sanitizerReports
        #expect(reports.count == 1)
        let report = try #require(reports.first)
        #expect(report.kind == "data-race")
        #expect(report.accesses.count == 2)
        #expect(report.accesses.map(\.thread) == [3, 2])
        #expect(report.accesses.map(\.isWrite) == [true, false])
        #expect(report.accesses.map(\.size) == [8, 1])
        #expect(report.accesses[0].frames.first == "$s15IdpHarnessTests22LazyDictionaryProviderC18provideCredentialsy0A3Sdk0ahI6ResultVAE0aH15InteractionDataVF /w/BrokenProviders.swift:25")
        #expect(report.providerFrame?.hasPrefix("IdpHarnessTests.LazyDictionaryProvider.provideCredentials(") == true, "\(report.providerFrame ?? "none")")
        #expect(output.signal == SIGSEGV)
        let stack = output.stack()
        #expect(stack.count == 2)
        #expect(stack.first?.hasPrefix("IdpHarnessTests.SegfaultingProvider.provideCredentials(") == true, "\(stack)")
        #expect(stack.first?.hasSuffix(" at /w/CrashIsolationTests.swift:16") == true, "\(stack)")
        #expect(stack.last?.hasSuffix(" at (libFoundation.so)") == true, "\(stack)")
    }

    @Test("the provider's frame of a report is found by its function's own name, past Dispatch and the compiler's thunks")
    func providerFrameBehindThunks() throws {
        let thunk = "$sIeg_IeyB_TR /<compiler-generated>"
        let dispatch = "_dispatch_sync_invoke_and_complete queue.c"
        let add = "$s15IdpHarnessTests29ConcurrentQueueRefreshSessionC15CoalescedResultC3addyyys0I0OyAC5TokenVs5Error_pGcF /w/RealWorldCrashShapes.swift:46"
        let report = ThreadSanitizerReport(number: 0, kind: "Swift access race",
                                           accesses: [.init(thread: 4, isWrite: true, isAtomic: false, size: 0, frames: [add, thunk, dispatch]),
                                                      .init(thread: 2, isWrite: true, isAtomic: false, size: 0, frames: [thunk, dispatch, add])],
                                           stack: [])
        let frame = try #require(report.providerFrame)
        #expect(frame.hasPrefix("IdpHarnessTests.ConcurrentQueueRefreshSession.CoalescedResult.add("), "\(frame)")
        #expect(ThreadSanitizerReport.withoutSignatures("A.f(completion: (Swift.Result<B, Swift.Error>) -> ()) -> Swift.Int x.swift:1") == "A.f -> Swift.Int x.swift:1")
    }

    @Test("a child that crashed yields the checks it judged, a failed check naming where it ended, and the rest not checked")
    func crashReportFromProgress() throws {
        var configuration = Self.quick
        configuration.hammerRounds = 8
        let call = KitCall(entry: .runPerUser, name: "P", configuration: configuration, fileID: "M/F.swift", function: "f()", line: 1)
        let hammer = ReportTransfer.CheckForm(.init(name: "race hammer", passed: true, detail: "every answer right"))
        let events: [KitProgressEvent] = [.started(pid: 7, threadSanitizer: false), .phase("the race hammer"), .hammerRound(0, of: 8),
                                          .hammerRound(1, of: 8), .judged(hammer, outcomes: nil), .phase("the engine's flows")]
        let report = CrashReport(call: call, result: .init(pid: 7, end: .signalled(SIGSEGV), elapsed: .seconds(2)), events: events,
                                 output: ChildOutput(Self.backtracerOutput), limit: .seconds(600), outputFile: "/tmp/out", sanitizerLog: nil).report
        #expect(!report.passed)
        #expect(report.execution.crash?.cause == .signal(4))   // the backtracer's signal came first
        #expect(report.check("race hammer")?.passed == true)
        #expect(report.check("process survived")?.detail.hasPrefix("crashed: signal 4 (SIGILL) during the engine's flows (child process 7): ") == true)
        #expect(report.check("process survived")?.detail.contains("CrashingProvider.provideCredentials(_:) at /w/") == true)
        #expect(report.check("concurrent flows")?.verdict == "not checked")
        #expect(report.check("blocking under timeouts") == nil)
        let hung = CrashReport(call: call, result: .init(pid: 7, end: .killedAtLimit, elapsed: .seconds(600)), events: Array(events.prefix(4)),
                               output: ChildOutput(""), limit: .seconds(600), outputFile: "/tmp/out", sanitizerLog: nil).report
        #expect(hung.check("process survived")?.detail.hasPrefix("hung: still running after 600.0 seconds during the race hammer, round 1 of 8, and was killed") == true,
                "\(hung.check("process survived")?.detail ?? "")")
    }

    @Test("a child's report crosses to the parent whole: every field survives the transfer")
    func reportTransfer() async throws {
        var configuration = NegativeControlTests.small
        configuration.isolation = .inProcess
        configuration.hammerRounds = 1
        let report = await ProviderConformanceKit.run(configuration, name: "MixUpProvider", instances: .shared) { users in MixUpProvider(users) }
        #expect(!report.stuckFlows.isEmpty || report.flows > 0)
        let decoded = try JSONDecoder().decode(ReportTransfer.self, from: JSONEncoder().encode(ReportTransfer(report))).report
        var original = "", copy = ""
        dump(report, to: &original)
        dump(decoded, to: &copy)
        #expect(original == copy)
    }

    @Test("a crash report lists the checks the run would have judged: without several-instances rounds, neither that check nor, without hammer rounds too, the expiry storms")
    func crashReportCheckNamesFollowTheConfiguration() async {
        for (hammerRounds, instanceRounds) in [(2, 0), (0, 2), (2, 2)] {
            var configuration = RaceHammerTests.quick
            configuration.isolation = .inProcess
            configuration.hammerRounds = hammerRounds
            configuration.instanceRounds = instanceRounds
            let report = await ProviderConformanceKit.hammer(configuration, name: "StaticCredentials", instances: .perUser) { user in StaticCredentials(user.credentials) }
            let call = KitCall(entry: .hammerPerUser, name: "StaticCredentials", configuration: configuration, fileID: "M/F.swift", function: "f()", line: 1)
            #expect(CrashReport.checkNames(call) == report.checks.map(\.name), "hammer rounds \(hammerRounds), several-instances rounds \(instanceRounds)")
        }
    }
}
