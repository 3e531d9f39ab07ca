import Foundation
import CredentialProviders
@testable import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing

// Providers broken on purpose, each in one way only: the kit must fail the one check that judges
// that defect and pass every other. Every provider here keeps its state under a lock, so none of
// them is a data race.

/// BROKEN ON PURPOSE: refuses user-001 on the one-step login form (username and password at once)
/// with an error of its own; answers every other form, and every other user, right.
struct OneFormRefusingProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if user.userId == "user-001", interactionData.inputFieldIds.count > 1 {
            return .init(error: IdpSdkError("OneFormRefusing", 1, "refuses the one-step form"))
        }
        return StaticCredentials(user.credentials).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: asked again after the IDP rejected an answer, it answers with an empty
/// password (as a cache cleared on rejection would) instead of answering again or giving up with
/// its own error.
struct EmptyPasswordOnReaskProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        guard interactionData.previousError != nil, !user.credentials.isEmpty else {
            return StaticCredentials(user.credentials).provideCredentials(interactionData)
        }
        return .init(credentials: Dictionary(uniqueKeysWithValues: interactionData.inputFieldIds.map { ($0, $0 == "password" ? "" : user.credentials[$0] ?? "") }))
    }
}

/// BROKEN ON PURPOSE: answers a step's first attempt with the values of the next user (in the
/// kit's order), and only after the IDP rejected that, with the asking user's own. Every flow
/// still succeeds; the IDP saw another user's name.
struct NextUserFirstProvider: IdpSdkInteractionInterface, Sendable {
    let values: [String: [String: String]]
    let next: [String: String]

