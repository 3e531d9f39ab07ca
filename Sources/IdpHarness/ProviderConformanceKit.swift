import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer

/// Runs a battery of checks against a credential provider, through the real `IdpSdk` engine and
/// an in-process IDP, and reports per check what held and what did not.
///
/// ```swift
/// let report = await ProviderConformanceKit.run(name: "MyProvider") { user in
///     MyProvider(username: user.userId, password: user.credentials["password"])
/// }
/// print(report)            // a Markdown table of verdicts and figures
/// #expect(report.passed)
/// ```
///
/// The checks:
/// - **race hammer** (first; see ``hammer(_:name:makeProvider:)``) — fresh instances, kit-owned OS
///   threads released together, direct calls with nothing between the threads, every answer graded;
/// - **no data race (ThreadSanitizer)** — under `--sanitize=thread`, the reports ThreadSanitizer
///   printed during the hammer and during the engine's flows (counted before and after each
///   phase) fail the provider; without ThreadSanitizer the check says it was not checked;
/// - **concurrent flows** — many flows from many OS threads at once (default 64 threads, 10,000
///   flows, 100 users), each user's flows sharing one provider instance, all succeed;
/// - **multi-step and re-asks** — half the flows use a two-step client (username, then password),
///   and every `reaskEvery`-th flow has its first answer corrupted on the way to the IDP, so the
///   provider is asked again with `previousError` set; it must answer again (the flow then
///   succeeds) or end the flow with its own error;
/// - **no cross-talk** — every code the IDP issued went to the flow's own user;
/// - **error propagation** — flows for users the provider has no credentials for end with exactly
///   the error the provider returned, and no other flow is disturbed;
/// - **cancellation** — flows cancelled while running complete once, cancelled or done;
/// - **exactly-once completion** — every flow completed exactly once;
/// - **no deadlock** — a watchdog names any flow that does not complete within `hangTimeout`, with
///   its step and the thread it is stuck on, then cancels it;
/// - **provider on SDK threads** — the provider was only ever called on SDK threads;
/// - **blocking under timeouts** (when `providerWait` is set) — with a flow timeout of half the
///   provider's wait every flow ends once with `timedOut`; with a much longer one every flow
///   succeeds.
///
/// The kit blocks only its own OS threads; `run` suspends without blocking the caller's task.
public enum ProviderConformanceKit {
    /// How hard to push, and what to expect of the provider.
    public struct Configuration: Sendable {
        /// OS threads starting flows at once.
        public var threads = 64
        /// Flows in the main run.
        public var flows = 10_000
        /// Users with credentials; each gets one provider instance from a per-user factory.
        public var users = 100
        /// Every n-th flow has its first answer corrupted in transit (0: none).
        public var reaskEvery = 20
        /// Every n-th flow is for a user the provider has no credentials for (0: none).
        public var errorEvery = 50
        /// Every n-th flow is cancelled right after it starts (0: none).
        public var cancelEvery = 50
        /// Simulated IDP latency per request.
        public var latency: Duration = .zero
        /// A flow without a completion after this long is reported as stuck.
        public var hangTimeout: Duration = .seconds(30)
        /// For a provider that blocks: about how long one call waits. Enables the timeout check.
        public var providerWait: Duration?
        /// Race hammer rounds, each with fresh provider instances, after one warm-up round (0: no
        /// hammer).
        public var hammerRounds = 32
        /// Kit-owned OS threads per hammer round, released together.
        public var hammerThreads = 8
        /// Direct `provideCredentials` calls per thread per round.
        public var hammerCallsPerThread = 32
        /// Where the full text of ThreadSanitizer's reports blamed on the provider is written
        /// (`nil`: the temporary directory).
        public var raceReportDirectory: String?

        /// The defaults: 10,000 flows from 64 OS threads over 100 users, 32 hammer rounds of 8 threads.
        public init() {}
    }

    /// A user as the provider factory sees it.
    public struct User: Sendable, CustomStringConvertible {
        /// The user's tenant.
        public let tenantId: String
        /// The user's id.
        public let userId: String
        /// The values by field id (`username`, `password`); empty for a user the provider is to
        /// have no credentials for.
        public let credentials: [String: String]

        /// Never shows the values.
        public var description: String { "User(\(tenantId)/\(userId), fields: \(credentials.keys.sorted()))" }
    }

