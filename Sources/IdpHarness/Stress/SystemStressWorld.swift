import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// One run's system: the IDP, the SDK, the devices, and the stress's own record of what it did,
    /// which the invariants are judged against.
    package final class World: Sendable {
        static let tenant = "stress"
        /// Longer than any clock jump a step makes (a token's 301 s), so flows time out when the
        /// watchdog fires (or a provider hangs), not whenever another app's token expires.
        static let flowTimeout: Duration = .seconds(600)
        /// How long the IDP's lock lasts (constant: the run's policy does not lengthen it).
        static let lockoutDuration: Duration = .seconds(60)
        let options: Options
        let clock = ManualClock()
        let credentials = Credentials()
        /// Set by ``attach(_:)``.
        private let wiring = LockedValue<Wiring?>(nil)
        /// What the run did and saw: the record the invariants are judged against.
        private let ledger: LockedValue<Ledger>

        struct Wiring: Sendable {
            let run: StressRun
            let server: IdpServer
            let sdk: IdpSdkService
            let transport: StressTransport
            let provider: FaultingProvider
            let controller: StressController?
            let participants: [Participant]
        }

        init(options: Options) {
            self.options = options
            ledger = LockedValue(Ledger())
        }

        /// A fresh IDP for a run, with the tenant and the participants' users; what could not be
        /// set up is said in the run's final check, as a violation that names no invariant (as a
        /// scheduler's verdict does).
        private func makeServer(controller: any ExecutionController) -> (IdpServer, problems: [String]) {
            var configuration = IdpServer.Configuration(clock: clock, auditLogCapacity: 1_000_000,
                                                        lockout: LockoutPolicy(maximumFailures: options.lockoutAfter, lockoutDuration: Self.lockoutDuration))
            configuration.controller = controller
            options.plant(in: &configuration)
            let server = IdpServer(configuration: configuration)
            var problems: [String] = []
            do { try server.addTenant(Self.tenant) } catch { problems.append("tenant \(Self.tenant): \(error)") }
            for user in Set((0..<max(1, options.flows)).map { Self.user(of: $0, options) }).sorted() {
                do { try server.addUser(user, tenant: Self.tenant) } catch { problems.append("user \(user): \(error)") }
            }
            return (server, problems)
        }

        /// Wires the SDK and the devices to the run's scheduler and faults, and draws the run's
        /// participants from its seed.
        func attach(_ run: StressRun) {
            options.onWorld?(run.seed, run.faults.seed)
            let controller = run.scheduler.map(StressController.init)
            // Free-running, the IDP's seams still line up the copies of a request sent twice.
            let (server, setUpProblems) = makeServer(controller: controller ?? FreeRunSeams())
            let (participants, problems) = Self.participants(options, seed: run.seed)
            if !(setUpProblems + problems).isEmpty { ledger.withLock { $0.violations += (setUpProblems + problems).map { "world set up: \($0)" } } }
            let traces = Dictionary(participants.map { ($0.trace.traceId, $0.index) }, uniquingKeysWith: { first, _ in first })
            let faults = StressFaults(plan: run.faults, flowOfTrace: { traces[$0] }, fired: run.fired)
            let transport = StressTransport(inner: InProcessTransport(server: server), scheduler: run.scheduler, twins: controller?.twins, faults: faults,
                                            monitor: run.monitor,
                                            judgeTwins: { [weak self] grant, trace in self?.judgeSentTwice(grant, trace: trace) ?? { _, _ in } })
            var configuration = IdpSdkService.Configuration(flowTimeout: Self.flowTimeout, workerKeepAlive: .milliseconds(100), clock: clock)
            configuration.controller = controller
            options.plant(in: &configuration)
            let sdk = IdpSdkService(tenantId: Self.tenant, idpUrl: "https://stress.idp.test", certificateChain: Data(), shouldHashPin: false,
                                    configuration: configuration, transport: transport)
            let provider = FaultingProvider(inner: options.makeProvider(credentials), world: self, faults: faults, scheduler: run.scheduler,
                                            monitor: run.monitor)
            wiring.withLock { $0 = Wiring(run: run, server: server, sdk: sdk, transport: transport, provider: provider, controller: controller, participants: participants) }
        }

        /// Lets go of the run's wiring once the run has been read: it holds the scheduler (through
        /// the controller), whose participants' jobs hold this world, a cycle that would keep every
        /// controlled run's IDP, SDK and devices alive.
        func detach() {
            let wired = wiring.withLock { wiring -> Wiring? in
                defer { wiring = nil }
                return wiring
            }
            // Released here, after the lock.
            _ = wired
        }

        private var wired: Wiring { wiring.withLock { $0! } }
        var run: StressRun { wired.run }
        /// The run's IDP.
        var server: IdpServer { wired.server }
        var participants: [Participant] { wiring.withLock { $0?.participants ?? [] } }
        var controller: StressController? { wired.controller }
        var transport: StressTransport { wired.transport }
        func countEvents(_ count: Int) { ledger.withLock { $0.mcEvents += count } }

        // MARK: - Judging

        /// One judgment of `invariant`: counted, and a violation when it does not hold.
        func checked(_ invariant: Invariant, _ holds: Bool, _ detail: @autoclosure () -> String) {
            if options.plantedLeavesUnjudged(invariant) { return }
            let text = holds ? nil : "\(invariant): \(detail())"
            ledger.withLock { ledger in
                ledger.tally.judged[invariant, default: 0] += 1
                if let text { ledger.violations.append(text) }
            }
        }

        /// Something happened that `invariant` must judge (a provider's error, a logout, a login).
        func triggered(_ invariant: Invariant, _ times: Int = 1) {
            ledger.withLock { $0.tally.triggers[invariant, default: 0] += times }
        }

        /// A judgment of `invariant` that a recorded reason set aside (a fault struck in between).
        func excused(_ invariant: Invariant) {
            ledger.withLock { $0.tally.excused[invariant, default: 0] += 1 }
        }

        func violation(_ invariant: Invariant, _ detail: String) {
            ledger.withLock { $0.violations.append("\(invariant): \(detail)") }
        }

        /// Notes that the run reached `interleaving` (an outcome the invariants accept), in the
        /// counts and in participant `me`'s events.
        func saw(_ interleaving: Interleaving, _ me: Participant, _ detail: String) {
            ledger.withLock { $0.tally.interleavings[interleaving, default: 0] += 1 }
            log(me, "reached '\(interleaving.rawValue)': \(detail)")
        }

        /// Appends to participant `me`'s events.
        func log(_ me: Participant, _ text: String) {
            ledger.withLock { $0.events.append(Event(participant: me.index, text: text)) }
        }

        /// Moves the run's one clock (every device and the IDP read it), as a step of `me` does.
        func advanceClock(by duration: Duration, _ me: Participant, _ why: String) {
            let before = clock.now()
            clock.advance(by: duration)
            log(me, "moves the clock +\(Int(duration.timeInterval)) s, from \(Int(before.timeIntervalSince1970)) (\(why))")
        }

        /// The interleavings this run reached.
        var interleavingsSeen: [Interleaving: Int] { ledger.withLock { $0.tally.interleavings } }

        /// How many fault sites fired for participant `index` so far: a step compares two readings
        /// to tell whether a fault struck in between.
        func faultsFired(for index: Int) -> Int { run.fired.withLock { $0.lazy.filter { $0.flow == index }.count } }

        /// The faults that fired for participant `index` after the first `from` of them.
        func faults(for index: Int, after from: Int) -> [Fault] {
            Array(run.fired.withLock { $0.filter { $0.flow == index } }.dropFirst(from)).compactMap { Fault(rawValue: $0.fault) }
        }

        /// Whether a fault that costs an MC event its answer (a lost response, a timeout, a 503,
        /// a lost connection) or its tokens (a request sent twice at once, whose copy's reuse
        /// revokes what the other got) struck participant `index` after the first `from` of its
        /// faults: a delayed, duplicated or reordered answer still arrives, and a slow provider
        /// still answers.
        func answerLost(for index: Int, after from: Int) -> Bool {
            faults(for: index, after: from).contains {
                [.transportDrop, .transportTimeout, .transport5xx, .transportConnectionLost, .transportRetryInFlight].contains($0)
            }
        }

        /// The events of the participants a violation names (all when it names none), oldest
        /// first, the last `limit` of them: what happened around a failure, which a free run
        /// cannot replay.
        func eventLog(around violations: [String], limit: Int = 40) -> [String] {
            let named = Set(participants.map(\.index).filter { index in violations.contains { $0.contains("participant \(index)'s") || $0.contains("participant \(index) ") || $0.contains("participant \(index),") } })
            let all = ledger.withLock { $0.events }
            let picked = all.filter { named.isEmpty || named.contains($0.participant) }.suffix(limit)
            return picked.map { "participant \($0.participant): \($0.text)" }
        }

        /// The fault sites that fired: the run is taken from the wiring, and its sites read after
        /// the wiring's lock is released (no lock is taken while another is held).
        var firedSites: [FaultPlan.Site] {
            let run = wiring.withLock { $0?.run }
            return run?.fired.withLock { $0 } ?? []
        }

        func tally(into report: inout Report) {
            let ledger = self.ledger.withLock { $0 }
            report.flows += ledger.flows
            report.mcEvents += ledger.mcEvents
            report.tally.add(ledger.tally)
        }

        /// The invariants whose trigger happened in this run but that were never judged (nor
        /// excused with a recorded reason): a failure of the stress itself, not of the product.
        func unexercised() -> [Invariant: Int] {
            let tally = ledger.withLock { $0.tally }
            return tally.triggers.filter { invariant, count in count > 0 && tally.judged[invariant, default: 0] + tally.excused[invariant, default: 0] == 0 }
        }

        // MARK: - A participant's life

        /// The user id each trace's current flow was started with, and whether the flow the call
        /// belongs to has ended (a call whose flow ended is dropped by the engine, and the app may
        /// meanwhile have started its next flow on the same trace).
        func checkCall(_ data: IdpSdkInteractionData, trace: String, flowEnded: () -> Bool) {
            triggered(.noCrossTalk)
            let expected = ledger.withLock { $0.expectedUser[trace] }
            guard !flowEnded() else {
                excused(.noCrossTalk)
                return
            }
            checked(.noCrossTalk, expected != nil && expected! == data.userId && data.tenantId == Self.tenant,
                    "a provider call for user \(data.userId ?? "(activation)") came with trace \(trace.prefix(8)), whose flow is for \(String(describing: expected ?? nil))")
        }

        /// The provider returned `error` for `flowId` (fault `provider.fail`).
        func recordProviderError(_ error: IdpSdkError, flow flowId: IdpSdkFlowID) {
            ledger.withLock { $0.providerErrors[flowId] = error }
            triggered(.errorsUnchanged)
        }

        /// Whether the flows now running on `trace` answer wrongly on purpose.
        func expectsRefusal(trace: String) -> Bool { ledger.withLock { $0.expectingRefusal.contains(trace) } }

        /// The provider answered flow `flowId`: with its own values for every asked field
        /// (`right`), or not.
        func recordAnswer(_ flowId: IdpSdkFlowID, right: Bool) { ledger.withLock { $0.lastAnswerRight[flowId] = right } }

        /// Whether the provider's last answer to `flowId` was the flow's own values, complete.
        func answeredRight(_ flowId: IdpSdkFlowID) -> Bool { ledger.withLock { $0.lastAnswerRight[flowId] ?? false } }

        /// The provider answered a flow for `user` with another flow's values.
        func recordWrongAnswer(for user: String?) {
            ledger.withLock { _ = $0.usersAnsweredWrongly.insert(user ?? "") }
        }

        /// `flowId` ended while its provider call ran: the engine drops that call's answer.
        func recordEndedDuringCall(_ flowId: IdpSdkFlowID) {
            ledger.withLock { _ = $0.endedDuringCall.insert(flowId) }
        }

        /// The world is quiet: move the clock past the flow timeout (the watchdog), so a flow
        /// whose answer was lost times out, and send on held responses (a lost response's
        /// transport timeout, a reordered one).
        func quiesce() -> Bool {
            guard let wired = wiring.withLock({ $0 }) else { return false }
            var acted = false
            if wired.sdk.flowsInFlight > 0 {
                let armed = wired.sdk.armedTimeouts
                clock.advance(by: Self.flowTimeout + .seconds(1))
                acted = armed > 0
            }
            if wired.transport.releaseHeld() { acted = true }
            return acted
        }

        /// Runs one `getAuthorizationCode` for participant `me`; see
        /// ``authorize(_:context:ast:clientId:userId:answers:count:cancel:expectRefusal:)``.
        func authorize(_ me: Participant, context: StressContext, ast: AstClientDataInfo, clientId: String, userId: String?,
                       answers: [String: String], cancel: Bool = false) -> IdpSdkResult? {
            authorize(me, context: context, ast: ast, clientId: clientId, userId: userId, answers: answers, count: 1, cancel: cancel)?.first
        }

        /// Runs `count` flows at once for participant `me` and waits for all of them; checks each
        /// flow's delivery (exactly once) and how it ended: every error must be one the stress's
        /// record explains (see ``explanation(of:flow:)``). `expectRefusal`: the answers are wrong
        /// on purpose (a wrong-password storm), so the IDP's refusals are what they earn.
        func authorize(_ me: Participant, context: StressContext, ast: AstClientDataInfo, clientId: String, userId: String?,
                       answers: [String: String], count: Int, cancel: Bool = false, expectRefusal: Bool = false) -> [IdpSdkResult]? {
            credentials.set(answers, trace: me.trace.traceId)
            ledger.withLock { ledger in
                ledger.expectedUser[me.trace.traceId] = .some(userId)
                if expectRefusal { ledger.expectingRefusal.insert(me.trace.traceId) } else { ledger.expectingRefusal.remove(me.trace.traceId) }
                if let user = answers["username"] { ledger.usersOfTrace[me.trace.traceId, default: []].insert(user) }
                ledger.flows += count
                ledger.tally.triggers[.exactlyOnce, default: 0] += count
                ledger.tally.triggers[.noStuckFlow, default: 0] += 1
            }
            let started = clock.now()
            let faultsBefore = faultsFired(for: me.index)
            let deliveries = LockedValue<(perFlow: [IdpSdkFlowID: Int], results: [IdpSdkResult])>(([:], []))
            let sdk = wired.sdk
            let provider = wired.provider
            let monitor = run.monitor
            let results: [IdpSdkResult]? = context.wait("flow.completion", limit: .seconds(20)) { deliver in
                for _ in 0..<count {
                    let handle = sdk.getAuthorizationCode(withAstClientData: ast, clientId: clientId, interactionInterface: provider,
                                                          userId: userId, traceParent: me.trace.description) { [self] result in
                        monitor?.progressed()
                        let times = deliveries.withLock { state in
                            (result.flowId.map { state.perFlow[$0, default: 0] += 1; return state.perFlow[$0]! }) ?? 1
                        }
                        checked(.exactlyOnce, times == 1, "\(result.flowId.map { "\($0)" } ?? "a flow without an id") of participant \(me.index) completed \(times) times")
                        ledger.withLock { $0.completions += 1 }
                        // A result joins the participant's only once its completion is judged and
                        // counted: the participant, and the run's final count, go on only after
                        // every completion of its flows was (one still being counted on another
                        // thread must not be missed).
                        let all = deliveries.withLock { state -> [IdpSdkResult]? in
                            guard times == 1 else { return nil }
                            state.results.append(result)
                            return state.results.count == count ? state.results : nil
                        }
                        if let all { deliver(all) }
                    }
                    if cancel { handle.cancel() }
                }
            }
            checked(.noStuckFlow, results != nil, "participant \(me.index)'s \(clientId) flows did not all complete")
            log(me, "\(count) \(clientId) flow\(count == 1 ? "" : "s") for \(userId ?? "(activation)")\(cancel ? ", cancelled at once," : "") ended: " +
                (results ?? []).map { $0.authorizationCode != nil ? "code" : $0.idpSdkError.map { "\($0.subsystem) \($0.errorCode)" } ?? "?" }.joined(separator: ", "))
            let window = FlowWindow(started: started, ended: clock.now(), faults: faults(for: me.index, after: faultsBefore), cancelled: cancel,
                                    expectRefusal: expectRefusal, user: userId)
            if cancel { triggered(.errorsUnchanged) }
            for result in results ?? [] {
                if result.idpSdkError != nil { triggered(.errorsUnchanged) }
                if result.authorizationCode != nil { triggered(.singleUseCodes) }
                judgeEnding(of: result, me, window)
                if cancel, result.idpSdkError?.code != .cancelled {
                    saw(.cancelAfterEnd, me, "the cancelled login ended first with \(result.authorizationCode != nil ? "a code" : String(describing: result.idpSdkError))")
                }
            }
            return results
        }

        /// Judges how a flow ended against the record ("errors delivered unchanged"): a flow whose
        /// provider returned an error, which the engine took, ends with exactly that error; every
        /// other error is explained by what the stress did or injected.
        private func judgeEnding(of result: IdpSdkResult, _ me: Participant, _ window: FlowWindow) {
            let flowId = result.flowId
            // Named only when a judgment fails (`checked` takes its detail lazily).
            func flow() -> String { "participant \(me.index)'s \(flowId.map { "\($0)" } ?? "flow without an id")" }
            let (injected, endedDuringCall) = ledger.withLock { ledger in
                (flowId.flatMap { ledger.providerErrors[$0] }, flowId.map { ledger.endedDuringCall.contains($0) } ?? false)
            }
            if let error = result.idpSdkError, error.subsystem == FaultingProvider.subsystem, error != injected,
               let owner = ledger.withLock({ $0.providerErrors.first { $0.value == error }?.key }) {
                // Another flow's provider error: the engine handed that answer to this flow.
                triggered(.noCrossTalk)
                checked(.noCrossTalk, false, "\(flow()) ended with the error the provider returned for \(owner): \(error)")
                return
            }
            if let injected, !endedDuringCall {
                if result.idpSdkError.map({ $0.code.map { Self.answeredByIdpCodes.contains($0) || Self.credentialCheckCodes.contains($0) } ?? false }) ?? true {
                    // A code, the IDP's verdict on a submitted step, or the engine's refusal of an
                    // answer: after its provider's error the flow neither checks nor sends an
                    // answer, so the engine took another answer for it.
                    triggered(.noCrossTalk)
                    checked(.noCrossTalk, false,
                            "\(flow()) ended with \(result.idpSdkError.map { "\($0)" } ?? "a code"), though its provider returned \(injected): the engine took an answer its provider did not give")
                    return
                }
                // A cancel or a timeout the record explains may end the flow first, between the
                // provider's return and the engine's taking its error.
                let endedFirst = result.idpSdkError.map { [.cancelled, .timedOut].contains($0.code) && Self.explanation(of: $0, window: window) != nil } ?? false
                checked(.errorsUnchanged, result.idpSdkError == injected || endedFirst,
                        "\(flow()) ended with \(result.idpSdkError.map { "\($0)" } ?? "a code"), but its provider returned \(injected) and the flow was still running")
                return
            }
            var window = window
            if ledger.withLock({ $0.usersAnsweredWrongly.contains(window.user ?? "") || $0.usersAnsweredWrongly.contains("") }) {
                window.answeredWrongly = true
            }
            guard let error = result.idpSdkError else {
                // A cancelled flow that got its code ended before the cancel took effect: the
                // code itself is judged with the trace's others against the IDP's audit.
                if window.cancelled { checked(.errorsUnchanged, true, "") }
                return
            }
            if let code = error.code, Self.credentialCheckCodes.contains(code) {
                // The engine refused an answer as incomplete or unasked: if the provider had given
                // the flow's own values for every asked field, the engine checked another answer.
                triggered(.noCrossTalk)
                let right = flowId.map(answeredRight) ?? false
                checked(.noCrossTalk, !right,
                        "\(flow()) ended with \(error), though its provider had answered every asked field with the flow's own values")
                return
            }
            let why = Self.explanation(of: error, window: window)
            checked(.errorsUnchanged, why != nil,
                    "\(flow()) ended with \(error), which nothing the stress did explains (faults meanwhile: \(window.faults.isEmpty ? "none" : window.faults.map(\.rawValue).joined(separator: ", "))\(window.cancelled ? "; cancelled by its caller" : ""))")
        }

        /// Sends an MC event and waits for its result: under control, the event's task is an
        /// async participant that parks where the MC awaits the network.
        func send<Result: KsMacroEvent>(_ event: any KsMacroEvent, to mc: MasterController, as type: Result.Type, _ me: Participant, _ context: StressContext) -> Result? {
            send(event, to: mc, me, context) as? Result
        }

        /// Sends an MC event and waits for its result, whatever its type.
        func send(_ event: any KsMacroEvent, to mc: MasterController, _ me: Participant, _ context: StressContext) -> (any KsMacroEvent)? {
            context.seam("mc.\(String(describing: Swift.type(of: event)))")
            event.traceContext = TraceContext(traceParent: me.trace.description)
            ledger.withLock { ledger in
                ledger.mcEvents += 1
                ledger.tally.triggers[.noStuckFlow, default: 0] += 1
            }
            let monitor = run.monitor
            let receive: @Sendable () async -> any KsMacroEvent = {
                let answer = await mc.receive(event)
                monitor?.progressed()
                return answer
            }
            let answer = context.runAsync("mc.\(String(describing: Swift.type(of: event)))", [receive])?.first
            checked(.noStuckFlow, answer != nil, "participant \(me.index)'s \(Swift.type(of: event)) got no result")
            log(me, "\(Swift.type(of: event)) → \(answer.map { Self.summary(of: $0) } ?? "no answer")")
            return answer
        }

        // MARK: - Invariants over the whole run

        func finalCheck() -> [String] {
            judgeAudit()
            var found = ledger.withLock { $0.violations }
            let (flows, completions) = ledger.withLock { ($0.flows, $0.completions) }
            let inFlight = wiring.withLock { $0?.sdk.flowsInFlight } ?? 0
            if inFlight != 0 { found.append("\(Invariant.noStuckFlow): \(inFlight) flows still in flight after the run") }
            if completions < flows, !found.contains(where: { Invariant(violation: $0) == .noStuckFlow }) {
                found.append("\(Invariant.exactlyOnce): \(flows) flows started, \(completions) completions")
            }
            return found
        }

        /// Judged against the IDP's audit, per participant's trace: the IDP redeemed no more codes
        /// than it issued (each code once at most) and at least as many as the trace's MC reported
        /// logged in with (a redemption whose answer was lost counts at the IDP only); and every
        /// code it issued on the trace is for a user the trace's flows were for.
        private func judgeAudit() {
            let log = server.auditLog()
            let (reported, usersOfTrace) = ledger.withLock { ($0.codesRedeemed, $0.usersOfTrace) }
            for participant in participants {
                let trace = participant.trace.traceId
                let entries = log.filter { $0.isOfTrace(trace) }
                let issued = entries.filter { $0.event == .codeIssued }
                let redeemed = entries.filter { $0.event == .codeRedeemed }.count
                let logins = reported[trace] ?? 0
                checked(.singleUseCodes, redeemed <= issued.count && redeemed >= logins,
                        "participant \(participant.index)'s trace: \(issued.count) codes issued, \(redeemed) redeemed at the IDP, \(logins) logins reported by its MC")
                let foreign = issued.compactMap(\.userId).filter { !(usersOfTrace[trace] ?? []).contains($0) }
                checked(.noCrossTalk, foreign.isEmpty,
                        "the IDP issued codes for \(Set(foreign).sorted()) on participant \(participant.index)'s trace, whose flows were for \((usersOfTrace[trace] ?? []).sorted())")
            }
        }

        /// A result event in a few words: its type and its status.
        static func summary(of event: any KsMacroEvent) -> String {
            guard let result = event as? any KSMResultEvent else { return "\(type(of: event))" }
            let why = result.status == .kOk || result.errorDescription.isEmpty ? "" : " (\(result.errorDescription))"
            return "\(type(of: event)) \(result.status)\(why)"
        }

        /// Participant `me`'s MC reported a login with a code it redeemed.
        func expectRedemption(_ me: Participant) {
            ledger.withLock { $0.codesRedeemed[me.trace.traceId, default: 0] += 1 }
        }
    }
}

extension SystemStress.World {
    /// Whether `fault` strikes participant `flow` at its step `step`; recorded as fired if so.
    func fault(_ fault: SystemStress.Fault, flow: Int, step: Int) -> Bool { run.fault(fault.rawValue, flow: flow, step: step) }
}
