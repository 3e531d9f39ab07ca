import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

/// The kit's report for each provider of `CredentialProviders`, with the default battery
/// (64 OS threads, 10,000 flows, 100 users, 32 race-hammer rounds). ThreadSanitizer makes every
/// flow about 20 times slower, so under it the engine's phase runs 1,000 flows per provider where
/// the full suite is asked for (``SuiteSize``) and 200 otherwise, still from 64 threads over 100
/// users: every user's provider is asked, most by a flow of each client, and among the flows 10 are
/// re-asked, 4 cancelled and 4 for users without credentials. The race hammer keeps its 32 rounds
/// of 8 threads, four times the rounds in which the calibration catches every broken provider of
/// its corpus in every run.
@Suite("Every provider of CredentialProviders passes the conformance kit", .serialized, .heavy(goesFirst: true))
struct ConformanceTests {
    static var battery: ProviderConformanceKit.Configuration {
        var configuration = ProviderConformanceKit.Configuration()
        if ThreadSanitizer.isActive { configuration.flows = SuiteSize.pick(200, full: 1_000) }
        return configuration
    }

    static func show(_ report: ConformanceReport) {
        print(report.description + "\n")
    }

    @Test("StaticCredentials, one instance per user")
    func staticCredentials() async {
        let report = await ProviderConformanceKit.run(Self.battery, name: "StaticCredentials", instances: .perUser) { user in StaticCredentials(user.credentials) }
        Self.show(report)
        #expect(report.passed, "\(report)")
    }

    @Test("CredentialStore, one instance for all users")
    func credentialStore() async {
        let report = await ProviderConformanceKit.run(Self.battery, name: "CredentialStore", instances: .shared) { users in
            let store = CredentialStore()
            for user in users where !user.credentials.isEmpty { store.set(user.credentials, userId: user.userId, tenantId: user.tenantId) }
            return store
        }
        Self.show(report)
        #expect(report.passed, "\(report)")
    }

    @Test("MultiStepProvider with candidates, one instance for all users, leaving no state behind")
    func multiStepProvider() async {
        let holder = LockedValue<MultiStepProvider?>(nil)
        // The test looks at the provider after the run: the run happens in this process.
        var configuration = Self.battery
        configuration.isolation = .inProcess
        let report = await ProviderConformanceKit.run(configuration, name: "MultiStepProvider", instances: .shared) { users in
            let table = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
            let provider = MultiStepProvider.candidates { data in
                guard let values = table[data.userId ?? ""], !values.isEmpty else { return nil }
                return values.mapValues { [$0] }
            }
            holder.withLock { $0 = provider }
            return provider
        }
        Self.show(report)
        #expect(report.passed, "\(report)")
        #expect(holder.withLock { $0 }?.trackedFlows.current == 0)
    }

    @Test("VaultProvider over one CredentialVault actor")
    func vaultProvider() async {
        let vault = CredentialVault()
        let report = await ProviderConformanceKit.run(Self.battery, name: "VaultProvider", instances: .shared) { users in
            for user in users where !user.credentials.isEmpty { await vault.store(user.credentials, userId: user.userId, tenantId: user.tenantId) }
            return VaultProvider(vault: vault, timeout: .seconds(600))
        }
        Self.show(report)
        #expect(report.passed, "\(report)")
    }

    @Test("RecordingProvider and FieldMappingProvider around StaticCredentials")
    func wrappers() async {
        let report = await ProviderConformanceKit.run(Self.battery, name: "FieldMappingProvider(RecordingProvider(StaticCredentials))", instances: .perUser) { user in
            let renamed = Dictionary(uniqueKeysWithValues: user.credentials.map { ($0.key == "username" ? "login" : "secret", $0.value) })
            return FieldMappingProvider(RecordingProvider(StaticCredentials(renamed)), mapping: ["username": "login", "password": "secret"])
        }
        Self.show(report)
        #expect(report.passed, "\(report)")
    }
}

/// The bridge's battery, whose every call waits 20 ms: a suite of its own, so its waiting overlaps
/// the other providers' batteries.
@Suite("AsyncCredentialBridge passes the conformance kit")
struct BridgeConformanceTests {
    @Test("AsyncCredentialBridge answering after 20 ms, under timeouts shorter and longer than that")
    func asyncBridge() async {
        var configuration = ConformanceTests.battery
        configuration.providerWait = .milliseconds(20)
        configuration.flows = min(configuration.flows, 2_000)
        // Every call waits 20 ms: four hammer rounds are enough to find a race in the bridge.
        configuration.hammerRounds = 4
        let report = await ProviderConformanceKit.run(configuration, name: "AsyncCredentialBridge", instances: .perUser) { user in
            AsyncCredentialBridge(timeout: .seconds(600)) { data in
                try await Task.sleep(for: .milliseconds(20))
                guard !user.credentials.isEmpty else { throw CredentialProviderError.make(.noCredentials, "no credentials for \(user.userId)") }
                return user.credentials.filter { data.inputFieldIds.contains($0.key) }
            }
        }
        ConformanceTests.show(report)
        #expect(report.passed, "\(report)")
        #expect(report.check("blocking under timeouts")?.passed == true)
    }
}