    static let tenant = "conformance"
    static let stepwiseClient = "HarnessStepwiseLogin"

    /// Runs the battery with one provider instance per user, shared by all that user's flows.
    /// - Parameters:
    ///   - configuration: How hard to push, and what to expect of the provider.
    ///   - name: The provider's name, for the report.
    ///   - makeProvider: Called once per user (also for users without credentials); it may await
    ///     (to fill an actor, say).
    public static func run(
        _ configuration: Configuration = Configuration(),
        name: String,
        makeProvider: @escaping @Sendable (User) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await Run(configuration: configuration, name: name, bind: perUser(makeProvider)).execute()
    }

    /// Runs only the race hammer (with ThreadSanitizer's verdict), with one provider instance per
    /// user, fresh for every round: the quick check for data races.
    ///
    /// ```swift
    /// let report = await ProviderConformanceKit.hammer(name: "MyProvider") { user in MyProvider(user) }
    /// #expect(report.passed)   // under --sanitize=thread: no race reported, every answer right
    /// ```
    ///
    /// Each round makes fresh instances, starts `hammerThreads` kit-owned OS threads that wait at a
    /// start barrier, and lets each make `hammerCallsPerThread` direct calls (the round's shared
    /// user from every thread, the thread's own user, a user without credentials) with no lock,
    /// semaphore or print between the threads; answers go to per-thread slots and are graded after
    /// the end barrier. A round that does not end within `hangTimeout` is "stale".
    public static func hammer(
        _ configuration: Configuration = Configuration(),
        name: String,
        makeProvider: @escaping @Sendable (User) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await Run(configuration: configuration, name: name, battery: false, bind: perUser(makeProvider)).execute()
    }

    /// Runs only the race hammer with one instance for every user, fresh for every round.
    public static func hammer(
        _ configuration: Configuration = Configuration(),
        name: String,
        sharedProvider: @escaping @Sendable ([User]) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await Run(configuration: configuration, name: name, battery: false, bind: shared(sharedProvider)).execute()
    }

    /// One fresh instance per user.
    static func perUser(_ makeProvider: @escaping @Sendable (User) async -> any IdpSdkInteractionInterface) -> Run.Bind {
        { users in
            var providers: [any IdpSdkInteractionInterface] = []
            for user in users { providers.append(await makeProvider(user)) }
            return Unverified(providers)
        }
    }

    /// One fresh instance, the same for every user.
    static func shared(_ sharedProvider: @escaping @Sendable ([User]) async -> any IdpSdkInteractionInterface) -> Run.Bind {
        { users in
            let provider = await sharedProvider(users)
            return Unverified(users.map { _ in provider })
        }
    }

    /// Runs the battery with one provider instance shared by every user's flows (the Kotlin
    /// samples' `companion object`).
    public static func run(
        _ configuration: Configuration = Configuration(),
        name: String,
        sharedProvider: @escaping @Sendable ([User]) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await Run(configuration: configuration, name: name, bind: shared(sharedProvider)).execute()
    }
}

/// One run of the battery.
struct Run: Sendable {
    /// Makes the providers for the given users, one per user (the same instance for a shared one).
    typealias Bind = @Sendable ([ProviderConformanceKit.User]) async -> Unverified<[any IdpSdkInteractionInterface]>
    let configuration: ProviderConformanceKit.Configuration
    let name: String
    /// Whether to run the engine's battery after the hammer.
    var battery = true
    let bind: Bind

    struct Plan: Sendable {
        let index: Int
        let user: Int
        let client: String
        let trace: TraceParent
        let corrupt: Bool
        let cancel: Bool
        let expectsProviderError: Bool
    }

    struct Outcome: Sendable {
        let plan: Plan
        let result: IdpSdkResult?
        let latency: Duration
    }

    /// Waits, up to `limit`, until the engine has told each flow's probe that the flow ended with
    /// none of its provider calls running (`flowDidEnd`): past that the engine does nothing more
    /// for the flow, so what the ledger counts then is final. Flows with no result (stuck) are
    /// not waited for.
    static func settle(_ outcomes: [Outcome], probes: [ConformanceProbe], limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        var pending = outcomes.compactMap { outcome in outcome.result?.flowId.map { (probes[outcome.plan.user], $0) } }
        while !pending.isEmpty, ContinuousClock.now < deadline {
            pending.removeAll { probe, flowId in (probe.calls(flowId)?.endedCount ?? 0) > 0 }
            if !pending.isEmpty { try? await Task.sleep(for: .milliseconds(2)) }
        }
    }

