import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

@Suite("The race hammer and the kit's ThreadSanitizer verdict")
struct RaceHammerTests {
    static var quick: ProviderConformanceKit.Configuration {
        var configuration = ProviderConformanceKit.Configuration()
        configuration.hammerRounds = 4
        configuration.hammerThreads = 4
        configuration.hammerCallsPerThread = 16
        configuration.hangTimeout = .seconds(30)
        return configuration
    }

    @Test("the verdict says whether ThreadSanitizer looked, and never claims no data race without it")
    func verdictNamesThreadSanitizer() async {
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "StaticCredentials", instances: .perUser) { user in StaticCredentials(user.credentials) }
        let check = report.check("no data race (ThreadSanitizer)")
        #expect(report.threadSanitizer == ThreadSanitizer.isActive)
        if ThreadSanitizer.isActive {
            #expect(report.description.contains("ThreadSanitizer: on"))
            #expect(check?.checked == true && check?.passed == true)
        } else {
            #expect(report.description.contains("ThreadSanitizer: off (data races were not checked"))
            #expect(check?.verdict == "not checked")
            #expect(!(check?.detail.contains("no report") ?? true))
        }
        #expect(report.passed, "\(report)")
    }

    @Test("with or without ThreadSanitizer, the hammer grades every answer: a provider that mixes users up is caught")
    func hammerChecksAnswers() async throws {
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "MixUpProvider", instances: .shared) { users in MixUpProvider(users) }
        let hammer = try #require(report.check("race hammer"))
        #expect(!hammer.passed)
        let table = try #require(report.outcomes.first { $0.check == "race hammer" })
        #expect(table.rows.contains { $0.outcome.contains("cross-talk") && $0.grade == .forbidden && $0.count > 0 })
        #expect(table.rows.contains { $0.outcome.contains("its own user's values") && $0.grade == .acceptable })
    }

    @Test("a forbidden answer names its flow as the engine names its own: flow-<number>, from the process's one numbering")
    func forbiddenAnswerNamesItsFlowBriefly() async throws {
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "MixUpProvider", instances: .shared) { users in MixUpProvider(users) }
        let detail = try #require(report.check("race hammer")?.detail)
        let named = detail.matches(of: /flow-([0-9]+)/).map { UInt64($0.output.1) }
        #expect(!named.isEmpty, "\(detail)")
        #expect(named.allSatisfy { ($0 ?? .max) < 1 << 32 }, "\(detail)")
    }

    @Test("the report's outcome tables and verdicts come as JSON too")
    func reportAsJSON() async throws {
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "CredentialStore", instances: .shared) { users in
            let store = CredentialStore()
            for user in users where !user.credentials.isEmpty { store.set(user.credentials, userId: user.userId, tenantId: user.tenantId) }
            return store
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        #expect(object["provider"] as? String == "CredentialStore")
        #expect(object["thread_sanitizer"] as? String == (ThreadSanitizer.isActive ? "on" : "off"))
        let outcomes = try #require(object["outcomes"] as? [[String: Any]])
        let hammer = try #require(outcomes.first { $0["check"] as? String == "race hammer" })
        let rows = try #require(hammer["rows"] as? [[String: Any]])
        let calls = 5 * 4 * 16   // at least: warm-up and 4 rounds, 4 threads, 16 calls (a last two-step flow adds one)
        #expect((calls...(calls + 20)).contains(rows.compactMap { $0["count"] as? Int }.reduce(0, +)))
        #expect(rows.allSatisfy { $0["grade"] as? String == "acceptable" })
    }

    @Test("a provider that never returns makes a stale round, reported, not a hung runner")
    func staleRound() async throws {
        var configuration = Self.quick
        configuration.hangTimeout = .milliseconds(500)
        let gate = Gate()
        defer { gate.open() }
        let report = await ProviderConformanceKit.hammer(configuration, name: "GateProvider", instances: .shared) { (_: [ProviderConformanceKit.User]) in GateProvider(gate: gate) }
        let hammer = try #require(report.check("race hammer"))
        #expect(!hammer.passed)
        #expect(hammer.detail.contains("stale"))
        let table = try #require(report.outcomes.first { $0.check == "race hammer" })
        #expect(table.rows.contains { $0.grade == ConformanceReport.Grade.stale })
    }
}

