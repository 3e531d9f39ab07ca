import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// One run's system: the IDP, the SDK, the devices, and what the invariants need to know.
    public final class World: Sendable {
        static let tenant = "stress"
        /// Longer than any clock jump a step makes (a token's 301 s), so flows time out when the
        /// watchdog fires (or a provider hangs), not whenever another app's token expires.
        static let flowTimeout: Duration = .seconds(600)
        /// How long the IDP's lock lasts (constant: the run's policy does not lengthen it).
        static let lockoutDuration: Duration = .seconds(60)
        let options: Options
        let clock = ManualClock()
        let server: IdpServer
        let credentials = Credentials()
        let participants: [Participant]
        /// Set by ``attach(_:)``.
        private let wiring = LockedValue<Wiring?>(nil)
        /// Violations seen as they happened.
        private let violations: LockedValue<[String]>
        private let counts = LockedValue<Counts>(Counts())
        /// Refresh grants and code redemptions the participants expect, per trace.
        private let expectations = LockedValue<[String: Expectation]>([:])
        /// What the participants did, in the order they did it: what a failure prints.
        private let events = LockedValue<[Event]>([])

        struct Event: Sendable {
            let participant: Int
            let text: String
        }

        struct Wiring: Sendable {
            let run: StressRun
            let sdk: IdpSdkService
            let transport: StressTransport
            let provider: any IdpSdkInteractionInterface & Sendable
            let controller: StressController?
        }

        struct Counts: Sendable {
            var flows = 0
            var completions = 0
            var mcEvents = 0
            var checks: [Invariant: Int] = [:]
            var interleavings: [Interleaving: Int] = [:]
        }

        struct Expectation: Sendable {
            var codesRedeemed = 0
        }

        /// A simulated app on its own device.
        struct Participant: Sendable {
            let index: Int
            let user: String
            let trace: TraceParent
            let steps: [Step]
        }

        init(options: Options) {
            self.options = options
            server = IdpServer(configuration: .init(clock: clock, auditLogCapacity: 1_000_000,
                                                    lockout: LockoutPolicy(maximumFailures: options.lockoutAfter, lockoutDuration: Self.lockoutDuration)))
            // A world that could not be set up says so in its final check, as a violation that
            // names no invariant (as a scheduler's verdict does).
            var setUpProblems: [String] = []
            do { try server.addTenant(Self.tenant) } catch { setUpProblems.append("tenant \(Self.tenant): \(error)") }
            var random = SeededRandom(seed: options.seed ^ 0x5157_7e55)
            let weighted = options.mix.keys.sorted().flatMap { Array(repeating: $0, count: max(0, options.mix[$0] ?? 0)) }
            participants = (0..<max(1, options.flows)).map { index in
                // Each participant's script and trace come from the seed and its own index only,
                // so dropping a participant (shrinking) leaves the others' the same.
                var own = SeededRandom(seed: options.seed &+ UInt64(index) &* 0x9e37_79b9_7f4a_7c15)
                let steps = (0..<options.stepsPerFlow).map { _ in weighted.isEmpty ? Step.login : weighted[Int(own.next() % UInt64(weighted.count))] }
                func hex(_ value: UInt64) -> String {
                    let digits = String(value, radix: 16)
                    return String(repeating: "0", count: 16 - digits.count) + digits
                }
                // 32 and 16 hex digits, neither all zero (the index part is at least 1, the parent
                // id odd): a valid traceparent, so the fallback never serves.
                let trace: TraceParent
                do {
                    trace = try TraceParent(traceId: hex(own.next()) + hex(UInt64(index) + 1), parentId: hex(own.next() | 1), sampled: true)
                } catch {
                    setUpProblems.append("participant \(index)'s trace: \(error)")
                    trace = TraceParent.random()
                }
                return Participant(index: index, user: "user-\(index % max(1, options.users))", trace: trace, steps: steps)
            }
            _ = random.next()
            for user in Set(participants.map(\.user)) {
                do { try server.addUser(user, tenant: Self.tenant) } catch { setUpProblems.append("user \(user): \(error)") }
            }
            violations = LockedValue(setUpProblems.map { "world set up: \($0)" })
        }

        /// Wires the SDK and the devices to the run's scheduler and faults.
        func attach(_ run: StressRun) {
            let traces = Dictionary(uniqueKeysWithValues: participants.map { ($0.trace.traceId, $0.index) })
            let faults = StressFaults(plan: run.faults, flowOfTrace: { traces[$0] }, fired: run.fired)
            let transport = StressTransport(inner: InProcessTransport(server: server), scheduler: run.scheduler, faults: faults)
            let controller = run.scheduler.map(StressController.init)
            let sdk = IdpSdkService(tenantId: Self.tenant, idpUrl: "https://stress.idp.test", certificateChain: Data(), shouldHashPin: false,
                                    configuration: .init(flowTimeout: Self.flowTimeout, clock: clock, controller: controller), transport: transport)
            let provider = FaultingProvider(inner: options.makeProvider(credentials), world: self, faults: faults)
            wiring.withLock { $0 = Wiring(run: run, sdk: sdk, transport: transport, provider: provider, controller: controller) }
        }

        private var wired: Wiring { wiring.withLock { $0! } }
        var run: StressRun { wired.run }
        func wiringTransport() -> StressTransport { wired.transport }
        var controller: StressController? { wired.controller }
        func countEvents(_ count: Int) { counts.withLock { $0.mcEvents += count } }

        /// The user id each trace's current flow was started with.
        private let expectedUser = LockedValue<[String: String?]>([:])

        /// Every provider call: its trace must be a participant's, and its user the one that
        /// participant's flow was started for. `flowEnded` is asked after the expectation is read:
        /// an app starts its next flow on the trace only after this one ended, and a call whose
        /// flow ended meanwhile is dropped by the engine.
        func checkCall(_ data: IdpSdkInteractionData, trace: String, flowEnded: () -> Bool) {
            let expected = expectedUser.withLock { $0[trace] }
            guard !flowEnded() else { return }
            checked(Invariant.noCrossTalk, expected != nil && expected! == data.userId && data.tenantId == Self.tenant,
                    "a provider call for user \(data.userId ?? "(activation)") came with trace \(trace.prefix(8)), whose flow is for \(String(describing: expected ?? nil))")
        }

        /// The world is quiet: move the clock past the flow timeout (the watchdog), so a flow
        /// whose answer was lost times out, and send on held responses (a lost response's
        /// transport timeout, a reordered one).
        func quiesce() -> Bool {
            // The watchdog first (flows waiting on the IDP time out), then late answers (a lost
            // response's transport timeout, a reordered response).
            var acted = false
            if wired.sdk.flowsInFlight > 0 {
                let armed = wired.sdk.armedTimeouts
                clock.advance(by: Self.flowTimeout + .seconds(1))
                acted = armed > 0
            }
            if wired.transport.releaseHeld() { acted = true }
            return acted
        }

        func violation(_ invariant: Invariant, _ detail: String) {
            violations.withLock { $0.append("\(invariant): \(detail)") }
        }

        /// Notes that the run reached `interleaving` (an outcome the invariants accept), in the
        /// counts and in participant `me`'s events.
        func saw(_ interleaving: Interleaving, _ me: Participant, _ detail: String) {
            counts.withLock { $0.interleavings[interleaving, default: 0] += 1 }
            log(me, "reached '\(interleaving.rawValue)': \(detail)")
        }

        /// Appends to participant `me`'s events.
        func log(_ me: Participant, _ text: String) {
            events.withLock { $0.append(Event(participant: me.index, text: text)) }
        }

        /// Moves the run's one clock (every device and the IDP read it), as a step of `me` does.
        func advanceClock(by duration: Duration, _ me: Participant, _ why: String) {
            let before = clock.now()
            clock.advance(by: duration)
            log(me, "moves the clock +\(Int(duration.timeInterval)) s, from \(Int(before.timeIntervalSince1970)) (\(why))")
        }

        /// The interleavings this run reached.
        var interleavingsSeen: [Interleaving: Int] { counts.withLock { $0.interleavings } }

        /// The events of the participants a violation names (all when it names none), oldest
        /// first, the last `limit` of them: what happened around a failure, which a free run
        /// cannot replay.
        func eventLog(around violations: [String], limit: Int = 40) -> [String] {
            let named = Set(participants.map(\.index).filter { index in violations.contains { $0.contains("participant \(index)'s") || $0.contains("participant \(index) ") || $0.contains("participant \(index),") } })
            let all = events.withLock { $0 }
            let picked = all.filter { named.isEmpty || named.contains($0.participant) }.suffix(limit)
            return picked.map { "participant \($0.participant): \($0.text)" }
        }

        func checked(_ invariant: Invariant, _ holds: Bool, _ detail: @autoclosure () -> String) {
            counts.withLock { $0.checks[invariant, default: 0] += 1 }
            if !holds { violation(invariant, detail()) }
        }

        var firedSites: [FaultPlan.Site] { wiring.withLock { $0?.run.fired.withLock { $0 } ?? [] } }

        func tally(into report: inout Report) {
            let counts = self.counts.withLock { $0 }
            report.flows += counts.flows
            report.mcEvents += counts.mcEvents
            for (name, count) in counts.checks { report.checks[name, default: 0] += count }
            for (interleaving, count) in counts.interleavings { report.interleavings[interleaving, default: 0] += count }
        }

        // MARK: - A participant's life

        func play(_ context: StressContext) {
            let me = participants[context.flow % participants.count]
            let device = Device(world: self, participant: me, context: context)
            // Faults may spoil an activation; the app tries again, as a user would.
            guard (0..<3).contains(where: { _ in device.activate(user: me.user, existing: nil) }) else { return }
            for (number, step) in me.steps.enumerated() {
                context.seam("step \(number + 1): \(step.rawValue)")
                log(me, "step \(number + 1): \(step.rawValue)")
                device.play(step, number: number + 1)
            }
        }

        /// Runs one `getAuthorizationCode` for participant `me`, checking exactly-once delivery
        /// and the error the provider returned, if it failed one.
        func authorize(_ me: Participant, context: StressContext, ast: AstClientDataInfo, clientId: String, userId: String?,
                       answers: [String: String], cancel: Bool = false) -> IdpSdkResult? {
            authorize(me, context: context, ast: ast, clientId: clientId, userId: userId, answers: answers, count: 1, cancel: cancel)?.first
        }

        /// Runs `count` flows at once for participant `me` and waits for all of them.
        func authorize(_ me: Participant, context: StressContext, ast: AstClientDataInfo, clientId: String, userId: String?,
                       answers: [String: String], count: Int, cancel: Bool = false) -> [IdpSdkResult]? {
            credentials.set(answers, trace: me.trace.traceId)
            expectedUser.withLock { $0[me.trace.traceId] = .some(userId) }
            counts.withLock { $0.flows += count }
            let deliveries = LockedValue<(perFlow: [IdpSdkFlowID: Int], results: [IdpSdkResult])>(([:], []))
            let sdk = wired.sdk
            let provider = wired.provider
            let results: [IdpSdkResult]? = context.wait("flow.completion", limit: .seconds(20)) { deliver in
                for _ in 0..<count {
                    let handle = sdk.getAuthorizationCode(withAstClientData: ast, clientId: clientId, interactionInterface: provider,
                                                          userId: userId, traceParent: me.trace.description) { [self] result in
                        let (times, all) = deliveries.withLock { state -> (Int, [IdpSdkResult]?) in
                            let times = (result.flowId.map { state.perFlow[$0, default: 0] += 1; return state.perFlow[$0]! }) ?? 1
                            if times == 1 { state.results.append(result) }
                            return (times, times == 1 && state.results.count == count ? state.results : nil)
                        }
                        checked(Invariant.exactlyOnce, times == 1, "flow \(result.flowId.map { "\($0)" } ?? "?") of participant \(me.index) completed \(times) times")
                        counts.withLock { $0.completions += 1 }
                        if let all { deliver(all) }
                    }
                    if cancel { handle.cancel() }
                }
            }
            checked(Invariant.noStuckFlow, results != nil, "participant \(me.index)'s \(clientId) flows did not all complete (free-running, 20 s)")
            log(me, "\(count) \(clientId) flow\(count == 1 ? "" : "s") for \(userId ?? "(activation)")\(cancel ? ", cancelled at once," : "") ended: " +
                (results ?? []).map { $0.authorizationCode != nil ? "code" : $0.idpSdkError.map { "\($0.subsystem) \($0.errorCode)" } ?? "?" }.joined(separator: ", "))
            let injected = FaultingProvider.injectedErrors(for: me.trace.traceId, in: self)
            for result in results ?? [] where result.idpSdkError?.subsystem == FaultingProvider.subsystem {
                checked(Invariant.errorsUnchanged, injected.contains { $0 == result.idpSdkError },
                        "participant \(me.index) got \(String(describing: result.idpSdkError)), which its provider never returned (it returned \(injected))")
            }
            return results
        }

        /// The errors the provider returned (fault `provider.fail`), per trace.
        let injected = LockedValue<[String: [IdpSdkError]]>([:])

        /// Sends an MC event and waits for its result: under control, the event's task is an
        /// async participant that parks where the MC awaits the network.
        func send<Result: KsMacroEvent>(_ event: any KsMacroEvent, to mc: MasterController, as type: Result.Type, _ me: Participant, _ context: StressContext) -> Result? {
            send(event, to: mc, me, context) as? Result
        }

        /// Sends an MC event and waits for its result, whatever its type.
        func send(_ event: any KsMacroEvent, to mc: MasterController, _ me: Participant, _ context: StressContext) -> (any KsMacroEvent)? {
            context.seam("mc.\(String(describing: Swift.type(of: event)))")
            event.traceContext = TraceContext(traceParent: me.trace.description)
            counts.withLock { $0.mcEvents += 1 }
            let receive: @Sendable () async -> any KsMacroEvent = { await mc.receive(event) }
            let answer = context.runAsync("mc.\(String(describing: Swift.type(of: event)))", [receive])?.first
            checked(Invariant.noStuckFlow, answer != nil, "participant \(me.index)'s \(Swift.type(of: event)) got no result (free-running, 30 s)")
            log(me, "\(Swift.type(of: event)) → \(answer.map { Self.summary(of: $0) } ?? "no answer")")
            return answer
        }

        // MARK: - Invariants over the whole run

        func finalCheck() -> [String] {
            var found = violations.withLock { $0 }
            let counts = self.counts.withLock { $0 }
            let flows = wiring.withLock { $0?.sdk.flowsInFlight } ?? 0
            if flows != 0 { found.append("\(Invariant.noStuckFlow): \(flows) flows still in flight after the run") }
            if counts.completions < counts.flows, !found.contains(where: { Invariant(violation: $0) == .noStuckFlow }) {
                found.append("\(Invariant.exactlyOnce): \(counts.flows) flows started, \(counts.completions) completions")
            }
            found += redemptionViolations()
            return found
        }

        /// Per trace: the IDP redeemed no more codes than it issued (each code once at most),
        /// and at least as many as the trace's MC reported logged in with (a redemption whose
        /// answer was lost counts at the IDP only).
        private func redemptionViolations() -> [String] {
            var found: [String] = []
            let log = server.auditLog()
            let expected = expectations.withLock { $0 }
            for participant in participants {
                let entries = log.filter { $0.traceId == participant.trace.traceId }
                let issued = entries.filter { $0.event == .codeIssued }.count
                let redeemed = entries.filter { $0.event == .codeRedeemed }.count
                counts.withLock { $0.checks[Invariant.singleUseCodes, default: 0] += 1 }
                let reported = expected[participant.trace.traceId]?.codesRedeemed ?? 0
                if redeemed > issued || redeemed < reported {
                    found.append("\(Invariant.singleUseCodes): participant \(participant.index)'s trace: \(issued) codes issued, \(redeemed) redeemed at the IDP, \(reported) logins reported by its MC")
                }
            }
            return found
        }

        /// A result event in a few words: its type and its status.
        static func summary(of event: any KsMacroEvent) -> String {
            let status = (event as? any KSMResultEvent).map { "\($0.status)" } ?? ""
            return "\(type(of: event)) \(status)"
        }

        func expectRedemption(_ me: Participant) {
            expectations.withLock { $0[me.trace.traceId, default: Expectation()].codesRedeemed += 1 }
        }
    }
}

