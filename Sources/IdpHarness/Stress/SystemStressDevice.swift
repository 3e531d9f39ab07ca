import Foundation
import IdpPrimitives
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

        func fault(_ name: String) -> Bool { world.fault(name, flow: me.index, step: step) }

        /// Start, GetAstClientData, the enrollment flow, SetAuthorisationCode; `existing`: the
        /// device's user adding another (add user).
        func activate(user: String, existing: String?) -> Bool {
            step += 1
            if users.isEmpty {
                _ = world.send(KSMStartEvent(), to: mc, as: KSMStartResultEvent.self, me, context)
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
                world.checked(Invariant.errorsUnchanged, result.idpSdkError?.errorCode == IdpSdkError.Code.cancelled.rawValue || result.authorizationCode != nil,
                              "a cancelled flow of participant \(me.index) ended with \(String(describing: result.idpSdkError))")
            }
            guard let code = result?.authorizationCode else { return result }
            if setCode(code, clientId: "KssIdpLogin", user: user) { checkTokenSubject(user) }
            return result
        }

        /// SetAuthorisationCode, with the PKCE and expiry faults; records the redemption the IDP
        /// must show.
        func setCode(_ code: String, clientId: String, user: String?) -> Bool {
            if fault("code.wrongVerifier") {
                // Someone who saw the code but not the verifier must not get tokens for it.
                let status = world.redeemDirectly(code, clientId: clientId, trace: me.trace)
                world.checked(Invariant.singleUseCodes, status != 200, "a code of participant \(me.index) was redeemed with a wrong PKCE verifier")
            }
            if fault("clock.codeExpiry") { world.clock.advance(by: .seconds(61)) }
            let event: KSMSetAuthorisationCodeEvent = if let user {
                KSMSetAuthorisationCodeEvent(userIdentifier: identifier(user), authenticationMode: .no, authorisationCode: code, clientId: clientId)
            } else {
                KSMSetAuthorisationCodeEvent(tenantId: World.tenant, authenticationMode: .no, authorisationCode: code, clientId: clientId)
            }
            let result = world.send(event, to: mc, as: KSMSetAuthorisationCodeResultEvent.self, me, context)
            guard result?.status == .kOk else { return false }
            world.expectRedemption(me)
            return true
        }

        /// A token for another audience: its subject must be `user` (no cross-talk), and it is
        /// refused after a logout.
        @discardableResult
        func checkTokenSubject(_ user: String) -> KSMEventStatusType? {
            let event = KSMExchangeIamTokenEvent(audience: "stress-api")
            guard let result = world.send(event, to: mc, as: KSMExchangeIamTokenResultEvent.self, me, context) else { return nil }
            if result.status == .kOk {
                let subject = world.server.introspect(result.token, tenant: World.tenant)?.userId
                world.checked(Invariant.noCrossTalk, subject == user, "participant \(me.index) asked a token for \(user) and got one for \(subject ?? "nobody")")
            }
            return result.status
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
                _ = world.send(KSMOfflineLoginEvent(userIdentifier: identifier(user)), to: mc, as: KSMOfflineLoginResultEvent.self, me, context)
            case .restart:
                mc = Device.masterController(world, store)
                _ = world.send(KSMStartEvent(), to: mc, as: KSMStartResultEvent.self, me, context)
            case .logoutAll, .logoutAccessAndRefresh, .logoutOffline:
                let behavior: KSMClearIamTokenCacheEvent.ClearBehavior = kind == .logoutAll ? .CLEAR_ALL : kind == .logoutOffline ? .CLEAR_OFFLINE : .CLEAR_ACCESS_AND_REFRESH
                let cleared = world.send(KSMClearIamTokenCacheEvent(userIdentifier: identifier(user), clearBehavior: behavior), to: mc,
                                         as: KSMStatusResultEvent.self, me, context)
                if kind != .logoutOffline, cleared?.status == .kOk {
                    // A logout stays a logout: nothing may bring the access and refresh tokens back.
                    let status = checkTokenSubject(user)
                    world.checked(Invariant.logoutStays, status != .kOk, "participant \(me.index) got a token after \(behavior) of \(user)")
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
            let log = world.server.auditLog().filter { $0.userId == locker }
            let rejected = log.filter { $0.event == .credentialsRejected }.count
            let locks = log.filter { $0.event == .accountLocked }.count
            let lockouts = results.filter { $0.authenticationResult.map { if case .lockout = $0 { true } else { false } } ?? false }.count
            world.checked(Invariant.lockoutExact, faulted ? rejected <= limit && locks <= 1 : rejected == limit && locks == 1 && lockouts >= 1,
                          "\(limit + 2) concurrent wrong logins of \(locker)\(faulted ? " (faults struck)" : ""): the IDP evaluated \(rejected) (limit \(limit)), locked \(locks) times; \(lockouts) flows ended in lockout")
            world.clock.advance(by: .seconds(61))   // the lock ends
            login(locker)
        }

        /// The access token expires; one or (a refresh storm) several concurrent ExchangeIamToken
        /// events must cause at most one refresh grant at the IDP.
        func refresh(_ user: String) {
            world.clock.advance(by: .seconds(301))
            let storm = fault("refresh.storm") ? 4 : 1
            // A logout racing the refresh: CLEAR_ALL sent with the exchanges, on the same MC.
            let logoutRace = fault("refresh.logoutRace")
            let before = world.refreshes(trace: me.trace.traceId)
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
                    return (await mc.receive(event) as? KSMStatusResultEvent)?.status ?? .kInternalError
                }, at: Int(me.index % (storm + 1)))
            }
            let statuses = context.runAsync("mc.ExchangeIamToken×\(storm)\(logoutRace ? "+logout" : "")", events) ?? []
            world.countEvents(events.count)
            let grants = world.refreshes(trace: me.trace.traceId) - before
            world.checked(Invariant.oneRefresh, grants <= 1, "\(storm) concurrent ExchangeIamToken events of participant \(me.index) caused \(grants) refresh grants (\(statuses))")
            if logoutRace {
                // Whatever the order, the logout happened: no refresh may bring the tokens back.
                let status = checkTokenSubject(user)
                world.checked(Invariant.logoutStays, status != .kOk, "a refresh racing CLEAR_ALL of \(user) on participant \(me.index)'s device left a usable token (\(statuses))")
                login(user)
            }
        }
    }
}

