#if DEBUG
import Foundation
import IdpHarness
import IdpPrimitives
import Testing
import TestSupport

/// `transport.retryInFlight`: a code or refresh grant, or a step's form post, reaches the IDP twice
/// at once, and the stress judges the two answers against its own record.
@Suite("A request sent twice at once: the fault fires controlled and free, and only it reaches a redemption decided on an earlier read", .heavy)
struct RetryInFlightTests {
    /// Logins and refreshes of one device whose requests are often sent twice at once, with `bug`
    /// planted: nobody else moves the clock while a pair is out, so each pair's revocation is
    /// judged, not excused.
    static func options(_ bug: PlantedBug?, strategy: ScheduleStrategy?, runs: Int) -> SystemStress.Options {
        var options = SystemStress.Options(seed: 1, runs: runs, flows: 1, users: 1, stepsPerFlow: 3, mix: [.login: 2, .refresh: 1], strategy: strategy)
        options.faultRates = [.transportRetryInFlight: 0.5]
        options.plantedBug = bug
        options.shrink = false
        return options
    }

    @Test("free-running, the fault fires, each code and refresh grant sent twice is judged, and one copy's tokens are revoked by the other's reuse")
    func firesFree() async {
        // Given the fault often, no scheduler (a step posted twice whose copy is decided second
        // fails its flow, so not every time: the device must log in to present codes and tokens)
        var options = Self.options(nil, strategy: nil, runs: 60)
        options.faultRates = [.transportRetryInFlight: 0.25]
        let report = await SystemStress.run(options)
        // Then it fired, every invariant held, and the reuse interleaving was reached and judged
        #expect(report.passed, "\(report)")
        #expect(report.faultsInjected[SystemStress.Fault.transportRetryInFlight.rawValue, default: 0] > 0, "\(report.faultsInjected)")
        #expect(report.interleavings[.reuseRevoked, default: 0] > 0, "\(report)")
        print("transport.retryInFlight free: \(report.faultsInjected[SystemStress.Fault.transportRetryInFlight.rawValue, default: 0]) strikes, reuse revoked \(report.interleavings[.reuseRevoked, default: 0]) times in \(report.runs) runs")
    }

    @Test("the redemption decided on an earlier read is caught as a code used twice, controlled and free, with the fault; with every other fault and none of it, it is not",
          arguments: [true, false])
    func onlyThisFaultReachesIt(_ controlled: Bool) async throws {
        let strategy: ScheduleStrategy? = controlled ? StressMutationTests.controlled : nil
        // Given the bug planted, and the default stress's faults
        var options = StressMutationTests.options(.idpRedeemsOnEarlierRead, strategy: strategy)
        options.runs = 6
        // When the stress runs without transport.retryInFlight
        options.faultRates[.transportRetryInFlight] = nil
        let without = await SystemStress.run(options)
        // Then no run reaches the bug: every other fault, every step, the same runs
        #expect(without.failure == nil, "\(without)")
        // And with it, a run catches it as a code used twice, within the mutation suite's budget
        // (a free run's fault sites follow its requests, which the OS orders)
        options = StressMutationTests.options(.idpRedeemsOnEarlierRead, strategy: strategy)
        let with = await SystemStress.run(options)
        try StressMutationTests.expectCaught(.idpRedeemsOnEarlierRead, strategy: strategy, in: with)
        let failure = try #require(with.failure)
        #expect(failure.violations.contains { $0.contains("sent twice at once, got tokens for both copies") }, "\(failure.violations)")
    }
}
#endif
