// README.md's block under "Measure it", verbatim between the markers (ReadmeBlockTests checks that it is).
import IdpHarness
import Testing

@Suite("README: measuring a provider")
struct MeasureItTests {
    @Test("the provider is measured beside the floor and CredentialStore, and its flows end to end")
    func measuresTheProvider() async throws {
        // Given cells of a few milliseconds (the block's defaults time each cell for 0.1 s and
        // each flow level for 1 s, at 1 to 8 threads, which a debug build measures only slowly)
        var short = ProviderBenchmark.Configuration()
        short.threads = [1, 2]
        short.secondsPerCell = 0.005
        short.rounds = 1
        short.inFlight = [1, 16]
        short.secondsPerFlowCell = 0.05
        // When the block runs
        let measured = try await ProviderBenchmark.$defaults.withValue(short) {
            // README block begin
            let measured = try await ProviderBenchmark.measure(name: "SessionCacheProvider", instances: .shared) { users in
                SessionCacheProvider(users)
            }
            print(render(measured, as: .markdown))            // or .text, .json, .csv
            // README block end
            return measured
        }
        // Then it measured the provider at each thread count, and its flows at each level without an error
        #expect(measured.providers.filter { $0.strategy == "SessionCacheProvider" }.map(\.threads) == [1, 2])
        #expect(measured.flows.count == 2 && measured.flows.allSatisfy { $0.errors == 0 && $0.completed > 0 })
    }
}
