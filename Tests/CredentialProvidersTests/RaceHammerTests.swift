import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing

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
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "StaticCredentials") { user in StaticCredentials(user.credentials) }
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
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "MixUpProvider") { users in MixUpProvider(users) }
        let hammer = try #require(report.check("race hammer"))
        #expect(!hammer.passed)
        let table = try #require(report.outcomes.first { $0.check == "race hammer" })
        #expect(table.rows.contains { $0.outcome.contains("cross-talk") && $0.grade == .forbidden && $0.count > 0 })
        #expect(table.rows.contains { $0.outcome.contains("its own user's values") && $0.grade == .acceptable })
    }

    @Test("the report's outcome tables and verdicts come as JSON too")
    func reportAsJSON() async throws {
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "CredentialStore") { users in
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
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        let report = await ProviderConformanceKit.hammer(configuration, name: "GateProvider") { (_: [ProviderConformanceKit.User]) in GateProvider(gate: gate) }
        let hammer = try #require(report.check("race hammer"))
        #expect(!hammer.passed)
        #expect(hammer.detail.contains("stale"))
        let table = try #require(report.outcomes.first { $0.check == "race hammer" })
        #expect(table.rows.contains { $0.grade == ConformanceReport.Grade.stale })
    }
}

/// Waits for a gate nobody opens until the test ends; then lets every waiter through.
struct GateProvider: IdpSdkInteractionInterface {
    let gate: DispatchSemaphore

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        gate.wait()
        gate.signal()
        return .init(error: IdpSdkError("GateProvider", 1, "let through"))
    }
}
