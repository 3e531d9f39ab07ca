import Foundation
import CredentialProviders
@testable import IdpHarness
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import Testing
import TestSupport

// Deliberately broken providers: the kit, or ThreadSanitizer, must catch each one.

/// BROKEN ON PURPOSE: counts calls in a shared counter without any lock, reading and writing it
/// with a 1 ms window between (a lost-update race that SDK threads calling at once hit). The
/// `@unchecked Sendable` is the defect under test, not a claim of safety.
///
/// An `Int`, not a dictionary: a dictionary written from many threads at once was torn, and in
/// one run of many the process died of it (SEGV) before ThreadSanitizer had reported the race,
/// while this control must show the report.
final class RacyProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    var calls = 0
    let users: [String: [String: String]]

    init(_ users: [ProviderConformanceKit.User]) {
        self.users = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let seen = calls
        usleep(1_000)
        calls = seen + 1
        return StaticCredentials(users[interactionData.userId ?? ""] ?? [:]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: race-free, but answers each flow with the credentials of the user who asked
/// before it.
final class MixUpProvider: IdpSdkInteractionInterface, Sendable {
    let users: [String: [String: String]]
    let previous = LockedValue<String>("")

    init(_ users: [ProviderConformanceKit.User]) {
        self.users = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let other = previous.withLock { last -> String in
            defer { last = interactionData.userId ?? "" }
            return last.isEmpty ? interactionData.userId ?? "" : last
        }
        return StaticCredentials(users[other] ?? [:]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: one user's flows wait at a gate nobody opens (until the test ends).
struct DeadlockingProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User
    let gate: Gate

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if user.userId == "user-007" {
            gate.wait(timeout: .seconds(600))
        }
        return StaticCredentials(user.credentials).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: answers even for a user it has no credentials for, with made-up values,
/// instead of returning an error.
struct LyingProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let values = user.credentials.isEmpty ? ["username": user.userId, "password": "guess"] : user.credentials
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

@Suite("Negative controls: the kit and ThreadSanitizer catch broken providers")
struct NegativeControlTests {
    static var small: ProviderConformanceKit.Configuration {
        var configuration = ProviderConformanceKit.Configuration()
        configuration.threads = 8
        configuration.flows = 400
        configuration.users = 10
        // Long: a flow past the watchdog stops the run early, and a run stopped before its first
        // flow without credentials leaves the error check "not exercised". In a full
        // ThreadSanitizer run on a loaded machine, beside the calibration's child processes, flows
        // took seconds. The deadlock test sets its own, shorter, timeout.
        configuration.hangTimeout = .seconds(60)
        // These providers' defects are not races; a short hammer keeps the tests quick.
        configuration.hammerRounds = 2
        return configuration
    }

    @Test("a provider that mixes up users fails the cross-talk check")
    func mixUp() async {
        let report = await ProviderConformanceKit.run(Self.small, name: "MixUpProvider", instances: .shared) { users in MixUpProvider(users) }
        #expect(!report.passed)
        #expect(report.check("no cross-talk")?.passed == false)
        #expect(report.check("no cross-talk")?.detail.contains("was answered with another user's name") == true)
        #expect(report.check("concurrent flows")?.passed == false)
    }

    @Test("a provider that deadlocks is named by the watchdog with its flow, step and thread")
    func deadlock() async throws {
        let gate = Gate()
        defer { gate.open() }
        var configuration = Self.small
        configuration.hangTimeout = .seconds(10)
        let report = await ProviderConformanceKit.run(configuration, name: "DeadlockingProvider", instances: .perUser) { user in
            DeadlockingProvider(user: user, gate: gate)
        }
        #expect(report.check("no deadlock")?.passed == false)
        let stuck = try #require(report.stuckFlows.first { $0.user == "user-007" })
        #expect(stuck.user == "user-007")
        #expect(stuck.step == 1)
        #expect(stuck.attempt == 1)
        #expect(stuck.thread?.hasPrefix("IdpSdk-") == true)
        #expect(report.description.contains("stuck in the provider at step 1 attempt 1 on thread IdpSdk-"))
        // The stuck flows were cancelled, so each still completed exactly once.
        #expect(report.check("exactly-once completion")?.passed == true)
    }

    @Test("a provider that answers for a user it has no credentials for fails the error check")
    func lying() async {
        let report = await ProviderConformanceKit.run(Self.small, name: "LyingProvider", instances: .perUser) { user in LyingProvider(user: user) }
        #expect(report.check("error propagation")?.passed == false)
        #expect(report.check("error propagation")?.detail.contains("the provider answered instead of returning an error") == true)
        #expect(report.check("concurrent flows")?.passed == true)
    }

    @Test("the exactly-once check counts a second completion of a flow")
    func ledgerCountsDuplicates() {
        let ledger = CompletionLedger()
        let once = IdpSdkFlowID(rawValue: 1), twice = IdpSdkFlowID(rawValue: 2)
        ledger.record(once)
        ledger.record(twice)
        ledger.record(twice)
        #expect(ledger.duplicates == [twice: 2])
        #expect(ledger.completions == 3)
        #expect(ledger.completedFlows == 2)
    }

    @Test("the SDK completes once, successfully, even when the network delivers every response twice")
    func duplicatedResponses() async throws {
        let idp = IdpServer()
        try idp.addTenant("demo")
        try idp.addUser("zoe", tenant: "demo", password: "pw-zoe")
        let inner = InProcessTransport(server: idp)
        let transport = DuplicatingTransport(inner: inner)
        let sdk = IdpSdkService(tenantId: "demo", idpUrl: "https://dup.invalid", certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(), transport: transport)
        let ledger = CompletionLedger()
        let recording = RecordingProvider(StaticCredentials(["username": "zoe", "password": "pw-zoe"]))
        let failures = LockedValue<[String]>([])
        let finished = LockedValue<Int>(0)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for _ in 0..<50 {
                let verifier = PKCE.makeVerifier()
                sdk.getAuthorizationCode(withAstClientData: AstClientDataInfo("data", IdpServer.unassignedAstClientId, PKCE.challenge(for: verifier), "S256"),
                                         clientId: "KssIdpLogin", interactionInterface: recording,
                                         userId: "zoe", traceParent: nil) { result in
                    ledger.record(result.flowId!)
                    if let error = result.idpSdkError { failures.withLock { $0.append(error.description) } }
                    if finished.withLock({ $0 += 1; return $0 }) == 50 { continuation.resume() }
                }
            }
        }
        // Past flowDidEnd the engine does nothing more for a flow: a duplicate completion would
        // have come before it.
        #expect(await eventually { recording.endedFlows.count == 50 }, "\(recording.endedFlows.count) of 50 flows ended")
        #expect(ledger.completions == 50)
        #expect(ledger.duplicates.isEmpty)
        #expect(failures.withLock { $0 } == [])
    }

    @Test("ThreadSanitizer catches the racy provider in a child process (exit 66, a report naming it)",
          .enabled(if: ThreadSanitizer.isActive, "needs a build with --sanitize=thread"))
    func racyProviderCaughtByThreadSanitizer() async throws {
        let (status, output) = await Self.runChild(filter: "racyProviderChildRun", environment: ["IDPHARNESS_NEGATIVE_CONTROL": "racy"])
        #expect(status == 66, "child exited \(status)")
        #expect(output.contains("ThreadSanitizer: data race") || output.contains("ThreadSanitizer: Swift access race"))
        #expect(output.contains("RacyProvider"))
    }

    @Test("(the child process of the test above)",
          .enabled(if: ProcessInfo.processInfo.environment["IDPHARNESS_NEGATIVE_CONTROL"] == "racy"))
    func racyProviderChildRun() async {
        var configuration = Self.small
        configuration.threads = 16
        // This test is the child process: ThreadSanitizer's report and exit status are its own.
        configuration.isolation = .inProcess
        _ = await ProviderConformanceKit.run(configuration, name: "RacyProvider", instances: .shared) { users in RacyProvider(users) }
    }

    /// Runs this test binary again with one test selected (and `arguments` after the filter);
    /// returns its exit status (or the signal that ended it) and its output.
    ///
    /// A child still running after `limit` is killed, and the output ends with a line that says
    /// so: a child that hangs fails the test that started it instead of stopping the suite.
    static func runChild(filter: String, environment: [String: String], arguments: [String] = [], limit: Duration = .seconds(600)) async -> (Int32, String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("idpharness-child-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let child = ChildProcess(executable: ChildProcess.currentExecutable, arguments: ["--testing-library", "swift-testing", "--filter", filter] + arguments,
                                 environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, output: output)
        let result = await child.run(limit: limit)
        var text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        switch result.end {
        case .killedAtLimit: text += "\nrunChild: the child (--filter \(filter)) was still running after \(limit) and was killed\n"
        case .notStarted(let why): text += "could not start the child: \(why)"
        case .exited, .signalled: break
        }
        return (result.status, text)
    }
}

/// A faulty network that delivers every response twice.
struct DuplicatingTransport: Transport {
    let inner: any Transport
    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        inner.send(request) { result in
            completion(result)
            completion(result)
        }
    }
}