    func execute() async -> ConformanceReport {
        let started = ContinuousClock.now
        let hammer = configuration.hammerRounds > 0 ? await hammerPhase() : nil
        /// A report of the hammer alone, with `checks` (none, or the setup's failure).
        func hammerOnly(_ checks: [ConformanceReport.Check]) -> ConformanceReport {
            var report = ConformanceReport(
                providerName: name, checks: checks, stuckFlows: [], flows: 0, threads: configuration.hammerThreads, users: 0,
                elapsed: ContinuousClock.now - started, flowLatency: (.zero, .zero, .zero), providerCallLatency: (.zero, .zero, .zero),
                providerCalls: 0, peakSDKThreads: 0)
            RaceVerdict.add(hammer: hammer, flows: nil, directory: configuration.raceReportDirectory, to: &report)
            return report
        }
        guard battery else { return hammerOnly([]) }
        let flowReports = ThreadSanitizerPhase.Recorder(name: "engine flows")
        // The figures are the engine flows' own: the hammer before them is not counted.
        let flowsStarted = ContinuousClock.now
        let threads = max(1, configuration.threads)
        let userCount = max(1, configuration.users)
        let tenant = ProviderConformanceKit.tenant

        // The IDP: a one-step and a two-step login client, users with fresh random passwords,
        // and a few users the provider is to have no credentials for.
        let idp = IdpServer(configuration: .init(auditLogCapacity: max(100_000, configuration.flows * 8)))
        let withoutCredentials = configuration.errorEvery > 0 ? 3 : 0
        var users: [ProviderConformanceKit.User] = []
        do {
            try idp.addTenant(tenant)
            try idp.addClient(IdpClientConfiguration(
                clientId: ProviderConformanceKit.stepwiseClient, purpose: .login,
                steps: [[IdpFormField(id: "username", label: "Username", role: .username)],
                        [IdpFormField(id: "password", label: "Password", role: .password)]]
            ), tenant: tenant)
            for index in 0..<(userCount + withoutCredentials) {
                let userId = String(format: "user-%03d", index)
                let password = "pw-" + SecureRandom.token(byteCount: 9)
                try idp.addUser(userId, tenant: tenant, password: password)
                let credentials = index < userCount ? ["username": userId, "password": password] : [:]
                users.append(.init(tenantId: tenant, userId: userId, credentials: credentials))
            }
        } catch {
            return hammerOnly([.init(name: "setting up the IDP", passed: false, detail: "\(error)")])
        }
        let providers = await bind(users).value
        var probes: [ConformanceProbe] = []
        var probeByProvider: [ObjectIdentifier: ConformanceProbe] = [:]
        for index in users.indices {
            let provider = providers[index]
            // A provider shared by several users gets one probe, so it stays one instance.
            guard type(of: provider) is AnyClass else {
                probes.append(ConformanceProbe(provider))
                continue
            }
            let key = ObjectIdentifier(provider as AnyObject)
            let probe = probeByProvider[key] ?? ConformanceProbe(provider)
            probeByProvider[key] = probe
            probes.append(probe)
        }

        let corruptions = CorruptingTransport(inner: InProcessTransport(server: idp, latency: configuration.latency))
        let sdk = IdpSdkService(tenantId: tenant, idpUrl: "https://conformance.invalid", certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(flowTimeout: .seconds(3600)), transport: corruptions)

        // The plan.
        var plans: [Plan] = []
        for index in 0..<configuration.flows {
            let expectsError = configuration.errorEvery > 0 && index % configuration.errorEvery == configuration.errorEvery - 1
            // Rotate by round, so the every-n-th special flows do not always fall on the same users.
            let user = expectsError ? userCount + index % withoutCredentials : (index + index / userCount) % userCount
            let corrupt = !expectsError && configuration.reaskEvery > 0 && index % configuration.reaskEvery == 0
            let cancel = !expectsError && !corrupt && configuration.cancelEvery > 0 && index % configuration.cancelEvery == 1
            let client = index % 2 == 0 ? "KssIdpLogin" : ProviderConformanceKit.stepwiseClient
            plans.append(Plan(index: index, user: user, client: client, trace: .random(), corrupt: corrupt, cancel: cancel, expectsProviderError: expectsError))
        }
        for plan in plans where plan.corrupt { corruptions.corruptFirstSubmission(of: plan.trace.traceId) }

        // The main run, on OS threads.
        let ledger = CompletionLedger()
        let watchdog = Watchdog()
        let (allPlans, allProbes, allUsers) = (plans, probes, users)
        let outcomes = await onOSThreads(threads) { thread -> [Outcome] in
            var mine: [Outcome] = []
            var next = thread
            while next < allPlans.count, !watchdog.aborted {
                let plan = allPlans[next]
                next += threads
                mine.append(runFlow(plan, sdk: sdk, probe: allProbes[plan.user], user: allUsers[plan.user], ledger: ledger, watchdog: watchdog))
            }
            return mine
        }.flatMap { $0 }
        // Completions are counted once the engine is done with every flow (a second completion
        // would have come by then).
        await Self.settle(outcomes, probes: probes, limit: configuration.hangTimeout)

        var checks = evaluate(outcomes: outcomes, plans: plans, idp: idp, probes: probes, users: users, ledger: ledger, watchdog: watchdog)
        if let wait = configuration.providerWait, !watchdog.aborted {
            checks.append(await blockingCheck(wait: wait, users: users, probes: probes, transport: InProcessTransport(server: idp, latency: configuration.latency)))
        }

        let latencies = outcomes.filter { $0.result?.hasError() == false }.map(\.latency).sorted()
        let calls = Self.unique(probes).flatMap(\.callDurations).sorted()
        let flowPhase = flowReports.finish(rounds: 1, roundsWithReports: 0)
        var report = ConformanceReport(
            providerName: name, checks: checks, stuckFlows: watchdog.stuck, flows: outcomes.count, threads: threads,
            users: userCount, elapsed: ContinuousClock.now - flowsStarted,
            flowLatency: Self.summary(latencies), providerCallLatency: Self.summary(calls), providerCalls: calls.count,
            peakSDKThreads: sdk.workerThreads.peak
        )
        RaceVerdict.add(hammer: hammer, flows: flowPhase, directory: configuration.raceReportDirectory, to: &report)
        return report
    }

