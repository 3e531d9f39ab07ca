import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// One participant's app: its MasterController (replaced on a restart, on the same store) and
    /// the steps of the mix, each as the documents do it.
    final class Device {
        let world: World
        let me: World.Participant
        let context: StressContext
        let store = McTokenStore()
        var mc: MasterController
        /// Users activated on this device.
        var users: [String] = []
        var step = 0
        /// The user ExchangeIamToken answers for, as this app knows it: the user of the last
        /// successful SetAuthorisationCode or OfflineLogin on this MC (an activation logs its user
        /// in too), until a Start, a Restart or that user's logout. `nil`: nobody.
        var current: String?

        init(world: World, participant: World.Participant, context: StressContext) {
            self.world = world
            me = participant
            self.context = context
            mc = Device.masterController(world, store)
        }

        static func masterController(_ world: World, _ store: McTokenStore) -> MasterController {
            MasterController(configuration: .init(idpUrl: "https://stress.idp.test", transport: world.wiredTransport, tokenStore: store,
                                                  clock: world.clock, refreshTimeout: .seconds(3600), controller: world.controller))
        }

        func password(_ user: String) -> String { "pw-\(user)-secret" }
        func identifier(_ user: String) -> KsUserIdentifier { KsUserIdentifier(tenantId: World.tenant, userId: user) }

        func fault(_ fault: Fault) -> Bool { world.fault(fault, flow: me.index, step: step) }

        /// Start, GetAstClientData, the enrollment flow, SetAuthorisationCode; `existing`: the
        /// device's user adding another (add user).
        func activate(user: String, existing: String?) -> Bool {
            step += 1
            if users.isEmpty {
                _ = world.send(KSMStartEvent(), to: mc, as: KSMStartResultEvent.self, me, context)
                current = nil
            }
            guard let code = try? world.server.issueActivationCode(for: user, tenant: World.tenant) else { return false }
            guard let ast = world.send(KSMGetAstClientDataEvent(tenantId: World.tenant), to: mc, as: KSMGetAstClientDataResultEvent.self, me, context),
                  ast.status == .kOk else { return false }
            let answers = ["username": user, "activation-code": code, "password": password(user)]
            guard let result = world.authorize(me, context: context, ast: AstClientDataInfo(astClientData: ast), clientId: "KssIdpEnrollment",
                                               userId: existing, answers: answers),
                  let authorizationCode = result.authorizationCode else { return false }
            let ok = setCode(authorizationCode, clientId: "KssIdpEnrollment", user: nil)
            if ok { users.append(user) }
            return ok
        }

        /// GetAstClientData, the login flow, SetAuthorisationCode; then, on success, a token for
        /// another audience whose subject must be this user.
        @discardableResult
        func login(_ user: String, password: String? = nil, cancel: Bool = false) -> IdpSdkResult? {
            step += 1
            guard let ast = world.send(KSMGetAstClientDataEvent(userIdentifier: identifier(user)), to: mc, as: KSMGetAstClientDataResultEvent.self, me, context),
                  ast.status == .kOk else { return nil }
            let answers = ["username": user, "password": password ?? self.password(user)]
            let result = world.authorize(me, context: context, ast: AstClientDataInfo(astClientData: ast), clientId: "KssIdpLogin",
                                         userId: user, answers: answers, cancel: cancel)
            if cancel, let result {
                // A cancel ends the flow unless something ended it first: the flow runs on the
                // SDK's threads from the moment it starts, so its code, the IDP's refusal or its
                // provider's error may come before the cancel takes effect. Whatever ended it is
                // delivered as it was (a provider's error is checked against the ones it returned
                // in `authorize`); a cancellation is never reported as anything else.
                let cancelled = result.idpSdkError?.errorCode == IdpSdkError.Code.cancelled.rawValue
                world.checked(Invariant.errorsUnchanged, cancelled ? result.idpSdkError?.subsystem == IdpSdkError.sdkSubsystem : true,
                              "a cancelled flow of participant \(me.index) ended with \(String(describing: result.idpSdkError))")
                if !cancelled { world.saw(.cancelAfterEnd, me, "the cancelled login ended first with \(result.authorizationCode != nil ? "a code" : String(describing: result.idpSdkError))") }
            }
            guard let code = result?.authorizationCode else { return result }
            if setCode(code, clientId: "KssIdpLogin", user: user) { checkTokenSubject(for: user) }
            return result
        }

        /// SetAuthorisationCode, with the PKCE and expiry faults; records the redemption the IDP
        /// must show.
        func setCode(_ code: String, clientId: String, user: String?) -> Bool {
            if fault(.codeWrongVerifier) {
                // Someone who saw the code but not the verifier must not get tokens for it.
                let status = world.redeemDirectly(code, clientId: clientId, trace: me.trace)
                world.checked(Invariant.singleUseCodes, status != 200, "a code of participant \(me.index) was redeemed with a wrong PKCE verifier")
            }
            if fault(.clockCodeExpiry) { world.advanceClock(by: .seconds(61), me, "the code expires") }
            let event: KSMSetAuthorisationCodeEvent = if let user {
                KSMSetAuthorisationCodeEvent(userIdentifier: identifier(user), authenticationMode: .no, authorisationCode: code, clientId: clientId)
            } else {
                KSMSetAuthorisationCodeEvent(tenantId: World.tenant, authenticationMode: .no, authorisationCode: code, clientId: clientId)
            }
            let result = world.send(event, to: mc, as: KSMSetAuthorisationCodeResultEvent.self, me, context)
            guard result?.status == .kOk else { return false }
            world.expectRedemption(me)
            current = result?.userIdentifier?.userId ?? user
            return true
        }

        /// A token for another audience, asked after a step for `user`. ExchangeIamToken names
        /// no user: it answers for the MC's logged-in user (``current``), which is another user
        /// of this device after that user's activation or login. Its subject must be that user
        /// (no cross-talk), and with nobody logged in there is no token. Returns the status and
        /// the token's subject.
        @discardableResult
        func checkTokenSubject(for user: String) -> (status: KSMEventStatusType, subject: String?)? {
            let event = KSMExchangeIamTokenEvent(audience: "stress-api")
            guard let answer = world.send(event, to: mc, me, context) else { return nil }
            // With nobody logged in the MC answers with a KSMInvalidStateEvent: no token either.
            guard let result = answer as? KSMExchangeIamTokenResultEvent else { return (.kInvalidState, nil) }
            guard result.status == .kOk else { return (result.status, nil) }
            let subject = world.server.introspect(result.token, tenant: World.tenant)?.userId
            world.checked(Invariant.noCrossTalk, subject != nil && subject == current,
                          "participant \(me.index) asked a token (after a step for \(user)) while \(current ?? "nobody") is logged in on its MC, and got one for \(subject ?? "nobody")")
            if let subject, subject != user, subject == current {
                world.saw(.exchangeForAnotherUser, me, "ExchangeIamToken after a step for \(user) answered for \(subject), logged in since on the same MC")
            }
            return (result.status, subject)
        }

        /// After `user`'s logout (CLEAR_ALL or CLEAR_ACCESS_AND_REFRESH) nothing brings that user's
        /// tokens back: no token for the user comes out, and while the user was the MC's current
        /// one no token comes out at all.
        func checkLogoutStays(_ user: String, wasCurrent: Bool, _ what: String) {
            guard let answer = checkTokenSubject(for: user) else { return }
            let holds = answer.status != .kOk || (!wasCurrent && answer.subject != user)
            world.checked(Invariant.logoutStays, holds, "\(what) left a usable token (\(answer.status), for \(answer.subject ?? "nobody"))")
        }

        func play(_ kind: Step, number: Int) {
            guard let user = users.first else { return }
            switch kind {
            case .login:
                login(user)
            case .cancel:
                login(user, cancel: true)
            case .addUser:
                let extra = "extra-\(me.index)-\(number)"
                try? world.server.addUser(extra, tenant: World.tenant)
                _ = activate(user: extra, existing: user)
            case .offlineLogin:
                _ = world.send(KSMRestartEvent(), to: mc, as: KSMRestartResultEvent.self, me, context)
                current = nil
                let offline = world.send(KSMOfflineLoginEvent(userIdentifier: identifier(user)), to: mc, as: KSMOfflineLoginResultEvent.self, me, context)
                if offline?.status == .kOk { current = user }
            case .restart:
                mc = Device.masterController(world, store)
                _ = world.send(KSMStartEvent(), to: mc, as: KSMStartResultEvent.self, me, context)
                current = nil
            case .logoutAll, .logoutAccessAndRefresh, .logoutOffline:
                let behavior: KSMClearIamTokenCacheEvent.ClearBehavior = kind == .logoutAll ? .CLEAR_ALL : kind == .logoutOffline ? .CLEAR_OFFLINE : .CLEAR_ACCESS_AND_REFRESH
                let cleared = world.send(KSMClearIamTokenCacheEvent(userIdentifier: identifier(user), clearBehavior: behavior), to: mc,
                                         as: KSMClearIamTokenCacheResultEvent.self, me, context)
                if kind != .logoutOffline, cleared?.status == .kOk {
                    let wasCurrent = current == user
                    if wasCurrent { current = nil }
                    checkLogoutStays(user, wasCurrent: wasCurrent, "\(behavior) of \(user) on participant \(me.index)'s device")
                }
                login(user)
            case .refresh:
                refresh(user)
            case .lockout:
                lockoutStorm(after: user, number: number)
            }
        }

        /// A wrong-password storm into lockout: a user of this device only (added for it) is sent
        /// more concurrent logins with a wrong password than the limit. The IDP must evaluate
        /// exactly `lockoutAfter` of them, lock once, and refuse the rest unevaluated; after the
        /// lock ends, the right password logs in.
        func lockoutStorm(after user: String, number: Int) {
            let locker = "locker-\(me.index)-\(number)"
            try? world.server.addUser(locker, tenant: World.tenant)
            guard activate(user: locker, existing: user),
                  let ast = world.send(KSMGetAstClientDataEvent(userIdentifier: identifier(locker)), to: mc, as: KSMGetAstClientDataResultEvent.self, me, context),
                  ast.status == .kOk else { return }
            let limit = world.options.lockoutAfter
            let faultsBefore = world.firedSites.filter { $0.flow == me.index }.count
            let results = world.authorize(me, context: context, ast: AstClientDataInfo(astClientData: ast), clientId: "KssIdpLogin", userId: locker,
                                          answers: ["username": locker, "password": "wrong-\(number)"], count: limit + 2) ?? []
            // Exact when no fault touched the storm; with faults (a flow ended early, an answer
            // lost), never more than the limit evaluated and never more than one lock.
            let faulted = world.firedSites.filter { $0.flow == me.index }.count > faultsBefore
                || results.contains { $0.idpSdkError?.errorCode == IdpSdkError.Code.timedOut.rawValue }
            let decisions = world.settledDecisions(of: locker)
            let lockouts = results.filter { $0.authenticationResult.map { if case .lockout = $0 { true } else { false } } ?? false }.count
            let replay = LockoutReplay(decisions, limit: limit, lockDuration: World.lockoutDuration)
            let what = "\(limit + 2) concurrent wrong logins of \(locker) on participant \(me.index)'s device\(faulted ? " (faults struck)" : ""): the IDP evaluated \(replay.evaluated) (limit \(limit)), locked \(replay.locks) times; \(lockouts) flows ended in lockout"
            // Every decision as the policy makes it, in the order the IDP made them, by the time
            // it made them at: a clock jump past the lock's end (another app's step moves the
            // shared clock) lifts the lock, and the storm's next guesses are evaluated and counted
            // again, up to one more lock.
            world.checked(Invariant.lockoutExact, replay.problem == nil, "\(what): \(replay.problem ?? "") (decisions: \(replay.script))")
            if replay.liftedByClock {
                world.saw(.lockLiftedDuringStorm, me, what)
            } else if !faulted {
                // Nothing lifted the lock and no fault touched the storm: exactly the limit.
                world.checked(Invariant.lockoutExact, replay.evaluated == limit && replay.locks == 1 && lockouts >= 1, what)
            }
            world.advanceClock(by: .seconds(61), me, "the lock ends")
            login(locker)
        }

        /// The access token expires; one or (a refresh storm) several concurrent ExchangeIamToken
        /// events must cause at most one refresh grant at the IDP.
        func refresh(_ user: String) {
            world.advanceClock(by: .seconds(301), me, "the access token expires")
            let storm = fault(.refreshStorm) ? 4 : 1
            // A logout racing the refresh: CLEAR_ALL sent with the exchanges, on the same MC.
            let logoutRace = fault(.refreshLogoutRace)
            let before = world.refreshes(trace: me.trace.traceId).count
            let wasCurrent = logoutRace && current == user
            let mc = self.mc
            let trace = me.trace
            let identifier = identifier(user)
            var events: [@Sendable () async -> KSMEventStatusType] = (0..<storm).map { _ in
                {
                    let event = KSMExchangeIamTokenEvent(audience: "stress-api")
                    event.traceContext = TraceContext(traceParent: trace.description)
                    return (await mc.receive(event) as? KSMExchangeIamTokenResultEvent)?.status ?? .kInternalError
                }
            }
            if logoutRace {
                events.insert({
                    let event = KSMClearIamTokenCacheEvent(userIdentifier: identifier, clearBehavior: .CLEAR_ALL)
                    event.traceContext = TraceContext(traceParent: trace.description)
                    return (await mc.receive(event) as? KSMClearIamTokenCacheResultEvent)?.status ?? .kInternalError
                }, at: Int(me.index % (storm + 1)))
            }
            let statuses = context.runAsync("mc.ExchangeIamToken×\(storm)\(logoutRace ? "+logout" : "")", events) ?? []
            world.countEvents(events.count)
            let all = world.refreshes(trace: me.trace.traceId)
            let grants = all.count - before
            // The MC refreshes a token only once it has expired, so two of its grants are at least
            // an access token's lifetime apart on the IDP's clock. One expiry, one grant: more
            // grants in the storm are right only when the clock jumped past the new token's expiry
            // meanwhile (another app's step moves the shared clock).
            let lifetime = world.server.configuration.accessTokenLifetime.timeInterval
            let early = all.indices.dropFirst(max(1, before)).filter { all[$0].timeIntervalSince(all[$0 - 1]) < lifetime }
            world.checked(Invariant.oneRefresh, early.isEmpty,
                          "\(storm) concurrent ExchangeIamToken events of participant \(me.index) caused \(grants) refresh grants, \(early.count) of them within an access token's lifetime of the one before (\(statuses))")
            if grants > 1, early.isEmpty { world.saw(.expiryDuringRefreshStorm, me, "\(storm) concurrent ExchangeIamToken events, \(grants) refresh grants, each after the token before it expired") }
            if logoutRace {
                // Whatever the order, the logout happened: no refresh may bring the tokens back.
                if current == user { current = nil }
                checkLogoutStays(user, wasCurrent: wasCurrent, "a refresh racing CLEAR_ALL of \(user) on participant \(me.index)'s device (\(statuses))")
                login(user)
            }
        }
    }
}

