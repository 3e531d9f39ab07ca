import Foundation
import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

/// A provider with a bug users write: it remembers "the current user's" answers in one shared slot
/// between the steps of a flow, instead of per flow. Alone it is right; when another flow's first
/// step runs between this flow's steps, this flow answers with the other user's secrets.
final class PerFlowStateInOneSlotProvider: IdpSdkInteractionInterface, Sendable {
    let credentials: SystemStress.Credentials
    private let slot = LockedValue<[String: String]?>(nil)

    init(_ credentials: SystemStress.Credentials) { self.credentials = credentials }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let values: [String: String]?
        if interactionData.step == 1 {
            values = credentials.values(for: interactionData)
            slot.withLock { $0 = values }
        } else {
            values = slot.withLock { $0 }          // the bug: whoever asked last
        }
        guard let values else { return .init(error: IdpSdkError("OneSlotProvider", 1, "nothing to answer")) }
        var answer: [String: String] = [:]
        for id in interactionData.inputFieldIds { answer[id] = values[id] }
        return .init(credentials: answer)
    }
}

@Suite("System stress: the product under the controlled scheduler, with faults", .serialized, .heavy)
struct SystemStressTests {
    @Test("a short controlled run of the whole system with every fault: every invariant holds, and the run repeats")
    func shortRun() async throws {
        var options = SystemStress.Options(seed: 11, runs: 3, flows: 3, users: 2, stepsPerFlow: 3)
        // Every fault.
        options.faultRates = SystemStress.Options.defaultFaultRates
        let report = await SystemStress.run(options)
        #expect(report.failure == nil, "\(report)")
        #expect(report.runs == 3 && report.flows >= 9 && report.decisions > 0)
        #expect(report.faultsInjected.values.reduce(0, +) > 0, "the default rates inject faults")
        for invariant in [SystemStress.Invariant.noCrossTalk, SystemStress.Invariant.noStuckFlow, SystemStress.Invariant.singleUseCodes] {
            #expect(report.checks[invariant, default: 0] > 0, "\(invariant) was checked")
        }
        // The same reproducer gives the same schedule, fault sites and verdict.
        let scenario = SystemStress.scenario(options)
        let rates = Dictionary(uniqueKeysWithValues: options.faultRates.map { ($0.key.rawValue, $0.value) })
        let reproducer = StressReproducer(strategy: .pct(depth: 3, steps: 100), seed: 99, flows: [0, 1, 2],
                                          faults: FaultPlan(seed: 5, rates: rates), decisions: [])
        let first = await StressRunner.run(scenario, reproducer)
        let again = await StressRunner.run(scenario, first.reproducer)
        #expect(first.violations.isEmpty && again.violations.isEmpty)
        #expect(first.outcome?.partiallyControlled == false, "\(first.outcome?.partialControlReason ?? "")")
        #expect(again.outcome?.divergence == nil, "\(first.outcome.map { outcome in outcome.firstSeams.enumerated().map { "\($0.offset):\($0.element)" }.joined(separator: " ") } ?? "")")
        #expect(again.outcome?.decisions == first.outcome?.decisions)
        #expect(Set(again.fired) == Set(first.fired))
    }

