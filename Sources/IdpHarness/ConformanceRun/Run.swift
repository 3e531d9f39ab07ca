import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer

/// One run of the kit: performs the phases `RunStateMachine` decides on, collects what they saw
/// as ``ConformanceEvidence``, and has ``ConformanceBattery`` judge it.
///
/// The run's task holds the phase machine and sends it every event; the flows run on kit-owned
/// OS threads, which share only the ledger, the watchdog and the probes (each a `LockedValue`
/// inside), never the machine.
///
/// Every user of the run, in every phase, carries the run's one ``ConformanceClock``; only the
/// direct-call phases' crossings move it.
struct Run: Sendable {
    /// Makes the providers for the given users, one per user (the same instance for a shared one).
    typealias Bind = @Sendable ([ProviderConformanceKit.User]) async -> Unverified<[any IdpSdkInteractionInterface]>
    typealias Phases = RunStateMachine<DirectCalls, World, Flows, BlockingEvidence>

    let configuration: ProviderConformanceKit.Configuration
    let name: String
    /// Whether to run the engine's battery after the hammer.
    var battery = true
    /// Whether one instance serves every user (`sharedProvider:`): then there are no instances
    /// of one user to call at once.
    var sharedInstance = false
    let bind: Bind
    /// The kit's clock, given to every user of the run.
    let clock = ConformanceClock()

    /// What the direct-call phases found: the race hammer's rounds, then the several-instances
    /// rounds.
    struct DirectCalls: Sendable {
        var hammer: RaceHammer.Findings?
        var instances: RaceHammer.Findings?
        /// Why the several-instances rounds did not run, when the run asked for them.
        var instancesNotExercised: String?
        /// What the controlled phase found.
        var controlled: ControlledPhase.Findings?
        /// Why the controlled phase did not run, when the run asked for it.
        var controlledNotExercised: String?

        /// ThreadSanitizer's reports of each phase that ran.
        var reports: [ThreadSanitizerPhase] { [hammer?.reports, instances?.reports].compactMap { $0 } }
    }

    struct Plan: Sendable {
        let user: Int
        let client: String
        let trace: TraceParent
        let corrupt: Bool
        let cancel: Bool
        let expectsProviderError: Bool
    }

    struct Outcome: Sendable {
        let plan: Plan
        /// The engine's id of the flow, which names it in the verdicts, whether or not it completed.
        let flowId: IdpSdkFlowID
        let result: IdpSdkResult?
        let latency: Duration
    }

    /// What the engine's flows run in: the IDP and its users, the providers behind their probes
    /// (by user), the plan, and the transport that corrupts the re-asked flows' first answers.
    struct World: Sendable {
        let idp: IdpServer
        let users: [ProviderConformanceKit.User]
        let probes: [ConformanceProbe]
        let plans: [Plan]
        let transport: CorruptingTransport
    }

    /// The engine's flows, once the engine is done with each: their outcomes, and what counted
    /// them.
    struct Flows: Sendable {
        let outcomes: [Outcome]
        let ledger: CompletionLedger
        let watchdog: Watchdog
        let sdk: IdpSdkService
    }

    func execute() async -> ConformanceReport {
        await evidence().report(providerName: name)
    }