    /// The race hammer over users of its own (no IDP): the battery's first phase.
    private func hammerPhase() async -> RaceHammer.Findings {
        let count = max(2, min(configuration.users, configuration.hammerThreads + 1))
        var users = (0..<count).map { index in
            let userId = String(format: "hammer-%03d", index)
            return ProviderConformanceKit.User(tenantId: ProviderConformanceKit.tenant, userId: userId,
                                               credentials: ["username": userId, "password": "pw-" + SecureRandom.token(byteCount: 9)])
        }
        if configuration.errorEvery > 0 {
            users.append(.init(tenantId: ProviderConformanceKit.tenant, userId: String(format: "hammer-%03d", count), credentials: [:]))
        }
        let hammer = RaceHammer(settings: .init(rounds: configuration.hammerRounds, threads: configuration.hammerThreads,
                                                callsPerThread: configuration.hammerCallsPerThread, hangTimeout: configuration.hangTimeout),
                                users: users)
        return await hammer.run(fresh: bind, name: name)
    }

    /// Starts one flow from the calling OS thread and waits for its completion, watchdog in hand.
    private func runFlow(_ plan: Plan, sdk: IdpSdkService, probe: ConformanceProbe, user: ProviderConformanceKit.User,
                         ledger: CompletionLedger, watchdog: Watchdog) -> Outcome {
        let done = DispatchSemaphore(value: 0)
        let box = LockedValue<IdpSdkResult?>(nil)
        let began = ContinuousClock.now
        let challenge = PKCE.challenge(for: PKCE.makeVerifier())
        let handle = sdk.getAuthorizationCode(
            withAstClientData: AstClientDataInfo(clientData: "conformance", astClientId: IdpServer.unassignedAstClientId,
                                                 codeChallenge: challenge, codeChallengeMethod: PKCE.methodS256),
            clientId: plan.client, interactionInterface: probe, userId: user.userId, traceParent: plan.trace.description
        ) { result in
            if let id = result.flowId { ledger.record(id) }
            box.withLock { if $0 == nil { $0 = result } }
            done.signal()
        }
        if plan.cancel { handle.cancel() }
        let hang = configuration.hangTimeout
        if done.wait(timeout: .now(plus: hang)) == .timedOut {
            let inside = probe.insideNow(handle.flowId)
            watchdog.report(ConformanceReport.StuckFlow(
                flow: handle.flowId.description, user: user.userId, client: plan.client, step: inside?.step,
                attempt: inside?.attempt, thread: inside?.thread, waited: ContinuousClock.now - began))
            handle.cancel()
            _ = done.wait(timeout: .now() + .seconds(10))
        }
        return Outcome(plan: plan, result: box.withLock { $0 }, latency: ContinuousClock.now - began)
    }