    @Test("the same seed twice gives the same report, every field but the time taken, and no run is partially controlled, hung providers included")
    func sameSeedSameReport() async {
        // Given the default scenario and faults, hung providers included, for a fixed run count
        var options = SystemStress.Options(seed: 21, runs: 4)
        options.faultRates = SystemStress.Options.defaultFaultRates
        // When it runs twice
        let first = await SystemStress.run(options)
        let second = await SystemStress.run(options)
        // Then both reports agree on everything but the time taken
        #expect(first.passed, "\(first)")
        #expect(first.faultsInjected["provider.hang", default: 0] > 0, "a hung provider struck: \(first.faultsInjected)")
        #expect(first.partiallyControlledRuns == 0 && second.partiallyControlledRuns == 0, "\(first.partialControlExample ?? "")")
        #expect(first.runs == second.runs && first.flows == second.flows && first.mcEvents == second.mcEvents && first.decisions == second.decisions)
        #expect(first.faultsInjected == second.faultsInjected)
        #expect(first.tally == second.tally)
        #expect(first.unexercised == second.unexercised)
        #expect(first.description.replacingOccurrences(of: #", [0-9.]+ s\n"#, with: "\n", options: .regularExpression)
                == second.description.replacingOccurrences(of: #", [0-9.]+ s\n"#, with: "\n", options: .regularExpression))
    }

    @Test("a user's provider that shares one slot between flows is caught as cross-talk, shrunk, and replays 10 of 10")
    func catchesPerFlowStateInOneSlotProvider() async throws {
        var options = SystemStress.Options(seed: 3, runs: 30, flows: 2, users: 2, stepsPerFlow: 1, mix: [.login: 1])
        options.makeProvider = { PerFlowStateInOneSlotProvider($0) }
        let report = await SystemStress.run(options)
        let failure = try #require(report.failure, "\(report)")
        #expect(failure.violations.allSatisfy { SystemStress.Invariant(violation: $0) == .noCrossTalk }, "\(failure.violations)")
        #expect(failure.replaysFailingTheSameWay == failure.replays && failure.nondeterminism == nil)
        #expect(failure.sizeAfter.decisions <= failure.sizeBefore.decisions)
        let replays = try await SystemStress.replay(failure.shrunk, options: options, times: 10)
        #expect(replays.count == 10)
        #expect(replays.allSatisfy { run in !run.isEmpty && run.allSatisfy { SystemStress.Invariant(violation: $0) == .noCrossTalk } }, "\(replays)")
        print("shared-slot provider: run \(failure.run), decisions \(failure.sizeBefore.decisions)→\(failure.sizeAfter.decisions), flows \(failure.sizeBefore.flows)→\(failure.sizeAfter.flows); \(failure.shrunk)")
    }
}

/// The interleavings that free-running threads reach, found and replayed by the controlled
/// scheduler, and the system running free on its own threads.
@Suite("System stress: interleavings the controlled scheduler reaches and replays, and free runs", .serialized, .heavy)
struct SystemStressInterleavingTests {
    /// A focused scenario for each interleaving: the steps and faults that lead to it, under the
    /// default PCT, or deeper where the interleaving needs it.
    static func options(reaching interleaving: SystemStress.Interleaving) -> SystemStress.Options {
        var options: SystemStress.Options
        let deepPCT = ScheduleStrategy.pct(depth: 10, steps: 300)
        switch interleaving {
        case .exchangeForAnotherUser:
            // An added user's activation logs that user in; a logout of the first user racing a
            // refresh leaves the MC answering for the added one.
            options = SystemStress.Options(seed: 3, runs: 20, flows: 1, users: 1, stepsPerFlow: 3, mix: [.addUser: 1, .refresh: 1])
            options.faultRates = [.refreshLogoutRace: 1]
        case .lockLiftedDuringStorm:
            // One device storms into lockout while another's refresh steps move the clock: three
            // participants' orders at once, deeper than the default finds in 100 runs.
            options = SystemStress.Options(seed: 1, runs: 100, flows: 2, users: 2, stepsPerFlow: 3, mix: [.lockout: 1, .refresh: 1], strategy: deepPCT)
        case .expiryDuringRefreshStorm:
            // Two devices' refresh storms, each step moving the shared clock past expiry.
            options = SystemStress.Options(seed: 1, runs: 200, flows: 2, users: 2, stepsPerFlow: 3, mix: [.refresh: 1])
            options.faultRates = [.refreshStorm: 1]
        case .cancelAfterEnd:
            // The provider fails some calls (not all: the activation must pass), and the flow's
            // first steps may run before its caller's cancel.
            options = SystemStress.Options(seed: 1, runs: 200, flows: 1, users: 1, stepsPerFlow: 3, mix: [.cancel: 1])
            options.faultRates = [.providerFail: 0.3]
        case .reuseRevoked:
            // Logins and refreshes whose token requests are often sent twice at once.
            options = SystemStress.Options(seed: 1, runs: 50, flows: 2, users: 2, stepsPerFlow: 3, mix: [.login: 2, .refresh: 1])
            options.faultRates = [.transportRetryInFlight: 0.5]
        }
        options.stopAt = interleaving
        return options
    }