extension SystemStress.World {
    var wiredTransport: StressTransport { wiringTransport() }

    func fault(_ fault: SystemStress.Fault, flow: Int, step: Int) -> Bool { run.fault(fault.rawValue, flow: flow, step: step) }

    /// The IDP's decisions on `user`, once every decision up to the last is in its audit log. A
    /// decision's entries are appended just after it is made, so a free run can read in between
    /// (a gap in the numbers); under control nobody else runs while a participant reads. Gives up
    /// after 10 s and returns what is there.
    func settledDecisions(of user: String) -> [AuditEntry] {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let decisions = server.userDecisions(user, tenant: Self.tenant)
            let numbers = Set(decisions.compactMap(\.userDecision))
            if UInt64(numbers.count) == (numbers.max() ?? 0) || ContinuousClock.now >= deadline { return decisions }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }

    /// When the IDP granted each refresh of a trace, oldest first.
    func refreshes(trace: String) -> [Date] { server.auditLog(traceId: trace).filter { $0.event == .tokensRefreshed }.map(\.time).sorted() }

    /// Posts `code` to the token endpoint with a verifier that is not the one its challenge was
    /// made from; returns the HTTP status.
    func redeemDirectly(_ code: String, clientId: String, trace: TraceParent) -> Int {
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/x-www-form-urlencoded")
        headers.set("traceparent", trace.description)
        let form = FormURLEncoding.encode([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://kobil/OpenIdRedirectUri"),
                                           ("client_id", clientId), ("code_verifier", PKCE.makeVerifier())])
        let response = server.handle(HTTPRequest(method: "POST", target: "/auth/realms/\(Self.tenant)/protocol/openid-connect/token",
                                                 headers: headers, body: Array(form.utf8)))
        return response.status
    }
}