    private func evaluate(outcomes: [Outcome], plans: [Plan], idp: IdpServer, probes: [ConformanceProbe],
                          users: [ProviderConformanceKit.User], ledger: CompletionLedger, watchdog: Watchdog) -> [ConformanceReport.Check] {
        typealias Check = ConformanceReport.Check
        var checks: [Check] = []
        let normal = outcomes.filter { !$0.plan.expectsProviderError && !$0.plan.cancel && !$0.plan.corrupt }
        func list(_ items: [String]) -> String {
            items.prefix(5).joined(separator: "; ") + (items.count > 5 ? "; and \(items.count - 5) more" : "")
        }

        let failedNormal = normal.filter { $0.result?.hasError() != false }
        checks.append(Check(
            name: "concurrent flows",
            passed: failedNormal.isEmpty && !normal.isEmpty,
            detail: failedNormal.isEmpty ? "\(normal.count) flows of \(Set(normal.map(\.plan.user)).count) users from \(configuration.threads) OS threads all succeeded"
                : "\(failedNormal.count) of \(normal.count) flows failed: " + list(failedNormal.map { "flow \($0.plan.index) (\(users[$0.plan.user].userId), \($0.plan.client)): \($0.result?.idpSdkError?.description ?? "no completion")" })
        ))

        let stepwise = normal.filter { $0.plan.client == ProviderConformanceKit.stepwiseClient }
        let reasked = outcomes.filter(\.plan.corrupt)
        var gaveUp = 0
        // After a rejection the provider may answer again or end the flow with its own error (not
        // resending a secret the IDP refused is a fair choice); anything else is a failure.
        let reaskProblems = reasked.compactMap { outcome -> String? in
            guard let result = outcome.result, let id = result.flowId, let calls = probes[outcome.plan.user].calls(id) else { return "flow \(outcome.plan.index): no completion" }
            if !calls.sawRejection { return "flow \(outcome.plan.index): the provider was never re-asked" }
            guard let error = result.idpSdkError else { return nil }
            if error == calls.lastError { gaveUp += 1; return nil }
            return "flow \(outcome.plan.index): ended with \(error) after a re-ask"
        }
        let stepProblems = stepwise.compactMap { outcome -> String? in
            guard let id = outcome.result?.flowId, let calls = probes[outcome.plan.user].calls(id) else { return nil }
            return calls.lastStep < 2 ? "flow \(outcome.plan.index): two-step client answered in \(calls.lastStep) step(s)" : nil
        }
        checks.append(Check(
            name: "multi-step and re-asks",
            passed: reaskProblems.isEmpty && stepProblems.isEmpty && stepwise.allSatisfy { $0.result?.hasError() == false },
            detail: reaskProblems.isEmpty && stepProblems.isEmpty
                ? "\(stepwise.count) two-step flows; \(reasked.count) flows re-asked after a rejected answer: \(reasked.count - gaveUp) answered again and succeeded, \(gaveUp) ended with the provider's own error"
                : list(reaskProblems + stepProblems)
        ))

        let issued = Dictionary(grouping: idp.auditLog().filter { $0.event == .codeIssued || $0.event == .credentialsRejected }, by: { $0.traceId ?? "" })
        var crossTalk: [String] = []
        for outcome in outcomes {
            let entries = issued[outcome.plan.trace.traceId] ?? []
            let expected = users[outcome.plan.user].userId
            for entry in entries where entry.event == .codeIssued && entry.userId != expected {
                crossTalk.append("flow \(outcome.plan.index) of \(expected) got a code for \(entry.userId ?? "?")")
            }
            for entry in entries where entry.event == .credentialsRejected && entry.detail.hasSuffix("username_mismatch") {
                crossTalk.append("flow \(outcome.plan.index) of \(expected) was answered with another user's name")
            }
        }
        checks.append(Check(
            name: "no cross-talk",
            passed: crossTalk.isEmpty,
            detail: crossTalk.isEmpty ? "every code went to its own flow's user" : list(crossTalk)
        ))

        let errorFlows = outcomes.filter(\.plan.expectsProviderError)
        let errorProblems = errorFlows.compactMap { outcome -> String? in
            guard let result = outcome.result, let id = result.flowId else { return "flow \(outcome.plan.index): no completion" }
            let returned = probes[outcome.plan.user].calls(id)?.lastError
            guard let returned else { return "flow \(outcome.plan.index) (no credentials): the provider answered instead of returning an error; the flow ended with \(result.idpSdkError?.description ?? "a code")" }
            return result.idpSdkError == returned ? nil : "flow \(outcome.plan.index): the provider returned \(returned) but the flow ended with \(result.idpSdkError?.description ?? "a code")"
        }
        checks.append(Check(
            name: "error propagation",
            passed: errorProblems.isEmpty,
            detail: errorProblems.isEmpty ? (errorFlows.isEmpty ? "not exercised" : "\(errorFlows.count) flows without credentials ended with exactly the provider's error; the other flows were undisturbed")
                : list(errorProblems)
        ))

        let cancelled = outcomes.filter(\.plan.cancel)
        let cancelProblems = cancelled.compactMap { outcome -> String? in
            guard let result = outcome.result else { return "flow \(outcome.plan.index): no completion after cancel" }
            if result.hasError(), result.idpSdkError?.code != .cancelled { return "flow \(outcome.plan.index): ended with \(result.idpSdkError!.description) after cancel" }
            return nil
        }
        checks.append(Check(
            name: "cancellation",
            passed: cancelProblems.isEmpty,
            detail: cancelProblems.isEmpty ? "\(cancelled.count) flows cancelled while running completed once (\(cancelled.filter { $0.result?.idpSdkError?.code == .cancelled }.count) cancelled, the rest had finished)"
                : list(cancelProblems)
        ))

        let duplicates = ledger.duplicates
        let missing = outcomes.filter { $0.result == nil }
        checks.append(Check(
            name: "exactly-once completion",
            passed: duplicates.isEmpty && missing.isEmpty && ledger.completedFlows == outcomes.count,
            detail: duplicates.isEmpty && missing.isEmpty ? "\(ledger.completions) completions for \(outcomes.count) flows"
                : list(duplicates.map { "\($0.key) completed \($0.value) times" } + missing.map { "flow \($0.plan.index) never completed" })
        ))

        checks.append(Check(
            name: "no deadlock",
            passed: watchdog.stuck.isEmpty,
            detail: watchdog.stuck.isEmpty ? "no flow waited longer than \(configuration.hangTimeout)"
                : "\(watchdog.stuck.count) stuck (the run stopped early): " + list(watchdog.stuck.map(\.description))
        ))

        let misplaced = Self.unique(probes).flatMap(\.misplacedCalls)
        checks.append(Check(
            name: "provider on SDK threads",
            passed: misplaced.isEmpty,
            detail: misplaced.isEmpty ? "every call ran on an SDK thread, outside any task" : list(misplaced)
        ))
        return checks
    }