    @Test("the controlled scheduler reaches each interleaving free threads reached, every invariant holds there, and its reproducer replays it 10 of 10",
          arguments: SystemStress.Interleaving.allCases)
    func reachesAndReplays(_ interleaving: SystemStress.Interleaving) async throws {
        // Given a scenario that can lead to the interleaving
        let options = Self.options(reaching: interleaving)
        // When the controlled scheduler explores it
        let report = await SystemStress.run(options)
        // Then some run reaches it with every invariant held
        #expect(report.failure == nil, "\(report)")
        let reached = try #require(report.reached, "\(interleaving) not reached in \(report.runs) runs: \(report)")
        #expect(reached.interleaving == interleaving)
        // And its reproducer reaches it again in each of 10 replays, breaking nothing
        let replays = try await SystemStress.replayRuns(reached.reproducer, options: options, times: 10)
        #expect(replays.count == 10)
        #expect(replays.allSatisfy { $0.interleavings[interleaving, default: 0] > 0 }, "\(replays.map(\.interleavings))")
        #expect(replays.allSatisfy { $0.violations.isEmpty }, "\(replays.map(\.violations))")
        print("\(interleaving.name): reached in run \(reached.run) of \(options.runs); \(reached.reproducer)")
    }

    @Test("free-running on the system's own threads, several devices sharing users: every invariant holds")
    func freeRun() async throws {
        // Given every fault, no scheduler, and more devices than users
        var options = SystemStress.Options(seed: 5, runs: 3, flows: 6, users: 3, stepsPerFlow: 3, strategy: nil)
        options.faultRates = SystemStress.Options.defaultFaultRates
        // When it runs
        let report = await SystemStress.run(options)
        // Then nothing broke, and the invariants were checked on free threads
        #expect(report.failure == nil, "\(report)")
        #expect(report.runs == 3 && report.flows >= 18 && report.decisions == 0)
        for invariant in [SystemStress.Invariant.exactlyOnce, SystemStress.Invariant.noCrossTalk, SystemStress.Invariant.singleUseCodes] {
            #expect(report.checks[invariant, default: 0] > 0, "\(invariant) was checked")
        }
    }

    @Test("a free run that breaks an invariant prints what the participants it names did")
    func freeRunPrintsWhatHappened() async throws {
        // Given a provider that shares one slot between flows, running free
        var options = SystemStress.Options(seed: 3, runs: 40, flows: 4, users: 4, stepsPerFlow: 2, mix: [.login: 1], strategy: nil)
        options.makeProvider = { PerFlowStateInOneSlotProvider($0) }
        // When the runs break cross-talk
        let report = await SystemStress.run(options)
        let failure = try #require(report.failure, "\(report)")
        // Then the report says it cannot replay, and shows the named participants' steps and results
        #expect(failure.reproducer.contains("free-running"))
        #expect(!failure.eventLog.isEmpty)
        // The slot is shared from the first flow on: the activation flows may already mix it up,
        // before any login step, so the log shows flows of either kind and how they ended.
        #expect(failure.eventLog.allSatisfy { $0.hasPrefix("participant ") }, "\(report)")
        #expect(failure.eventLog.contains { $0.contains("Event → KSM") }, "\(report)")
        #expect(failure.eventLog.contains { ($0.contains("KssIdpLogin flow") || $0.contains("KssIdpEnrollment flow")) && $0.contains("ended: ") }, "\(report)")
        #expect(report.description.contains("what happened"))
    }

    @Test("faults and invariants are typed: a fault name parses, an unknown one is refused naming the valid ones; a violation names its invariant")
    func typedNames() throws {
        #expect(try SystemStress.Fault(parsing: "transport.delay") == .transportDelay)
        #expect(SystemStress.Fault.allCases.allSatisfy { (try? SystemStress.Fault(parsing: $0.rawValue)) == $0 })
        #expect(throws: StressError("'transport.dealy' is not a fault; the faults are " + SystemStress.Fault.allCases.map(\.rawValue).joined(separator: ", "))) {
            try SystemStress.Fault(parsing: "transport.dealy")
        }
        #expect(Set(SystemStress.Options.defaultFaultRates.keys) == Set(SystemStress.Fault.allCases))
        #expect(SystemStress.Invariant(violation: "no cross-talk: participant 0 asked …") == .noCrossTalk)
        #expect(SystemStress.Invariant(violation: "no deadlock: every unfinished flow was blocked") == nil)
        #expect("\(SystemStress.Invariant.lockoutExact): detail" == "lockout counts exact: detail")
    }
}
