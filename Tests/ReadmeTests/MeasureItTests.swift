// README.md's block under "Measure it", verbatim between the markers (ReadmeBlockTests checks that it is).
import IdpHarness
import Testing

@Suite("README: measuring a provider")
struct MeasureItTests {
    @Test("the provider is measured beside the floor and CredentialStore, and its flows end to end")
    func measuresTheProvider() async throws {
        // README block begin
        let measured = try await ProviderBenchmark.measure(name: "SessionCacheProvider", instances: .shared) { users in
            SessionCacheProvider(users)
        }
        print(render(measured, as: .markdown))            // or .text, .json, .csv
        // README block end
        #expect(measured.providers.contains { $0.strategy == "SessionCacheProvider" })
        #expect(!measured.flows.isEmpty && measured.flows.allSatisfy { $0.errors == 0 })
    }
}