    init(_ users: [ProviderConformanceKit.User]) {
        let withCredentials = users.filter { !$0.credentials.isEmpty }
        values = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
        next = Dictionary(uniqueKeysWithValues: withCredentials.indices.map {
            (withCredentials[$0].userId, withCredentials[($0 + 1) % withCredentials.count].userId)
        })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let asking = interactionData.userId ?? ""
        let answering = interactionData.previousError == nil ? next[asking] ?? asking : asking
        return StaticCredentials(values[answering] ?? [:]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: remembers the user of each traceparent's first call and answers every later
/// call with that traceparent for the remembered user. Each engine flow has a traceparent of its
/// own, so those are answered right; every call without one shares one entry.
final class TraceKeyedProvider: IdpSdkInteractionInterface, Sendable {
    let values: [String: [String: String]]
    let remembered = LockedValue<[String: String]>([:])

    init(_ users: [ProviderConformanceKit.User]) {
        values = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let asking = interactionData.userId ?? ""
        let user = remembered.withLock { remembered in
            let key = interactionData.traceParent ?? ""
            if remembered[key] == nil { remembered[key] = asking }
            return remembered[key] ?? asking
        }
        return StaticCredentials(values[user] ?? [:]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: keeps one session per user for the whole process, held for 0.3 ms per
/// call, and refuses a call while another instance holds that user's session (as a provider over
/// a process-wide session table might). One instance per user, however many threads call it,
/// never trips it; two instances of one user answering at once do.
final class OneSessionPerUserProvider: IdpSdkInteractionInterface, Sendable {
    /// Per user: the instance holding the session and its calls inside.
    static let sessions = LockedValue<[String: (holder: ObjectIdentifier, calls: Int)]>([:])
    let user: ProviderConformanceKit.User
    /// Unique per run: the kit's users get fresh passwords.
    let key: String

    init(user: ProviderConformanceKit.User) {
        self.user = user
        key = user.userId + "/" + (user.credentials["password"] ?? "")
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let me = ObjectIdentifier(self)
        let admitted = Self.sessions.withLock { sessions -> Bool in
            if let session = sessions[key], session.holder != me, session.calls > 0 { return false }
            sessions[key] = (me, (sessions[key]?.holder == me ? sessions[key]?.calls ?? 0 : 0) + 1)
            return true
        }
        guard admitted else { return .init(error: IdpSdkError("OneSessionPerUser", 2, "another instance holds this user's session")) }
        usleep(300)
        let result = StaticCredentials(user.credentials).provideCredentials(interactionData)
        Self.sessions.withLock { sessions in
            guard let session = sessions[key] else { return }
            sessions[key] = session.calls > 1 ? (session.holder, session.calls - 1) : nil
        }
        return result
    }
}

/// BROKEN ON PURPOSE: caches the user's values for 30 seconds of the kit's clock, and its refresh
/// path, once they have expired, loses the password: it then fails the calls that ask for one. It
/// answers right until the clock moves.
final class ExpiringCacheProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User
    let cache = LockedValue<(values: [String: String], expires: Date)?>(nil)

    init(user: ProviderConformanceKit.User) { self.user = user }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = user.clock.now()
        let values = cache.withLock { cache -> [String: String] in
            if let cached = cache, cached.expires > now { return cached.values }
            // First fill: the user's values; a refresh (an expired entry): the password is lost.
            let values = cache == nil ? user.credentials : user.credentials.filter { $0.key != "password" }
            cache = (values, now.addingTimeInterval(30))
            return values
        }
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

@Suite("Each conformance check fails for the defect it judges, and only for it", .serialized)
struct ConformanceCheckTests {
    /// A small battery: 48 flows from 4 threads over 4 users, one short hammer round. With these
    /// numbers the re-asked flows (every 16th) are all user-000's and one-step, the cancelled ones
    /// (every 12th, from the second) two-step, and the flows without credentials (every 12th, from
    /// the twelfth) user-006's.
    static var small: ProviderConformanceKit.Configuration {
        var configuration = ProviderConformanceKit.Configuration()
        configuration.threads = 4
        configuration.flows = 48
        configuration.users = 4
        configuration.reaskEvery = 16
        configuration.errorEvery = 12
        configuration.cancelEvery = 12
        configuration.hammerRounds = 1
        configuration.hammerThreads = 2
        configuration.hammerCallsPerThread = 8
        // Long: a flow past it would fail "no deadlock" too. A loaded ThreadSanitizer suite makes
        // flows take seconds.
        configuration.hangTimeout = .seconds(60)
        return configuration
    }

    /// The battery without the race hammer: for a provider whose wrong answer the hammer's direct
    /// calls would grade too (the hammer judges the same answers, only without the engine).
    static var smallWithoutHammer: ProviderConformanceKit.Configuration {
        var configuration = small
        configuration.hammerRounds = 0
        return configuration
    }

    /// The report's checks, in order, for a run with the hammer (or without), and with the flows
    /// under timeouts (or without).
    static func checks(hammer: Bool = true, blocking: Bool = false) -> [String] {
        (hammer ? ["race hammer"] : []) + ["several instances", "expiry storms", "controlled interleavings", "no data race (ThreadSanitizer)", "concurrent flows", "multi-step and re-asks", "no cross-talk",
                                            "error propagation", "cancellation", "exactly-once completion", "no deadlock", "provider on SDK threads"]
            + (blocking ? ["blocking under timeouts"] : [])
    }

    /// Expects `failing` (and each of `alsoFailing`) to fail, with a forbidden or stale outcome in
    /// its own table, and every other check of `expected` to pass, each with its own outcome table.
    static func expectOnly(_ failing: String, alsoFailing: [String] = [], failsIn report: ConformanceReport, expected: [String],
                           sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(report.checks.map(\.name) == expected, sourceLocation: sourceLocation)
        for name in [failing] + alsoFailing {
            #expect(report.check(.init(rawValue: name))?.passed == false, "\(report)", sourceLocation: sourceLocation)
        }
        let alsoFailed = report.checks.filter { $0.name != failing && !alsoFailing.contains($0.name) && !$0.passed }
        #expect(alsoFailed.isEmpty, "also failed: \(alsoFailed.map { "\($0.name): \($0.detail)" })", sourceLocation: sourceLocation)
        // Every check but ThreadSanitizer's (off: nothing to count) has its own table.
        let tables = expected.filter { $0 != DataRaceCheck().name || report.threadSanitizer }
        #expect(report.outcomes.map(\.check) == tables, sourceLocation: sourceLocation)
        #expect(report.outcomes.first { $0.check == failing }?.acceptable == false, "\(report)", sourceLocation: sourceLocation)
    }

    /// What a run of StaticCredentials saw; every check passes on it.
    static func cleanEvidence() async -> ConformanceEvidence {
        let run = Run(configuration: small, name: "StaticCredentials", bind: ProviderConformanceKit.perUser { StaticCredentials($0.credentials) })
        let evidence = await run.evidence()
        let report = evidence.report(providerName: "StaticCredentials")
        #expect(report.passed, "\(report)")
        #expect(report.checks.map(\.name) == checks())
        return evidence
    }

    /// The report on a clean run's flows with `defect` written in; expects only `failing` to fail.
    static func report(withDefectFor failing: String, sourceLocation: SourceLocation = #_sourceLocation,
                       _ defect: (inout FlowEvidence) throws -> Void) async throws -> ConformanceReport {
        var evidence = await cleanEvidence()
        var flows = try #require(evidence.flows, sourceLocation: sourceLocation)
        try defect(&flows)
        evidence.flows = flows
        let report = evidence.report(providerName: "StaticCredentials")
        expectOnly(failing, failsIn: report, expected: checks(), sourceLocation: sourceLocation)
        return report
    }

    // MARK: Providers that fail one check each, through the whole kit

    @Test("a provider that refuses one user's one-step form fails only the concurrent flows")
    func concurrentFlows() async throws {
        let report = await ProviderConformanceKit.run(Self.small, name: "OneFormRefusingProvider", instances: .perUser) { user in OneFormRefusingProvider(user: user) }
        Self.expectOnly("concurrent flows", failsIn: report, expected: Self.checks())
        #expect(report.check("concurrent flows")?.detail.contains("(user-001, KssIdpLogin)") == true)
    }

    @Test("a provider that answers an empty password when asked again fails only the re-ask check")
    func reasks() async throws {
        let report = await ProviderConformanceKit.run(Self.small, name: "EmptyPasswordOnReaskProvider", instances: .perUser) { user in EmptyPasswordOnReaskProvider(user: user) }
        Self.expectOnly("multi-step and re-asks", failsIn: report, expected: Self.checks())
        #expect(report.check("multi-step and re-asks")?.detail.contains("after a re-ask") == true)
    }

    @Test("a provider that first answers with the next user's values fails only the cross-talk check")
    func crossTalk() async throws {
        let report = await ProviderConformanceKit.run(Self.smallWithoutHammer, name: "NextUserFirstProvider", instances: .shared) { users in NextUserFirstProvider(users) }
        Self.expectOnly("no cross-talk", failsIn: report, expected: Self.checks(hammer: false))
        #expect(report.check("no cross-talk")?.detail.contains("was answered with another user's name") == true)
    }

    @Test("a provider that answers for a user it has no credentials for fails only the error check")
    func errorPropagation() async throws {
        let report = await ProviderConformanceKit.run(Self.smallWithoutHammer, name: "LyingProvider", instances: .perUser) { user in LyingProvider(user: user) }
        Self.expectOnly("error propagation", failsIn: report, expected: Self.checks(hammer: false))
        #expect(report.check("error propagation")?.detail.contains("the provider answered instead of returning an error") == true)
    }

    @Test("a provider that answers at once, though said to wait 2 s, fails only the check under timeouts")
    func blocking() async throws {
        var configuration = Self.small
        configuration.providerWait = .seconds(2)
        let report = await ProviderConformanceKit.run(configuration, name: "StaticCredentials", instances: .perUser) { user in StaticCredentials(user.credentials) }
        Self.expectOnly("blocking under timeouts", failsIn: report, expected: Self.checks(blocking: true))
        let table = try #require(report.outcomes.first { $0.check == "blocking under timeouts" })
        #expect(table.rows.contains { $0.outcome == BlockingCheck.Outcome.notTimedOut.rawValue && $0.count == 4 })
        #expect(table.rows.contains { $0.outcome == BlockingCheck.Outcome.succeeded.rawValue && $0.count == 4 })
    }

    @Test("a provider that shares one entry among calls without a traceparent fails only the race hammer")
    func raceHammer() async throws {
        let report = await ProviderConformanceKit.run(Self.small, name: "TraceKeyedProvider", instances: .shared) { users in TraceKeyedProvider(users) }
        Self.expectOnly("race hammer", failsIn: report, expected: Self.checks())
        #expect(report.check("race hammer")?.detail.contains("answers forbidden") == true)
    }

    @Test("a provider over a per-user session table fails only the several-instances check, naming the instances")
    func severalInstances() async throws {
        // The race hammer mixes instances too: without it, only the several-instances check calls two at once.
        let report = await ProviderConformanceKit.run(Self.smallWithoutHammer, name: "OneSessionPerUserProvider", instances: .perUser) { user in
            OneSessionPerUserProvider(user: user)
        }
        // The controlled phase finds the same defect: two threads on two instances of one user.
        Self.expectOnly("several instances", alsoFailing: ["controlled interleavings"], failsIn: report, expected: Self.checks(hammer: false))
        let detail = try #require(report.check("several instances")?.detail)
        #expect(detail.contains("instances 0 and 1 of hammer-"), "\(detail)")
        #expect(detail.contains("answered at once; instance"), "\(detail)")
        #expect(detail.contains("another instance holds this user's session"), "\(detail)")
        let table = try #require(report.outcomes.first { $0.check == "several instances" })
        #expect(table.rows.contains { $0.outcome == "instance 0: answered its own user's values" && $0.grade == .acceptable })
        #expect(table.rows.contains { $0.outcome.hasSuffix(": error for a user with credentials") && $0.grade == .forbidden })
    }

    @Test("a provider whose refresh path is wrong fails only the expiry check, once the kit's clock has crossed its expiry")
    func expiryStorms() async throws {
        // One instance per user: the several-instances check, which also has a crossing, is not exercised.
        var configuration = Self.small
        configuration.instances = 1
        let report = await ProviderConformanceKit.run(configuration, name: "ExpiringCacheProvider", instances: .perUser) { user in ExpiringCacheProvider(user: user) }
        // The controlled phase finds the same defect: its schedules cross the kit's clock too.
        Self.expectOnly("expiry storms", alsoFailing: ["controlled interleavings"], failsIn: report, expected: Self.checks())
        #expect(report.check("several instances")?.verdict == "not exercised")
        let detail = try #require(report.check("expiry storms")?.detail)
        #expect(detail.contains("answers after the crossings forbidden: race hammer, round"), "\(detail)")
        #expect(detail.contains("after the crossing"), "\(detail)")
        let table = try #require(report.outcomes.first { $0.check == "expiry storms" })
        #expect(table.rows.contains { $0.outcome == "crossing: the provider read the kit's clock after it" && $0.count == 2 })
        #expect(table.rows.contains { $0.outcome == "race hammer, after the crossing: error for a user with credentials" && $0.grade == .forbidden })
    }

    // MARK: Defects no provider can cause alone, on a clean run's evidence

    // The engine, not the provider, decides which thread calls the provider, whether a cancelled
    // flow ends cancelled and how often a flow completes; a provider that hangs is cancelled by
    // the watchdog, which fails its flow's own check as well; and a race in the suite's own
    // process would print ThreadSanitizer's warning (the calibration's child processes show real
    // races). These checks are judged on a clean run's evidence with one defect written in.

    @Test("ThreadSanitizer's report of a race during the flows fails only the data-race check")
    func dataRace() async throws {
        var evidence = await Self.cleanEvidence()
        let frame = "$s24CredentialProvidersTests12RacyProviderC18provideCredentialsyF Tests/RacyProvider.swift:12"
        let race = ThreadSanitizerReport(number: 0, kind: "data-race", accesses: [
            .init(thread: 3, isWrite: true, isAtomic: false, size: 8, frames: [frame]),
            .init(thread: 4, isWrite: false, isAtomic: false, size: 8, frames: [frame]),
        ], stack: [])
        evidence.threadSanitizer.isActive = true
        evidence.threadSanitizer.phases = evidence.threadSanitizer.phases.map { phase in
            phase.name == "engine flows" ? ThreadSanitizerPhase(name: phase.name, reports: [race], lost: 0, rounds: 1, roundsWithReports: 1) : phase
        }
        let report = evidence.report(providerName: "StaticCredentials")
        Self.expectOnly("no data race (ThreadSanitizer)", failsIn: report, expected: Self.checks())
        #expect(report.check("no data race (ThreadSanitizer)")?.detail.hasPrefix("data race (ThreadSanitizer): engine flows: data-race") == true)
        #expect(report.raceReports == [race])
    }

    @Test("a cancelled flow that ends with another error fails only the cancellation check")
    func cancellation() async throws {
        var cancelled: Run.Outcome?
        let report = try await Self.report(withDefectFor: "cancellation") { flows in
            let index = try #require(flows.outcomes.firstIndex { $0.plan.cancel })
            let outcome = flows.outcomes[index]
            cancelled = outcome
            let timedOut = IdpSdkResult(error: IdpSdkError(.timedOut, "timed out"), flowId: outcome.result?.flowId)
            flows.outcomes[index] = Run.Outcome(plan: outcome.plan, flowId: outcome.flowId, result: timedOut, latency: outcome.latency)
        }
        let flow = try #require(cancelled?.flowId)
        #expect(report.check("cancellation")?.detail == "\(flow): ended with IdpSdkError(IdpSdk, 1021, timed out) after cancel")
    }

    @Test("a flow completed twice fails only the exactly-once check")
    func exactlyOnce() async throws {
        var twice: IdpSdkFlowID?
        let report = try await Self.report(withDefectFor: "exactly-once completion") { flows in
            twice = try #require(flows.outcomes.first?.result?.flowId)
            flows.completions[twice!] = 2
        }
        #expect(report.check("exactly-once completion")?.detail == "\(try #require(twice)) completed 2 times")
    }

    @Test("a flow the watchdog found stuck fails only the deadlock check")
    func deadlock() async throws {
        let stuck = ConformanceReport.StuckFlow(flow: "flow-7", user: "user-003", client: "KssIdpLogin", step: 1, attempt: 1,
                                                thread: "IdpSdk-2", waited: .seconds(60))
        let report = try await Self.report(withDefectFor: "no deadlock") { $0.stuck.append(stuck) }
        #expect(report.check("no deadlock")?.detail == "1 stuck (the run stopped early): \(stuck)")
    }

    @Test("a provider call off the SDK's threads fails only the SDK-thread check")
    func sdkThreads() async throws {
        let report = try await Self.report(withDefectFor: "provider on SDK threads") { $0.misplacedCalls.append("flow-7 step 1 ran on main") }
        #expect(report.check("provider on SDK threads")?.detail == "flow-7 step 1 ran on main")
    }
}

@Suite("Check names: every check the kit reports has a constant")
struct CheckNameTests {
    @Test("the battery's checks and the checks of runs that stop early are named by ConformanceReport.CheckName constants")
    func everyCheckHasAConstant() {
        let battery = (ConformanceBattery.raceChecks + ConformanceBattery.flowChecks).map(\.name)
        let constants = Set(ConformanceReport.CheckName.all.map(\.rawValue))
        #expect(battery.allSatisfy(constants.contains), "\(battery.filter { !constants.contains($0) })")
        #expect(constants.contains(CrashReport.checkName))
        #expect(ConformanceReport.CheckName.all.count == constants.count, "no name twice")
        let literal: ConformanceReport.CheckName = "controlled interleavings"
        #expect(literal == .controlledInterleavings)
    }
}
