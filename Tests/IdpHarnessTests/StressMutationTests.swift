#if DEBUG
import Foundation
import IdpHarness
import IdpPrimitives
import Testing
import TestSupport

/// The system stress is only as good as the bugs it catches: each bug planted in the product
/// (engine, MasterController, IDP; a switch only a debug build has) must break the invariant named
/// for its kind, in the default stress (`idp-bench stress`'s defaults: 4 devices, 3 users, 3 steps,
/// every fault), under the controlled scheduler and free-running. Each test prints the run that
/// caught its bug and how long it took; the budgets are runs, not seconds (a loaded machine
/// stretches any wall-clock bound). One stress at a time: dozens at once on two cores starve each
/// other's threads.
@Suite("System stress mutation tests: every planted bug is caught by the invariant named for its kind, controlled and free", .serialized, .heavy(goesFirst: true))
struct StressMutationTests {
    /// The invariant each planted bug must break.
    static let caughtBy: [PlantedBug: SystemStress.Invariant] = [
        .engineRoutesAnswerThroughSharedSlot: .noCrossTalk,
        .engineAnswersFromAnotherFlowAfterProviderError: .noCrossTalk,
        .engineReplacesProviderError: .errorsUnchanged,
        .engineReportsCancelAsConnectionLost: .errorsUnchanged,
        .engineCompletesAgainOnLateResponse: .exactlyOnce,
        .engineCompletesFailuresTwice: .exactlyOnce,
        .engineDropsCompletionDuringProviderCall: .noStuckFlow,
        .mcRefreshWritesBackAfterClear: .logoutStays,
        .mcClearKeepsRefreshToken: .logoutStays,
        .mcRefreshWithoutSingleFlight: .oneRefresh,
        .mcRefreshesLiveToken: .oneRefresh,
        .mcKeepsSpentRefreshToken: .oneRefresh,
        .mcLoginForgetsSession: .liveness,
        .mcClearedRefreshNeverEnds: .noStuckFlow,
        .idpCountsFailureOnStaleCopy: .lockoutExact,
        .idpLocksOneGuessLate: .lockoutExact,
        .idpCodeStaysRedeemable: .singleUseCodes,
        .idpSkipsPkceCheck: .singleUseCodes,
        .idpRedeemsOnEarlierRead: .singleUseCodes,
        .idpReuseRevokesNothing: .singleUseCodes,
        .idpIssuesCodeForLoginHint: .noCrossTalk,
        .idpIssuesExpiredAccessTokens: .liveness,
    ]
    /// Invariants a planted bug may break instead of the one named for it: a reuse that revokes
    /// nothing leaves a code grant's tokens live and a refresh grant's too, whichever pair a free
    /// run sends twice first; an engine that goes on with another flow's answer after its
    /// provider's error ends that flow however the stolen step ends: with a code or the IDP's
    /// verdict (no cross-talk), or with a fault that struck the step, an error other than the
    /// provider's (errors delivered unchanged).
    static let alsoCaughtBy: [PlantedBug: Set<SystemStress.Invariant>] = [
        .idpReuseRevokesNothing: [.oneRefresh],
        .engineAnswersFromAnotherFlowAfterProviderError: [.errorsUnchanged],
    ]

    /// The default controlled strategy (PCT).
    static let controlled = ScheduleStrategy.pct(depth: 3, steps: 100)

    /// `idp-bench stress`'s defaults, with `bug` planted, stopping at the first failure: at most
    /// 100 controlled runs (the same seed makes the same runs, so the run that catches a bug is
    /// the same on every machine) or 2,000 free ones.
    static func options(_ bug: PlantedBug?, strategy: ScheduleStrategy?) -> SystemStress.Options {
        var options = SystemStress.Options(runs: strategy == nil ? 2_000 : 100, strategy: strategy)
        options.faultRates = SystemStress.Options.defaultFaultRates
        options.plantedBug = bug
        options.shrink = false
        return options
    }