    /// Runs the phases the phase machine asks for, one after another, and collects what they saw.
    func evidence() async -> ConformanceEvidence {
        let started = ContinuousClock.now
        let direct = configuration.hammerRounds > 0 || configuration.instanceRounds > 0 || configuration.controlledSchedules > 0
        var phases = Phases(plan: .init(hammer: direct, battery: battery, providerWait: configuration.providerWait))
        var action = phases.start()
        // The figures are the engine flows' own: the hammer before them is not counted.
        var flowsStarted = started
        var flowReports: ThreadSanitizerPhase.Recorder?
        while true {
            KitProgress.note(action, state: phases.state, configuration: configuration)
            switch action {
            case .runHammer:
                action = phases.hammerFinished(await directCallPhases())
            case .setUp:
                flowReports = ThreadSanitizerPhase.Recorder(name: "engine flows")
                flowsStarted = ContinuousClock.now
                switch await setUp() {
                case .success(let world): action = phases.setUpFinished(world)
                case .failure(let error): action = phases.setUpFailed("\(error)")
                }
            case .runFlows(let world):
                let flows = await runFlows(in: world)
                action = phases.flowsFinished(flows, stuck: flows.watchdog.aborted)
            case .runBlockingFlows(let world, let wait):
                action = phases.blockingFlowsFinished(await blockingFlows(in: world, wait: wait))
            case .finish(.withoutFlows(let direct, let failure)):
                return ConformanceEvidence(
                    configuration: configuration, hammer: direct?.hammer, severalInstances: direct?.instances,
                    severalInstancesNotExercised: direct?.instancesNotExercised,
                    controlled: direct?.controlled, controlledNotExercised: direct?.controlledNotExercised,
                    threadSanitizer: .init(phases: direct?.reports ?? [], provider: name, directory: configuration.raceReportDirectory),
                    stoppedBy: failure, elapsed: ContinuousClock.now - started)
            case .finish(.battery(let direct, let world, let flows, let blocking)):
                let flowPhase = (flowReports ?? .init(name: "engine flows")).finish(rounds: 1, roundsWithReports: 0)
                return ConformanceEvidence(
                    configuration: configuration, hammer: direct?.hammer, severalInstances: direct?.instances,
                    severalInstancesNotExercised: direct?.instancesNotExercised,
                    controlled: direct?.controlled, controlledNotExercised: direct?.controlledNotExercised,
                    threadSanitizer: .init(phases: (direct?.reports ?? []) + [flowPhase], provider: name,
                                           directory: configuration.raceReportDirectory),
                    flows: Self.evidence(of: flows, in: world), blocking: blocking, elapsed: ContinuousClock.now - flowsStarted)
            }
        }
    }

    /// The direct-call phases, over users of their own (no IDP): the race hammer, then the
    /// several-instances rounds. The battery's first phase.
    private func directCallPhases() async -> DirectCalls {
        let count = max(2, min(configuration.users, configuration.hammerThreads + 1))
        var users = (0..<count).map { index in
            let userId = String(format: "hammer-%03d", index)
            return ProviderConformanceKit.User(tenantId: ProviderConformanceKit.tenant, userId: userId,
                                               credentials: ["username": userId, "password": "pw-" + SecureRandom.token(byteCount: 9)], clock: clock)
        }
        if configuration.errorEvery > 0 {
            users.append(.init(tenantId: ProviderConformanceKit.tenant, userId: String(format: "hammer-%03d", count), credentials: [:], clock: clock))
        }
        let instances = sharedInstance ? 1 : max(1, configuration.instances)
        var found = DirectCalls()
        if configuration.hammerRounds > 0 {
            let hammer = RaceHammer(settings: .init(rounds: configuration.hammerRounds, threads: configuration.hammerThreads,
                                                    callsPerThread: configuration.hammerCallsPerThread, hangTimeout: configuration.hangTimeout,
                                                    instances: instances, expiryHorizon: configuration.expiryHorizon),
                                    users: users, clock: clock)
            found.hammer = await hammer.run(fresh: bind, name: name)
        }
        if configuration.instanceRounds > 0 { found.instancesNotExercised = await severalInstances(users: users, instances: instances, found: &found) }
        if configuration.controlledSchedules > 0 {
            if let reason = Self.stopReason(found) {
                found.controlledNotExercised = reason
            } else {
                KitProgress.note(.phase("the controlled phase"))
                let phase = ControlledPhase(settings: .init(schedules: configuration.controlledSchedules, threads: max(1, configuration.controlledThreads),
                                                            calls: max(1, configuration.controlledCalls), instances: instances,
                                                            horizon: configuration.expiryHorizon, seed: configuration.controlledSeed),
                                            fresh: bind, name: name)
                found.controlled = await phase.run()
            }
        }
        return found
    }

    /// Why a phase after the race hammer does not run: the hammer's ThreadSanitizer reports or a
    /// round that never ended.
    private static func stopReason(_ found: DirectCalls) -> String? {
        if let reports = found.hammer?.reports, !reports.findings.isEmpty || reports.lost > 0 {
            // As the hammer stops its own rounds: more calls to a racy provider only risk a crash.
            return "ThreadSanitizer had reported during the race hammer"
        }
        if let stale = found.hammer?.staleRound {
            return "the race hammer's round \(stale) did not end (its threads may still hold what the provider holds)"
        }
        return nil
    }

