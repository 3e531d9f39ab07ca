import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// One participant's app: its MasterController (replaced on a restart, on the same store), the
    /// steps of the mix, each as the documents do it, and the stress's own record of the device —
    /// who it activated, who is logged in, whose tokens a logout ended — which the invariants are
    /// judged against, never the product's answers.
    final class Device {
        let world: World
        let me: World.Participant
        let context: StressContext
        let store = McTokenStore()
        var mc: MasterController
        /// Users activated on this device, as the stress did it.
        var users: [String] = []
        var step = 0
        /// The user ExchangeIamToken answers for, as this app knows it: the user of the last
        /// successful SetAuthorisationCode or OfflineLogin on this MC (an activation logs its user
        /// in too), until a Start, a Restart or that user's logout. `nil`: nobody.
        var current: String?
        /// Users whose tokens a logout ended, and how, until they log in again.
        var loggedOut: [String: KSMClearIamTokenCacheEvent.ClearBehavior] = [:]
        /// Users whose tokens a replayed code revoked at the IDP, until they log in again.
        var revoked: Set<String> = []
        /// When the request for the tokens the MC holds for each user went out (a login or a
        /// refresh), on the run's clock, and what the transport had done to the trace's token
        /// requests by then.
        var granted: [String: (at: Date, token: TokenTrouble)] = [:]

        /// What the transport did to this trace's token requests that leaves the MC without the
        /// tokens the IDP issued: answers lost after the IDP acted (a rotated token the MC never
        /// learnt of), requests given up after the connection was lost twice (the MC reports
        /// NOT_REACHABLE and restarts itself, logging everyone out), and requests sent twice at
        /// once (the reuse revokes what either copy got).
        struct TokenTrouble: Equatable {
            var lostAnswers: Int
            var gaveUp: Int
            var sentTwice: Int
        }

        var tokenTrouble: TokenTrouble {
            let transport = world.transport, trace = me.trace.traceId
            return TokenTrouble(lostAnswers: transport.lostTokenAnswers(trace: trace), gaveUp: transport.mcGaveUp(trace: trace),
                                sentTwice: transport.tokenRequestsSentTwice(trace: trace))
        }

        /// How often the trace's MC had given a request up when the current MC was made: one that
        /// gives up later restarts itself some time after (a task of its own), logging everyone
        /// out, so from then on a "not logged in" may be that restart's doing.
        var gaveUpBeforeThisMc = 0

        init(world: World, participant: World.Participant, context: StressContext) {
            self.world = world
            me = participant
            self.context = context
            mc = Device.masterController(world, store)
        }

        /// Whether the current MC gave a request up (lost its connection twice), so it may have
        /// restarted itself meanwhile.
        var mcMayHaveRestarted: Bool { world.transport.mcGaveUp(trace: me.trace.traceId) > gaveUpBeforeThisMc }

        static func masterController(_ world: World, _ store: McTokenStore) -> MasterController {
            var configuration = MasterController.Configuration(idpUrl: "https://stress.idp.test", transport: world.transport, tokenStore: store,
                                                               clock: world.clock, refreshTimeout: .seconds(3600))
            configuration.controller = world.controller
            // Free-running, the MC's own tasks run on the run's threads, as its events do.
            configuration.taskExecutor = world.run.monitor?.taskExecutor
            world.options.plant(in: &configuration)
            return MasterController(configuration: configuration)
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
            let ok = setCode(authorizationCode, clientId: "KssIdpEnrollment", identifier: nil, for: user)
            if ok, !users.contains(user) { users.append(user) }
            return ok
        }

        /// GetAstClientData, the login flow, SetAuthorisationCode.
        @discardableResult
        func login(_ user: String, password: String? = nil, cancel: Bool = false, refusalExpected: Bool = false) -> IdpSdkResult? {
            step += 1
            guard let ast = world.send(KSMGetAstClientDataEvent(userIdentifier: identifier(user)), to: mc, as: KSMGetAstClientDataResultEvent.self, me, context),
                  ast.status == .kOk else { return nil }
            let answers = ["username": user, "password": password ?? self.password(user)]
            let result = world.authorize(me, context: context, ast: AstClientDataInfo(astClientData: ast), clientId: "KssIdpLogin",
                                         userId: user, answers: answers, count: 1, cancel: cancel, expectRefusal: refusalExpected)?.first
            guard let code = result?.authorizationCode else { return result }
            setCode(code, clientId: "KssIdpLogin", identifier: identifier(user), for: user)
            return result
        }

        /// SetAuthorisationCode for a code the stress obtained for `user`, with the PKCE, expiry and
        /// replay faults. The MC must report `user` (no cross-talk), and then hand out a token for
        /// them (liveness).
        @discardableResult
        func setCode(_ code: String, clientId: String, identifier: KsUserIdentifier?, for user: String) -> Bool {
            if fault(.codeWrongVerifier) {
                // Someone who saw the code but not the verifier must not get tokens for it.
                let status = world.redeemDirectly(code, clientId: clientId, trace: me.trace)
                world.checked(.singleUseCodes, status != 200, "a code of participant \(me.index) was redeemed with a wrong PKCE verifier")
            }
            if fault(.clockCodeExpiry) { world.advanceClock(by: .seconds(61), me, "the code expires") }
            let sent = world.clock.now()
            let trouble = tokenTrouble
            let event: KSMSetAuthorisationCodeEvent = if let identifier {
                KSMSetAuthorisationCodeEvent(userIdentifier: identifier, authenticationMode: .no, authorisationCode: code, clientId: clientId)
            } else {
                KSMSetAuthorisationCodeEvent(tenantId: World.tenant, authenticationMode: .no, authorisationCode: code, clientId: clientId)
            }
            let result = world.send(event, to: mc, as: KSMSetAuthorisationCodeResultEvent.self, me, context)
            guard result?.status == .kOk else { return false }
            world.expectRedemption(me)
            world.triggered(.noCrossTalk)
            let reported = result?.userIdentifier?.userId
            world.checked(.noCrossTalk, reported == user,
                          "participant \(me.index)'s SetAuthorisationCode with the code of \(user)'s \(clientId) flow reported \(reported ?? "no user") logged in")
            current = user
            loggedOut[user] = nil
            revoked.remove(user)
            granted[user] = (sent, trouble)
            checkLiveness(of: user, after: "SetAuthorisationCode", since: sent, trouble: trouble)
            if fault(.codeReplay) { replayCode(of: user) }
            return true
        }

        /// An attacker replays the token request the app just made (code and verifier): the IDP
        /// must refuse it, and revokes what the code gave (RFC 6749 §4.1.2).
        func replayCode(of user: String) {
            guard let request = world.transport.takeLastCodeRedemption(trace: me.trace.traceId) else { return }
            let status = world.server.handle(request).status
            world.triggered(.singleUseCodes)
            world.checked(.singleUseCodes, status != 200, "a replay of participant \(me.index)'s redeemed code for \(user) got tokens (HTTP \(status))")
            if status != 200 { revoked.insert(user) }
            world.log(me, "replayed the code of \(user): HTTP \(status)")
        }

        /// After a successful login of `user` (whose request went out at `since` on the run's
        /// clock), the MC hands out a token for them, unless a fault struck meanwhile, the user's
        /// tokens were revoked by a replayed code, or the shared clock moved an access token's
        /// lifetime meanwhile (the IDP counts a token's life from its issue, the MC from its
        /// arrival: another device's clock jump in between leaves the MC holding a token the IDP
        /// calls expired).
        func checkLiveness(of user: String, after what: String, since: Date, trouble: TokenTrouble) {
            world.triggered(.liveness)
            let faultsBefore = world.faultsFired(for: me.index)
            let grantsBefore = world.refreshes(trace: me.trace.traceId).count
            let answer = probeToken(after: user)
            // Fresh tokens: the MC refreshes nothing, unless the shared clock moved an access
            // token's lifetime since they were asked for.
            let lifetime = world.server.configuration.accessTokenLifetime.timeInterval
            if world.clock.now().timeIntervalSince(since) < lifetime {
                let grants = world.refreshes(trace: me.trace.traceId).count - grantsBefore
                world.checked(.oneRefresh, grants == 0,
                              "participant \(me.index)'s MC refreshed \(user)'s tokens \(grants) times right after \(what) got them, before they expired")
            }
            if answer?.status == .kOk {
                world.checked(.liveness, true, "")
                return
            }
            if tokensMayBeGone(of: user, faultsBefore: faultsBefore, trouble: trouble) || world.clock.now().timeIntervalSince(since) >= lifetime {
                world.excused(.liveness)
                return
            }
            world.checked(.liveness, false,
                          "\(user) logged in on participant \(me.index)'s device (\(what) kOk), and its next ExchangeIamToken answered \(answer.map { "\($0.status)" } ?? "nothing")")
        }

        /// Whether what the stress did may have left the MC without `user`'s tokens: an answer lost
        /// since `faultsBefore` faults of this participant, a replayed code that revoked them,
        /// token trouble since `trouble`, or the MC's own restart.
        func tokensMayBeGone(of user: String, faultsBefore: Int, trouble: TokenTrouble) -> Bool {
            world.answerLost(for: me.index, after: faultsBefore) || revoked.contains(user) || tokenTrouble != trouble || mcMayHaveRestarted
        }

        /// A token for another audience. ExchangeIamToken names no user: it answers for the MC's
        /// logged-in user, which the stress's record holds (``current``); its subject must be that
        /// user (no cross-talk). Returns the status and the token's subject.
        @discardableResult
        func probeToken(after user: String) -> (status: KSMEventStatusType, subject: String?)? {
            let event = KSMExchangeIamTokenEvent(audience: "stress-api")
            guard let answer = world.send(event, to: mc, me, context) else { return nil }
            // With nobody logged in the MC answers with a KSMInvalidStateEvent: no token either.
            guard let result = answer as? KSMExchangeIamTokenResultEvent else { return (.kInvalidState, nil) }
            guard result.status == .kOk else { return (result.status, nil) }
            let subject = world.server.introspect(result.token, tenant: World.tenant)?.userId
            world.triggered(.noCrossTalk)
            world.checked(.noCrossTalk, subject != nil && subject == current,
                          "participant \(me.index) asked a token (after a step for \(user)) while \(current ?? "nobody") is logged in on its MC, and got one for \(subject ?? "nobody")")
            if let subject, subject != user, subject == current {
                world.saw(.exchangeForAnotherUser, me, "ExchangeIamToken after a step for \(user) answered for \(subject), logged in since on the same MC")
            }
            return (result.status, subject)
        }

        /// What a logout of kind `behavior` must have removed from the store.
        static func cleared(by behavior: KSMClearIamTokenCacheEvent.ClearBehavior) -> (access: Bool, refresh: Bool, offline: Bool) {
            switch behavior {
            case .CLEAR_ALL: (true, true, true)
            case .CLEAR_ACCESS_AND_REFRESH: (true, true, false)
            case .CLEAR_OFFLINE: (false, false, true)
            }
        }

        /// After `user`'s logout nothing brings the tokens it ended back, through any door: the
        /// store holds none of them; ExchangeIamToken gives no token for the user (and none at all
        /// while the user was the MC's logged-in one); OfflineLogin fails once every token is gone.
        func checkLogoutStays(_ user: String, behavior: KSMClearIamTokenCacheEvent.ClearBehavior, wasCurrent: Bool, _ what: String) {
            world.triggered(.logoutStays)
            checkStore(of: user, behavior: behavior, what)
            guard behavior != .CLEAR_OFFLINE else { return }
            if let answer = probeToken(after: user) {
                let holds = answer.status != .kOk || (!wasCurrent && answer.subject != user)
                world.checked(.logoutStays, holds, "\(what) left a usable token (\(answer.status), for \(answer.subject ?? "nobody"))")
            }
            guard behavior == .CLEAR_ALL else { return }
            if let offline = world.send(KSMOfflineLoginEvent(userIdentifier: identifier(user)), to: mc, as: KSMOfflineLoginResultEvent.self, me, context) {
                world.checked(.logoutStays, offline.status != .kOk, "\(what): OfflineLogin of \(user) succeeded afterwards")
                if offline.status == .kOk { current = user }
            }
        }

        /// The store door: the tokens a logout of kind `behavior` ended are not in the store.
        func checkStore(of user: String, behavior: KSMClearIamTokenCacheEvent.ClearBehavior, _ what: String) {
            let must = Self.cleared(by: behavior)
            guard let held = store.heldTokens(of: identifier(user)) else { return }
            let back = [("access", must.access && held.access), ("refresh", must.refresh && held.refresh), ("offline", must.offline && held.offline)]
                .filter(\.1).map(\.0)
            world.checked(.logoutStays, back.isEmpty, "\(what): the store holds \(user)'s \(back.joined(separator: " and ")) token again")
        }

        /// At the end of the participant's script: every logout not followed by a login still
        /// holds in the store (a refresh that ended late wrote nothing back).
        func checkLogoutsStayed() {
            for (user, behavior) in loggedOut.sorted(by: { $0.key < $1.key }) {
                checkStore(of: user, behavior: behavior, "at the end of participant \(me.index)'s script, \(behavior) of \(user)")
            }
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
                let sent = world.clock.now()
                let trouble = granted[user]?.token ?? tokenTrouble
                let offline = world.send(KSMOfflineLoginEvent(userIdentifier: identifier(user)), to: mc, as: KSMOfflineLoginResultEvent.self, me, context)
                if offline?.status == .kOk {
                    current = user
                    loggedOut[user] = nil
                    // OfflineLogin may keep the access token the MC holds: its life began when
                    // the request for it went out.
                    checkLiveness(of: user, after: "OfflineLogin", since: min(sent, granted[user]?.at ?? sent), trouble: trouble)
                }
            case .restart:
                mc = Device.masterController(world, store)
                gaveUpBeforeThisMc = world.transport.mcGaveUp(trace: me.trace.traceId)
                _ = world.send(KSMStartEvent(), to: mc, as: KSMStartResultEvent.self, me, context)
                current = nil
            case .logoutAll, .logoutAccessAndRefresh, .logoutOffline:
                let behavior: KSMClearIamTokenCacheEvent.ClearBehavior = kind == .logoutAll ? .CLEAR_ALL : kind == .logoutOffline ? .CLEAR_OFFLINE : .CLEAR_ACCESS_AND_REFRESH
                let cleared = world.send(KSMClearIamTokenCacheEvent(userIdentifier: identifier(user), clearBehavior: behavior), to: mc,
                                         as: KSMClearIamTokenCacheResultEvent.self, me, context)
                if cleared?.status == .kOk {
                    let wasCurrent = current == user
                    if behavior != .CLEAR_OFFLINE {
                        if wasCurrent { current = nil }
                        loggedOut[user] = behavior
                    }
                    checkLogoutStays(user, behavior: behavior, wasCurrent: wasCurrent, "\(behavior) of \(user) on participant \(me.index)'s device")
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
            world.triggered(.lockoutExact)
            let faultsBefore = world.faultsFired(for: me.index)
            let results = world.authorize(me, context: context, ast: AstClientDataInfo(astClientData: ast), clientId: "KssIdpLogin", userId: locker,
                                          answers: ["username": locker, "password": "wrong-\(number)"], count: limit + 2, expectRefusal: true) ?? []
            // Exact when no fault touched the storm; with faults (a flow ended early, an answer
            // lost), never more than the limit evaluated and never more than one lock.
            let faulted = world.faultsFired(for: me.index) > faultsBefore
                || results.contains { $0.idpSdkError?.errorCode == IdpSdkError.Code.timedOut.rawValue }
            let lockouts = results.filter { $0.authenticationResult.map { if case .lockout = $0 { true } else { false } } ?? false }.count
            world.advanceClock(by: .seconds(61), me, "the lock ends")
            // A storm flow that timed out may have had a wrong guess on its way to the IDP, which
            // lands now and can lock the account again: then the login is refused, rightly.
            let orphans = results.contains { $0.idpSdkError?.code == .timedOut }
            login(locker, refusalExpected: orphans)
            // The storm, then the login after the lock ended: every decision the IDP made on the
            // locker.
            let decisions = world.settledDecisions(of: locker)
            let replay = LockoutReplay(decisions, limit: limit, lockDuration: World.lockoutDuration)
            let what = "\(limit + 2) concurrent wrong logins of \(locker) on participant \(me.index)'s device\(faulted ? " (faults struck)" : ""): the IDP evaluated \(replay.evaluated) (limit \(limit)), locked \(replay.locks) times; \(lockouts) flows ended in lockout"
            // Every decision as the policy makes it, in the order the IDP made them, by the time
            // it made them at: a clock jump past the lock's end (another app's step moves the
            // shared clock) lifts the lock, and the storm's next guesses are evaluated and counted
            // again, up to one more lock.
            world.checked(.lockoutExact, replay.problem == nil, "\(what): \(replay.problem ?? "") (decisions: \(replay.script))")
            if replay.liftedByClock {
                world.saw(.lockLiftedDuringStorm, me, "\(what) (decisions: \(replay.script))")
            } else if !faulted {
                // Nothing lifted the lock and no fault touched the storm: exactly the limit.
                world.checked(.lockoutExact, replay.evaluated == limit && replay.locks == 1 && lockouts >= 1, what)
            }
        }

        /// The access token expires; one or (a refresh storm) several concurrent ExchangeIamToken
        /// events must cause at most one refresh grant at the IDP, and each must get a token.
        func refresh(_ user: String) {
            world.advanceClock(by: .seconds(301), me, "the access token expires")
            step += 1
            let storm = fault(.refreshStorm) ? 4 : 1
            // A logout racing the refresh: CLEAR_ALL sent with the exchanges, on the same MC.
            let logoutRace = fault(.refreshLogoutRace)
            let before = world.refreshes(trace: me.trace.traceId).count
            let wasCurrent = logoutRace && current == user
            let loggedInUser = current
            let faultsBefore = world.faultsFired(for: me.index)
            let stormStart = world.clock.now()
            let troubleBefore = tokenTrouble
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
            world.log(me, "\(storm) ExchangeIamToken\(logoutRace ? " and a CLEAR_ALL" : "") at once → \(statuses); \(grants) refresh grants")
            if loggedInUser != nil { world.triggered(.oneRefresh) }
            // The MC refreshes a token only once it has expired, so two of its grants are at least
            // an access token's lifetime apart on the IDP's clock. One expiry, one grant: more
            // grants in the storm are right only when the clock jumped past the new token's expiry
            // meanwhile (another app's step moves the shared clock).
            let lifetime = world.server.configuration.accessTokenLifetime.timeInterval
            let early = all.indices.dropFirst(max(1, before)).filter { all[$0].timeIntervalSince(all[$0 - 1]) < lifetime }
            world.checked(.oneRefresh, early.isEmpty,
                          "\(storm) concurrent ExchangeIamToken events of participant \(me.index) caused \(grants) refresh grants, \(early.count) of them within an access token's lifetime of the one before (\(statuses))")
            if grants > 1, early.isEmpty { world.saw(.expiryDuringRefreshStorm, me, "\(storm) concurrent ExchangeIamToken events, \(grants) refresh grants, each after the token before it expired") }
            // The storm's own results: with a user logged in, no logout racing, no fault, the
            // refresh token alive and no clock jump of an access token's lifetime during the storm
            // (see `checkLiveness`), every caller gets a token. A token answer lost since the
            // grant (`transport.drop` after the IDP rotated the refresh token) leaves the MC with
            // a spent token, which the IDP rightly refuses.
            if let loggedInUser, !logoutRace {
                let configuration = world.server.configuration
                let grant = granted[loggedInUser]
                let sinceGrant = world.clock.now().timeIntervalSince(grant?.at ?? world.clock.now())
                let duringStorm = world.clock.now().timeIntervalSince(stormStart)
                if tokensMayBeGone(of: loggedInUser, faultsBefore: faultsBefore, trouble: grant?.token ?? tokenTrouble)
                    || sinceGrant >= configuration.refreshTokenLifetime.timeInterval || duringStorm >= configuration.accessTokenLifetime.timeInterval {
                    world.excused(.oneRefresh)
                } else {
                    world.checked(.oneRefresh, statuses.count == storm && statuses.allSatisfy { $0 == .kOk },
                                  "\(storm) concurrent ExchangeIamToken events of participant \(me.index) for \(loggedInUser), logged in, at an expiry: \(statuses) (\(grants) refresh grants)")
                }
                // The MC holds the new tokens only if an answer reached it; what the transport did
                // to the storm's own token requests (an answer lost, a grant sent twice whose
                // other copy's reuse revoked what the MC got) counts against them.
                if grants > 0, statuses.contains(.kOk) { granted[loggedInUser] = (stormStart, troubleBefore) }
            }
            if logoutRace {
                // Whatever the order, the logout happened: no refresh may bring the tokens back.
                if current == user { current = nil }
                loggedOut[user] = .CLEAR_ALL
                checkLogoutStays(user, behavior: .CLEAR_ALL, wasCurrent: wasCurrent, "a refresh racing CLEAR_ALL of \(user) on participant \(me.index)'s device (\(statuses))")
                login(user)
            }
        }
    }
}
