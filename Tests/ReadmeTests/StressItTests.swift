// README.md's block under "Stress it, and replay a failure", verbatim between the markers (ReadmeBlockTests checks that it is).
import IdpHarness
import Testing

@Suite("README: stressing a provider and replaying its failure")
struct StressItTests {
    @Test("the one-slot provider is caught as cross-talk and its shrunk reproducer replays")
    func catchesTheOneSlotProvider() async throws {
        // README block begin
        /// Keeps "the current flow's" answers in one slot between steps: another flow can overwrite them.
        final class OneSlotProvider: IdpSdkInteractionInterface, Sendable {
            let truth: SystemStress.Credentials           // the run's users, answered as a keychain would
            let slot = LockedValue<[String: String]>([:])
            init(_ truth: SystemStress.Credentials) { self.truth = truth }

            func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
                if interactionData.step == 1 { slot.withLock { $0 = truth.values(for: interactionData) ?? [:] } }
                let values = slot.withLock { $0 }
                return .init(credentials: values.filter { interactionData.inputFieldIds.contains($0.key) })
            }
        }

        var options = SystemStress.Options(seed: 3, runs: 30, flows: 2, users: 2, stepsPerFlow: 1, mix: [.login: 1])
        options.makeProvider = { truth in OneSlotProvider(truth) }
        let stress = await SystemStress.run(options)
        print(stress)                                     // the failure: "no cross-talk", its reproducer, shrunk
        if let failure = stress.failure {
            let replays = try await SystemStress.replay(failure.shrunk, options: options, times: 3)
            print(replays)                                // the same violation in every replay
        }
        // README block end
        let failure = try #require(stress.failure, "\(stress)")
        #expect(failure.violations.allSatisfy { SystemStress.Invariant(violation: $0) == .noCrossTalk }, "\(failure.violations)")
    }
}