/// The provider under test, with the provider faults of the run around it, and the cross-talk
/// check on every call it sees: the call's user and trace must be the flow's.
final class FaultingProvider: IdpSdkFlowObserving, Sendable {
    let inner: any IdpSdkInteractionInterface & Sendable
    /// Weak: a free run ends when its participants stop waiting, and a flow still on an SDK
    /// thread (a hung provider's) may call in after its world is gone.
    weak let world: SystemStress.World?
    let faults: StressFaults
    private let calls = LockedValue<[String: Int]>([:])
    /// Flows whose call is hanging, released when the flow ends.
    private let hanging = LockedValue<[IdpSdkFlowID: DispatchSemaphore]>([:])
    /// Flows that ended while their call ran (a timeout, a cancel): the engine drops that call's
    /// answer, and the app may meanwhile have started its next flow on the same trace.
    private let endedDuringCall = LockedValue<Set<IdpSdkFlowID>>([])

    init(inner: any IdpSdkInteractionInterface & Sendable, world: SystemStress.World, faults: StressFaults) {
        self.inner = inner
        self.world = world
        self.faults = faults
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let trace = TraceParent.seamTrace(interactionData.traceParent) ?? "none"
        guard let world else { return .init(error: IdpSdkError(Self.subsystem, 1, "the stress run of this flow has ended")) }
        let call = calls.withLock { $0[trace, default: 0] += 1; return $0[trace]! }
        world.checkCall(interactionData, trace: trace) { endedDuringCall.withLock { $0.contains(interactionData.flowId) } }
        if faults.fires(.providerFail, trace: trace, step: call) {
            let error = IdpSdkError(Self.subsystem, 4_242, "injected provider failure, call \(call) of trace \(trace.prefix(8))")
            world.injected.withLock { $0[trace, default: []].append(error) }
            return .init(error: error)
        }
        if faults.fires(.providerSlow, trace: trace, step: call) { usleep(1_000) }
        if faults.fires(.providerHang, trace: trace, step: call) {
            let gate = DispatchSemaphore(value: 0)
            hanging.withLock { $0[interactionData.flowId] = gate }
            _ = gate.wait(timeout: .now() + 5)
            hanging.withLock { _ = $0.removeValue(forKey: interactionData.flowId) }
        }
        let answer = inner.provideCredentials(interactionData)
        // An answer the engine drops is no cross-talk; and once the flow has ended, the truth
        // of its trace may already be the app's next flow's. The truth is read first: the app
        // sets its next flow's only after this flow has ended, which is marked before its end.
        let truth = world.credentials.values(for: interactionData)
        let ended = endedDuringCall.withLock { $0.remove(interactionData.flowId) != nil }
        if !ended, let given = answer.credentials, let truth {
            // The provider's answer must be this flow's own: another flow's secrets are cross-talk.
            let foreign = interactionData.inputFieldIds.filter { id in given[id].map { $0 != truth[id] } ?? false }
            world.checked(SystemStress.Invariant.noCrossTalk, foreign.isEmpty,
                          "the provider answered \(foreign.joined(separator: ", ")) of a flow for \(interactionData.userId ?? "(activation)") with another flow's values")
        }
        return answer
    }

    func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
        endedDuringCall.withLock { _ = $0.insert(flowId) }
        hanging.withLock { $0[flowId] }?.signal()
        (inner as? any IdpSdkFlowObserving)?.flowEndedDuringCall(flowId)
    }

    func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        (inner as? any IdpSdkFlowObserving)?.flowDidEnd(flowId, result: result)
    }

    /// The subsystem of the errors this provider injects.
    static let subsystem = "IdpHarness.Stress"

    static func injectedErrors(for trace: String, in world: SystemStress.World) -> [IdpSdkError] {
        world.injected.withLock { $0[trace] ?? [] }
    }
}