    /// Each planted bug's default controlled stress, run once: it makes the same runs wherever it
    /// runs, so the test that the bug is caught and the test that the failure replays share it.
    static let controlledRuns = ControlledRuns()

    actor ControlledRuns {
        private var runs: [PlantedBug: Task<SystemStress.Report, Never>] = [:]

        /// The report of the default controlled stress with `bug` planted.
        func report(_ bug: PlantedBug) async -> SystemStress.Report {
            if let run = runs[bug] { return await run.value }
            let run = Task { await SystemStress.run(StressMutationTests.options(bug, strategy: StressMutationTests.controlled)) }
            runs[bug] = run
            return await run.value
        }
    }

    /// Expects `report`, of the default stress with `bug` planted, to hold a failing run that broke
    /// the invariant named for the bug, within its budget.
    static func expectCaught(_ bug: PlantedBug, strategy: ScheduleStrategy?, in report: SystemStress.Report) throws {
        let failure = try #require(report.failure, "\(bug) was not caught in \(report.runs) runs: \(report)")
        let broken = Set(failure.violations.compactMap(SystemStress.Invariant.init(violation:)))
        let named = try #require(caughtBy[bug])
        let wanted = alsoCaughtBy[bug, default: []].union([named])
        #expect(!broken.isDisjoint(with: wanted), "\(bug) broke \(broken), not \(wanted): \(failure.violations)")
        print("\(bug.rawValue) (\(strategy.map { "\($0)" } ?? "free")): caught by '\(broken.intersection(wanted))' in run \(failure.run) after \(String(format: "%.1f", failure.foundAfter)) s")
    }

    @Test("every planted bug is listed with the invariant it must break, and every invariant has at least two bugs")
    func everyInvariantHasBugs() {
        #expect(Set(Self.caughtBy.keys) == Set(PlantedBug.inTheSystem))
        for invariant in SystemStress.Invariant.allCases {
            #expect(Self.caughtBy.values.filter { $0 == invariant }.count >= 2, "\(invariant)")
        }
    }

    @Test("a planted bug is caught by the default controlled stress (PCT) within 100 runs, as the invariant named for it",
          arguments: PlantedBug.inTheSystem)
    func caughtUnderControl(_ bug: PlantedBug) async throws {
        // Given the default controlled stress with the bug planted, when it runs
        let report = await Self.controlledRuns.report(bug)
        // Then a run breaks the invariant named for the bug, within the budget
        try Self.expectCaught(bug, strategy: Self.controlled, in: report)
    }

    @Test("the races controlled mode reaches at the product's seams replay: the IDP's check-then-act lockout and the engine's mis-routing, 10 of 10",
          arguments: [PlantedBug.idpCountsFailureOnStaleCopy, .engineRoutesAnswerThroughSharedSlot])
    func racesReplay(_ bug: PlantedBug) async throws {
        // Given the run in which the controlled stress caught the bug
        let options = Self.options(bug, strategy: Self.controlled)
        let report = await Self.controlledRuns.report(bug)
        let failure = try #require(report.failure, "\(report)")
        let wanted = try #require(Self.caughtBy[bug])
        // When its reproducer is replayed 10 times
        let replays = try await SystemStress.replay(failure.reproducer, options: options, times: 10)
        // Then each replay breaks the same invariant
        #expect(replays.count == 10)
        #expect(replays.allSatisfy { $0.contains { SystemStress.Invariant(violation: $0) == wanted } }, "\(replays)")
    }

    @Test("an engine that goes on with another flow's answer after its provider's error is caught by how the flow ended: a code or the IDP's verdict though its provider returned an error")
    func answerAfterProviderErrorCaughtByEnding() async throws {
        // Given the default controlled stress with the engine submitting another flow's answer
        // in place of its provider's error
        let bug = PlantedBug.engineAnswersFromAnotherFlowAfterProviderError
        let report = await Self.controlledRuns.report(bug)
        // When its failing run is read
        let failure = try #require(report.failure, "\(bug) was not caught in \(report.runs) runs: \(report)")
        // Then the judgment of the flow's ending named it: the provider's answers themselves were
        // each the flow's own, so only the ending shows the answer the engine took instead
        let endings = failure.violations.filter { $0.contains("the engine took an answer its provider did not give") }
        #expect(!endings.isEmpty, "\(failure.violations)")
        #expect(endings.allSatisfy { SystemStress.Invariant(violation: $0) == .noCrossTalk }, "\(endings)")
    }