/// Waits at a gate nobody opens until the test ends.
struct GateProvider: IdpSdkInteractionInterface {
    let gate: Gate

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        gate.wait(timeout: .seconds(600))
        return .init(error: IdpSdkError("GateProvider", 1, "let through"))
    }
}

@Suite("ThreadSanitizer's reports, as the kit reads them")
struct ThreadSanitizerReportTests {
    static let mutexClosure = "$s24CredentialProvidersTests13MutexProviderC18provideCredentialsy6IdpSdk0hi7ProvideG6ResultVAE0hI15InteractionDataVFSDyS2SGSDySSAJGzYuYTXEfU_ /src/CorrectProviders.swift:86"
    static let plainMethod = "$s24CredentialProvidersTests29UnsynchronizedCounterProviderC18provideCredentialsy6IdpSdk0ij7ProvideH6ResultVAE0iJ15InteractionDataVF /src/BrokenProviders.swift:45"
    static let kitFrame = "$s10IdpHarness11HammerRoundC6hammer6threadySi_tF /src/RaceHammer.swift:148"

    static func access(_ frames: [String], write: Bool = false) -> ThreadSanitizerReport.Access {
        .init(thread: write ? 2 : 1, isWrite: write, isAtomic: false, size: 8, frames: frames)
    }

    @Test("a race whose two accesses both ran in Mutex.withLock's closure is told apart as a Mutex hand-off")
    func mutexHandOff() {
        let both = ThreadSanitizerReport(number: 0, kind: "Swift access race",
                                         accesses: [Self.access([Self.mutexClosure, Self.kitFrame]), Self.access([Self.mutexClosure, Self.kitFrame], write: true)], stack: [])
        #expect(both.isMutexHandOff)
        let oneOutside = ThreadSanitizerReport(number: 1, kind: "data-race",
                                               accesses: [Self.access([Self.mutexClosure]), Self.access([Self.plainMethod], write: true)], stack: [])
        #expect(!oneOutside.isMutexHandOff)
        let notARace = ThreadSanitizerReport(number: 2, kind: "heap-use-after-free",
                                             accesses: [Self.access([Self.mutexClosure]), Self.access([Self.mutexClosure], write: true)], stack: [])
        #expect(!notARace.isMutexHandOff)
    }

    @Test("the provider's frame skips the kit's frames and is demangled")
    func providerFrame() throws {
        let report = ThreadSanitizerReport(number: 0, kind: "data-race",
                                           accesses: [Self.access([Self.kitFrame, Self.plainMethod]), Self.access([Self.plainMethod], write: true)], stack: [])
        let frame = try #require(report.providerFrame)
        #expect(frame.hasPrefix("CredentialProvidersTests.UnsynchronizedCounterProvider.provideCredentials("))
        #expect(frame.hasSuffix("/src/BrokenProviders.swift:45"))
        #expect(report.text.contains("by thread T1"))
    }

    @Test("a provider that crashes the process is named, with its round, before the crash output")
    func crashIsReported() async {
        let (status, output) = await NegativeControlTests.runChild(filter: "crashingProviderChild",
                                                                   environment: ["IDPHARNESS_CRASH_CHILD": "1", "SWIFT_BACKTRACE": "enable=no"])
        #expect(status != 0)
        #expect(output.contains("IdpHarness: the process crashed (fatal signal) while the conformance kit's race hammer ran CrashingProvider, round 0"),
                "\(output.suffix(1_000))")
    }

    @Test("(the child process of the test above)", .enabled(if: ProcessInfo.processInfo.environment["IDPHARNESS_CRASH_CHILD"] == "1"))
    func crashingProviderChild() async {
        // The crash note of a run in this process is what the test above reads.
        var configuration = RaceHammerTests.quick
        configuration.isolation = .inProcess
        _ = await ProviderConformanceKit.hammer(configuration, name: "CrashingProvider", instances: .shared) { (_: [ProviderConformanceKit.User]) in CrashingProvider() }
    }
}

/// BROKEN ON PURPOSE: traps on its first call.
struct CrashingProvider: IdpSdkInteractionInterface {
    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        fatalError("CrashingProvider crashes on purpose")
    }
}
