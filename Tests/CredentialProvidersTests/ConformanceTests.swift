import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing

/// The kit's report for each provider of `CredentialProviders`, with the default battery
/// (64 OS threads, 10,000 flows, 100 users).
@Suite("Every provider of CredentialProviders passes the conformance kit", .serialized)
struct ConformanceTests {
    static func show(_ report: ConformanceReport) {
        print(report.description + "\n")
    }

    @Test("StaticCredentials, one instance per user")
    func staticCredentials() async {
        let report = await ProviderConformanceKit.run(name: "StaticCredentials") { user in StaticCredentials(user.credentials) }
        Self.show(report)
        #expect(report.passed, "\(report)")
    }

    @Test("CredentialStore, one instance for all users")
    func credentialStore() async {
        let report = await ProviderConformanceKit.run(name: "CredentialStore") { users in
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
        let report = await ProviderConformanceKit.run(name: "MultiStepProvider") { users in
            let table = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
            let provider = MultiStepProvider.candidates { data in
                guard let values = table[data.userId ?? ""], !values.isEmpty else { return nil }
                return values.mapValues { [$0] + [$0] }
            }
            holder.withLock { $0 = provider }
            return provider
        }
        Self.show(report)
        #expect(report.passed, "\(report)")
        #expect(holder.withLock { $0 }?.trackedFlows.current == 0)
    }

    @Test("AsyncCredentialBridge answering after 20 ms, under timeouts shorter and longer than that")
    func asyncBridge() async {
        var configuration = ProviderConformanceKit.Configuration()
        configuration.providerWait = .milliseconds(20)
        configuration.flows = 2_000
        let report = await ProviderConformanceKit.run(configuration, name: "AsyncCredentialBridge") { user in
            AsyncCredentialBridge(timeout: .seconds(10)) { data in
                try await Task.sleep(for: .milliseconds(20))
                guard !user.credentials.isEmpty else { throw CredentialProviderError.make(.noCredentials, "no credentials for \(user.userId)") }
                return user.credentials.filter { data.inputFieldIds.contains($0.key) }
            }
        }
        Self.show(report)
        #expect(report.passed, "\(report)")
        #expect(report.check("blocking under timeouts")?.passed == true)
    }

    @Test("VaultProvider over one CredentialVault actor")
    func vaultProvider() async {
        let vault = CredentialVault()
        let report = await ProviderConformanceKit.run(name: "VaultProvider") { users in
            let provider = VaultProvider(vault: vault, timeout: .seconds(10))
            let filled = DispatchSemaphore(value: 0)
            Task {
                for user in users where !user.credentials.isEmpty { await vault.store(user.credentials, userId: user.userId, tenantId: user.tenantId) }
                filled.signal()
            }
            filled.wait()
            return provider
        }
        Self.show(report)
        #expect(report.passed, "\(report)")
    }

    @Test("RecordingProvider and FieldMappingProvider around StaticCredentials")
    func wrappers() async {
        let report = await ProviderConformanceKit.run(name: "FieldMappingProvider(RecordingProvider(StaticCredentials))") { user in
            let renamed = Dictionary(uniqueKeysWithValues: user.credentials.map { ($0.key == "username" ? "login" : "secret", $0.value) })
            return FieldMappingProvider(RecordingProvider(StaticCredentials(renamed)), mapping: ["username": "login", "password": "secret"])
        }
        Self.show(report)
        #expect(report.passed, "\(report)")
    }
}