    /// Flows with a timeout shorter than the provider's wait must all end once with `timedOut`;
    /// with a longer one they must all succeed.
    private func blockingCheck(wait: Duration, users: [ProviderConformanceKit.User], probes: [ConformanceProbe], transport: any Transport) async -> ConformanceReport.Check {
        let count = min(configuration.threads, 16)
        var problems: [String] = []
        // The longer timeout is generous: under load (ThreadSanitizer, a busy CI machine) a flow
        // takes far longer than the provider's own wait.
        for (timeout, expectSuccess) in [(wait / 2, false), (wait + .seconds(300), true)] {
            let sdk = IdpSdkService(tenantId: ProviderConformanceKit.tenant, idpUrl: "https://conformance.invalid", certificateChain: Data(),
                                    shouldHashPin: false, configuration: .init(flowTimeout: timeout), transport: transport)
            let ledger = CompletionLedger()
            let watchdog = Watchdog()
            let results = await onOSThreads(count) { index -> [Outcome] in
                let user = index % max(1, configuration.users)
                let plan = Plan(index: index, user: user, client: "KssIdpLogin", trace: .random(), corrupt: false, cancel: false, expectsProviderError: false)
                return [runFlow(plan, sdk: sdk, probe: probes[user], user: users[user], ledger: ledger, watchdog: watchdog)]
            }.flatMap { $0 }
            // Let blocked providers return and any late completion arrive before counting.
            await Self.settle(results, probes: probes, limit: wait + .seconds(300))
            if !ledger.duplicates.isEmpty || ledger.completions != count { problems.append("timeout \(timeout): \(ledger.completions) completions for \(count) flows") }
            for outcome in results {
                let ok = expectSuccess ? outcome.result?.hasError() == false : outcome.result?.idpSdkError?.code == .timedOut
                if !ok { problems.append("timeout \(timeout): flow \(outcome.plan.index) ended with \(outcome.result?.description ?? "nothing")") }
            }
        }
        return ConformanceReport.Check(
            name: "blocking under timeouts",
            passed: problems.isEmpty,
            detail: problems.isEmpty ? "\(count) flows with a timeout of half the provider's wait each ended once with timedOut; with a timeout well above it all succeeded"
                : problems.prefix(5).joined(separator: "; ")
        )
    }