    /// The several-instances rounds; returns why they did not run, if they did not.
    private func severalInstances(users: [ProviderConformanceKit.User], instances: Int, found: inout DirectCalls) async -> String? {
        if sharedInstance { return "one instance serves every user (a shared provider)" }
        if instances < 2 { return "one instance per user (instances is 1)" }
        if let reason = Self.stopReason(found) { return reason }
        // Every thread asks for one user, so no more calls per thread than the hammer's, and
        // enough for a crossing halfway.
        let calls = max(4, min(8, configuration.hammerCallsPerThread))
        let rounds = RaceHammer(settings: .init(rounds: configuration.instanceRounds, threads: max(instances, configuration.hammerThreads),
                                                callsPerThread: calls, hangTimeout: configuration.hangTimeout,
                                                instances: instances, expiryHorizon: configuration.expiryHorizon),
                                users: users, plan: .oneUser, phase: "several instances", clock: clock)
        found.instances = await rounds.run(fresh: bind, name: name)
        return nil
    }

    /// The IDP (a one-step and a two-step login client, users with fresh random passwords, and a
    /// few users the provider is to have no credentials for), the providers behind their probes,
    /// and the plan.
    private func setUp() async -> Result<World, any Error> {
        let userCount = max(1, configuration.users)
        let tenant = ProviderConformanceKit.tenant
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
                users.append(.init(tenantId: tenant, userId: userId, credentials: credentials, clock: clock))
            }
        } catch {
            return .failure(error)
        }
        let providers = await bind(users).value
        var probes: [ConformanceProbe] = []
        var probeByProvider: [ObjectIdentifier: ConformanceProbe] = [:]
        let overlap = CallOverlap()
        let gate = CallGate(together: min(configuration.engineCallsTogether, max(1, configuration.threads)), window: configuration.engineCallWindow)
        for provider in providers {
            // A provider shared by several users gets one probe, so it stays one instance.
            guard type(of: provider) is AnyClass else {
                probes.append(ConformanceProbe(provider, overlap: overlap, gate: gate))
                continue
            }
            let key = ObjectIdentifier(provider as AnyObject)
            let probe = probeByProvider[key] ?? ConformanceProbe(provider, overlap: overlap, gate: gate)
            probeByProvider[key] = probe
            probes.append(probe)
        }

        var plans: [Plan] = []
        for index in 0..<configuration.flows {
            let expectsError = configuration.errorEvery > 0 && index % configuration.errorEvery == configuration.errorEvery - 1
            // Rotate by round, so the every-n-th special flows do not always fall on the same users.
            let user = expectsError ? userCount + index % withoutCredentials : (index + index / userCount) % userCount
            let corrupt = !expectsError && configuration.reaskEvery > 0 && index % configuration.reaskEvery == 0
            let cancel = !expectsError && !corrupt && configuration.cancelEvery > 0 && index % configuration.cancelEvery == 1
            let client = index % 2 == 0 ? "KssIdpLogin" : ProviderConformanceKit.stepwiseClient
            plans.append(Plan(user: user, client: client, trace: .random(), corrupt: corrupt, cancel: cancel, expectsProviderError: expectsError))
        }
        let transport = CorruptingTransport(inner: InProcessTransport(server: idp, latency: configuration.latency))
        for plan in plans where plan.corrupt { transport.corruptFirstSubmission(of: plan.trace.traceId) }
        return .success(World(idp: idp, users: users, probes: probes, plans: plans, transport: transport))
    }

    /// The main run, on OS threads; returns once the engine is done with every flow.
    private func runFlows(in world: World) async -> Flows {
        let sdk = IdpSdkService(tenantId: ProviderConformanceKit.tenant, idpUrl: "https://conformance.invalid", certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(flowTimeout: .seconds(3600)), transport: world.transport)
        let threads = max(1, configuration.threads)
        let ledger = CompletionLedger()
        let watchdog = Watchdog()
        // Released together, as the hammer releases its threads; the probes' gate then gathers the
        // flows' provider calls.
        let outcomes = await OSThreads.run(threads, together: true) { thread -> [Outcome] in
            var mine: [Outcome] = []
            var next = thread
            while next < world.plans.count, !watchdog.aborted {
                let plan = world.plans[next]
                next += threads
                mine.append(runFlow(plan, sdk: sdk, probe: world.probes[plan.user], user: world.users[plan.user], ledger: ledger, watchdog: watchdog))
            }
            return mine
        }.flatMap { $0 }
        // Completions are counted once the engine is done with every flow (a second completion
        // would have come by then).
        await Self.settle(outcomes, probes: world.probes, limit: configuration.hangTimeout)
        return Flows(outcomes: outcomes, ledger: ledger, watchdog: watchdog, sdk: sdk)
    }

    /// Flows with a timeout shorter than the provider's wait, then flows with a much longer one;
    /// returns once the engine is done with every flow.
    private func blockingFlows(in world: World, wait: Duration) async -> BlockingEvidence {
        let count = min(configuration.threads, 16)
        let transport = InProcessTransport(server: world.idp, latency: configuration.latency)
        var rounds: [BlockingEvidence.Round] = []
        // The longer timeout is generous: under load (ThreadSanitizer, a busy CI machine) a flow
        // takes far longer than the provider's own wait.
        for (timeout, expectSuccess) in [(wait / 2, false), (wait + .seconds(300), true)] {
            let sdk = IdpSdkService(tenantId: ProviderConformanceKit.tenant, idpUrl: "https://conformance.invalid", certificateChain: Data(),
                                    shouldHashPin: false, configuration: .init(flowTimeout: timeout), transport: transport)
            let ledger = CompletionLedger()
            let watchdog = Watchdog()
            let outcomes = await OSThreads.run(count, together: true) { index -> [Outcome] in
                let user = index % max(1, configuration.users)
                let plan = Plan(user: user, client: "KssIdpLogin", trace: .random(), corrupt: false, cancel: false, expectsProviderError: false)
                return [runFlow(plan, sdk: sdk, probe: world.probes[user], user: world.users[user], ledger: ledger, watchdog: watchdog)]
            }.flatMap { $0 }
            // Let blocked providers return and any late completion arrive before counting.
            await Self.settle(outcomes, probes: world.probes, limit: wait + .seconds(300))
            rounds.append(.init(timeout: timeout, expectSuccess: expectSuccess, outcomes: outcomes, completions: ledger.perFlow))
        }
        return BlockingEvidence(flows: count, rounds: rounds)
    }

    /// What the engine's flows left in the ledger, the watchdog, the probes and the IDP's audit
    /// log, read once the run is over (the probes' call counts and times include the flows under
    /// timeouts).
    static func evidence(of flows: Flows, in world: World) -> FlowEvidence {
        let probes = unique(world.probes)
        return FlowEvidence(
            outcomes: flows.outcomes, users: world.users,
            calls: probes.reduce(into: [:]) { calls, probe in calls.merge(probe.allCalls) { first, _ in first } },
            decisions: Dictionary(grouping: world.idp.auditLog().filter { $0.event == .codeIssued || $0.event == .credentialsRejected },
                                  by: { $0.traceId ?? "" }),
            completions: flows.ledger.perFlow, stuck: flows.watchdog.stuck, misplacedCalls: probes.flatMap(\.misplacedCalls),
            callDurations: probes.flatMap(\.callDurations).sorted(), peakSDKThreads: flows.sdk.workerThreads.peak,
            overlap: probes.flatMap(\.overlapSamples).sorted())
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
        return Outcome(plan: plan, flowId: handle.flowId, result: box.withLock { $0 }, latency: ContinuousClock.now - began)
    }

    /// Each probe once, for a provider shared by several users.
    static func unique(_ probes: [ConformanceProbe]) -> [ConformanceProbe] {
        Array(probes.reduce(into: [ObjectIdentifier: ConformanceProbe]()) { $0[ObjectIdentifier($1)] = $1 }.values)
    }
}

/// Collects stuck flows; once one is seen, the run stops starting new flows.
final class Watchdog: Sendable {
    private let state = LockedValue<[ConformanceReport.StuckFlow]>([])

    func report(_ stuck: ConformanceReport.StuckFlow) { state.withLock { $0.append(stuck) } }
    var stuck: [ConformanceReport.StuckFlow] { state.withLock { $0 } }
    var aborted: Bool { state.withLock { !$0.isEmpty } }
}