    @Test("a planted bug is caught by the default free-running stress within 2,000 runs, as the invariant named for it",
          arguments: PlantedBug.inTheSystem)
    func caughtRunningFree(_ bug: PlantedBug) async throws {
        // Given the default free-running stress with the bug planted, when it runs
        let report = await SystemStress.run(Self.options(bug, strategy: nil))
        // Then a run breaks the invariant named for the bug, within the budget
        try Self.expectCaught(bug, strategy: nil, in: report)
    }

    @Test("the unmutated product holds every invariant in the same stress, controlled and free, and each invariant is judged")
    func unmutatedHolds() async {
        for strategy in [Self.controlled, nil] {
            var options = Self.options(nil, strategy: strategy)
            options.duration = nil
            options.runs = strategy == nil ? 20 : 8
            let report = await SystemStress.run(options)
            #expect(report.passed, "\(report)")
            for invariant in SystemStress.Invariant.allCases {
                #expect(report.checks[invariant, default: 0] > 0, "\(invariant) judged in \(report.runs) runs")
            }
        }
    }
}
#endif

#if DEBUG
@Suite("System stress verdicts: a check that never ran says so")
struct StressVerdictTests {
    @Test("a stress that skips judging an invariant whose trigger happens reports it not exercised and does not pass", arguments: [
        SystemStress.Invariant.errorsUnchanged, .logoutStays, .liveness,
    ])
    func unjudgedInvariantIsNotExercised(_ invariant: SystemStress.Invariant) async {
        // Given the default stress, with the judgment of one invariant skipped (a planted stress bug)
        var options = StressMutationTests.options(nil, strategy: StressMutationTests.controlled)
        options.runs = 4
        options.unjudged = invariant
        // When it runs
        let report = await SystemStress.run(options)
        // Then the runs where its trigger happened are failures of the stress, and its verdict is not "held"
        #expect(report.failure == nil, "\(report)")
        #expect(!report.passed)
        #expect(report.unexercised.contains { $0.contains(invariant.rawValue) }, "\(report.unexercised)")
        guard case .notExercised(let triggers, _) = report.verdict(invariant) else {
            Issue.record("\(invariant): \(report.verdict(invariant))")
            return
        }
        #expect(triggers > 0)
        #expect(report.description.contains("NOT EXERCISED"))
        #expect(report.description.contains("\(invariant.rawValue): not exercised"))
    }

    @Test("verdicts from counts: judged is held, never judged is not exercised, a violation is failed")
    func verdictsFromCounts() {
        var report = SystemStress.Report()
        report.tally.triggers[.liveness] = 3
        report.tally.excused[.liveness] = 3
        report.tally.judged[.noCrossTalk] = 5
        report.tally.excused[.noCrossTalk] = 1
        #expect(report.verdict(.noCrossTalk) == .held(judged: 5, excused: 1))
        #expect(report.verdict(.liveness) == .notExercised(triggers: 3, excused: 3))
        #expect(report.verdict(.lockoutExact) == .notExercised(triggers: 0, excused: 0))
        #expect(report.passed)
        report.failure = .init(run: 1, violations: ["\(SystemStress.Invariant.noCrossTalk): x"], reproducer: "", shrunk: "", sizeBefore: (1, 0),
                               sizeAfter: (1, 0), replaysFailingTheSameWay: 0, replays: 0)
        #expect(report.verdict(.noCrossTalk) == .failed)
        #expect(!report.passed)
    }
}
#endif