    /// Runs `body(i)` on `count` new OS threads and suspends, without blocking, until all return.
    private func onOSThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) async -> [T] {
        await withCheckedContinuation { continuation in
            let results = LockedValue<[Int: T]>([:])
            for index in 0..<count {
                let thread = Thread {
                    let value = body(index)
                    let all = results.withLock { results -> [T]? in
                        results[index] = value
                        return results.count == count ? (0..<count).map { results[$0]! } : nil
                    }
                    if let all { continuation.resume(returning: all) }
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
        }
    }

    /// Each probe once, for a provider shared by several users.
    static func unique(_ probes: [ConformanceProbe]) -> [ConformanceProbe] {
        Array(probes.reduce(into: [ObjectIdentifier: ConformanceProbe]()) { $0[ObjectIdentifier($1)] = $1 }.values)
    }

    static func summary(_ sorted: [Duration]) -> (p50: Duration, p99: Duration, max: Duration) {
        guard !sorted.isEmpty else { return (.zero, .zero, .zero) }
        func at(_ p: Double) -> Duration { sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))] }
        return (at(0.5), at(0.99), sorted[sorted.count - 1])
    }
}

/// Collects stuck flows; once one is seen, the run stops starting new flows.
private final class Watchdog: Sendable {
    private let state = LockedValue<[ConformanceReport.StuckFlow]>([])

    func report(_ stuck: ConformanceReport.StuckFlow) { state.withLock { $0.append(stuck) } }
    var stuck: [ConformanceReport.StuckFlow] { state.withLock { $0 } }
    var aborted: Bool { state.withLock { !$0.isEmpty } }
}

/// Corrupts the first credential submission of chosen flows (by trace id) on its way to the IDP,
/// so the IDP rejects it and the provider is asked again.
private final class CorruptingTransport: Transport {
    let inner: any Transport
    private let pending = LockedValue<Set<String>>([])

    init(inner: any Transport) { self.inner = inner }

    func corruptFirstSubmission(of traceId: String) { _ = pending.withLock { $0.insert(traceId) } }

    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        guard request.method == "POST", request.path.hasSuffix("/login-actions/authenticate"),
              let traceParent = request.headers["traceparent"],
              let body = String(validating: request.body, as: UTF8.self),
              let pairs = try? FormURLEncoding.decode(body),
              pairs.contains(where: { $0.name == "password" }) else {
            inner.send(request, completion: completion)
            return
        }
        guard let traceId = TraceParent.traceId(of: traceParent), pending.withLock({ $0.remove(traceId) != nil }) else {
            inner.send(request, completion: completion)
            return
        }
        var corrupted = request
        corrupted.body = FormURLEncoding.encodeBytes(pairs.map { ($0.name, $0.name == "password" ? "corrupted-in-transit" : $0.value) })
        inner.send(corrupted, completion: completion)
    }
}
