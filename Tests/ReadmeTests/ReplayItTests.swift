// README.md's replay block under "Check your own provider", verbatim between the markers (ReadmeBlockTests checks that it is).
import IdpHarness
import Testing

// README block begin
@Test func sessionCacheReplaysTheFailingOrder() async throws {
    let replay = try await ProviderConformanceKit.replay(
        "controlled/1 threads=2 calls=1 instances=1 horizon=86400 strategy=walk seed=2648436617965840162 decisions=2.0.1.1",
        name: "SessionCacheProvider", instances: .shared) { users in SessionCacheProvider(users) }
    #expect(replay.failures == 0, "\(replay)")     // the broken provider fails 10 of 10
}
// README block end