extension SystemStress.World {
    var wiredTransport: StressTransport { wiringTransport() }

    func fault(_ name: String, flow: Int, step: Int) -> Bool { run.fault(name, flow: flow, step: step) }

    /// Refresh grants the IDP logged for a trace.
    func refreshes(trace: String) -> Int { server.auditLog(traceId: trace).filter { $0.event == .tokensRefreshed }.count }

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
    unowned let world: SystemStress.World
    let faults: StressFaults
    private let calls = LockedValue<[String: Int]>([:])
    /// Flows whose call is hanging, released when the flow ends.
    private let hanging = LockedValue<[IdpSdkFlowID: DispatchSemaphore]>([:])

    init(inner: any IdpSdkInteractionInterface & Sendable, world: SystemStress.World, faults: StressFaults) {
        self.inner = inner
        self.world = world
        self.faults = faults
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let trace = TraceParent.seamTrace(interactionData.traceParent) ?? "none"
        let call = calls.withLock { $0[trace, default: 0] += 1; return $0[trace]! }
        world.checkCall(interactionData, trace: trace)
        if faults.fires("provider.fail", trace: trace, step: call) {
            let error = IdpSdkError(Self.subsystem, 4_242, "injected provider failure, call \(call) of trace \(trace.prefix(8))")
            world.injected.withLock { $0[trace, default: []].append(error) }
            return .init(error: error)
        }
        if faults.fires("provider.slow", trace: trace, step: call) { usleep(1_000) }
        if faults.fires("provider.hang", trace: trace, step: call) {
            let gate = DispatchSemaphore(value: 0)
            hanging.withLock { $0[interactionData.flowId] = gate }
            _ = gate.wait(timeout: .now() + 5)
            hanging.withLock { _ = $0.removeValue(forKey: interactionData.flowId) }
        }
        let answer = inner.provideCredentials(interactionData)
        if let given = answer.credentials, let truth = world.credentials.values(for: interactionData) {
            // The provider's answer must be this flow's own: another flow's secrets are cross-talk.
            let foreign = interactionData.inputFieldIds.filter { id in given[id].map { $0 != truth[id] } ?? false }
            world.checked(SystemStress.Invariant.noCrossTalk, foreign.isEmpty,
                          "the provider answered \(foreign.joined(separator: ", ")) of a flow for \(interactionData.userId ?? "(activation)") with another flow's values")
        }
        return answer
    }

    func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
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
