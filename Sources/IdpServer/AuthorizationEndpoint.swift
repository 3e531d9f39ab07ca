import Foundation
import IdpPrimitives
import IdpWireFormats

extension IdpServer {
    /// The all-zero AST client id of a device that has no user yet (`IdpWire/unassignedAstClientId`).
    package static var unassignedAstClientId: String { IdpWire.unassignedAstClientId }

    /// Decodes a request target's query, where it lies; a parameter given twice is an error
    /// (RFC 6749 §3.1).
    static func uniqueParameters(_ query: Substring) -> Result<FormParameters, ParameterProblem> {
        let pairs: [(name: String, value: String)]
        do {
            pairs = try FormURLEncoding.decode(query)
        } catch {
            return .failure(malformed(error))
        }
        return uniquelyNamed(pairs)
    }

    /// Decodes a form body, as ``uniqueParameters(_:)`` decodes a query; `nil` when the body is
    /// not UTF-8.
    static func uniqueParameters(body: [UInt8]) -> Result<FormParameters, ParameterProblem>? {
        let pairs: [(name: String, value: String)]?
        do {
            pairs = try FormURLEncoding.decode(utf8: body)
        } catch {
            return .failure(malformed(error))
        }
        return pairs.map(uniquelyNamed)
    }

    private static func malformed(_ error: FormURLEncodingError) -> ParameterProblem {
        ParameterProblem(message: "malformed parameters: \(error)")
    }

    private static func uniquelyNamed(_ pairs: [(name: String, value: String)]) -> Result<FormParameters, ParameterProblem> {
        do {
            return .success(try FormParameters(uniquelyNamed: pairs))
        } catch {
            return .failure(ParameterProblem(message: error.description))
        }
    }

    /// `GET …/protocol/openid-connect/auth`: validates the request, opens a login session and serves
    /// the first step's form.
    func authorize(tenant tenantId: String, request: HTTPRequest, traceParent: String?) -> HTTPResponse {
        let params: FormParameters
        switch Self.uniqueParameters(request.query) {
        case .success(let decoded): params = decoded
        case .failure(let problem): return Page.errorResponse(status: 400, code: "invalid_request", problem.message)
        }
        let now = self.now
        let sessionCode = SecureRandom.token(byteCount: 24)
        let astClient = (data: request.headers["X-KOBIL-ASTCLIENTDATA"], id: request.headers["X-KOBIL-ASTCLIENTID"])
        let lifetime = lifetimes.authSession

        let sessions = state.sessionShard(sessionCode)
        let valid: ValidAuthorization
        switch validateAuthorization(params, tenant: tenantId, sessionCode: sessionCode, astClient: astClient, traceParent: traceParent,
                                     expiresAt: now.addingTimeInterval(lifetime)) {
        case .success(let validated): valid = validated
        case .failure(let refusal):
            record(.authorizationRefused, tenant: tenantId, clientId: refusal.clientId, userId: nil, traceParent: traceParent, refusal.reason)
            return refusal.response
        }
        openSession(valid.request, code: sessionCode, in: sessions, now: now)
        let client = valid.prepared.configuration
        let restarted = request.headers["tracestate"]?.contains(TraceParent.restartedTraceState) == true
        record(.authorizationRequested, tenant: tenantId, clientId: client.clientId, userId: valid.request.loginHint, traceParent: traceParent,
               "step 1 of \(client.steps.count)" + (restarted ? "; new trace: the client could not parse its caller's traceparent" : ""))
        return Page.form(valid.prepared.forms[0], sessionCode: sessionCode, rejection: nil)
    }

    /// The authorization request in `params` validated into the client it is for and the request
    /// its login session is opened with, or its refusal: a page until the redirect URI is trusted
    /// (``authorizationClient(_:tenant:sessionCode:)``), a redirect to it after.
    /// - Parameters:
    ///   - sessionCode: The code the session will have; its route picks the tenant's replica.
    ///   - astClient: The `X-KOBIL-ASTCLIENTDATA` and `X-KOBIL-ASTCLIENTID` headers.
    ///   - expiresAt: When the login session ends.
    private func validateAuthorization(_ params: FormParameters, tenant tenantId: String, sessionCode: String, astClient: (data: String?, id: String?),
                                       traceParent: String?, expiresAt: Date) -> Result<ValidAuthorization, AuthorizationRefusal> {
        let prepared: PreparedClient, clientId: String, redirectURI: String
        switch authorizationClient(params, tenant: tenantId, sessionCode: sessionCode) {
        case .success(let found): (prepared, clientId, redirectURI) = found
        case .failure(let refusal): return .failure(refusal)
        }
        let client = prepared.configuration
        // From here on the redirect URI is trusted, so errors go back to it (RFC 6749 §4.1.2.1).
        let responseMode = params["response_mode"] ?? "fragment"
        func refuse(_ error: String, _ description: String) -> Result<ValidAuthorization, AuthorizationRefusal> {
            var parameters = [("error", error), ("error_description", description)]
            if let state = params["state"] { parameters.append(("state", state)) }
            let mode = responseMode == "query" ? "query" : "fragment"
            return .failure(AuthorizationRefusal(response: Page.redirect(to: redirectURI, responseMode: mode, parameters), clientId: clientId, reason: description))
        }
        guard responseMode == "fragment" || responseMode == "query" else {
            return refuse("invalid_request", "response_mode '\(responseMode)' is not supported")
        }
        guard params["response_type"] == "code" else {
            return refuse("unsupported_response_type", "response_type must be 'code'")
        }
        guard let challenge = params["code_challenge"], PKCE.isValidS256Challenge(challenge) else {
            return refuse("invalid_request", "code_challenge is missing or is not an S256 challenge")
        }
        guard params["code_challenge_method"] == PKCE.methodS256 else {
            return refuse("invalid_request", "code_challenge_method must be S256")
        }
        guard let astClientData = astClient.data, !astClientData.isEmpty, astClientData.utf8.count <= 4096 else {
            return refuse("invalid_request", "the X-KOBIL-ASTCLIENTDATA header is missing or too long")
        }
        // The web-view header rule (000_*.txt): existing users and logins send the device's AST
        // client id with the client data; a new user has none yet.
        if client.astClientIdHeader == .required {
            guard let astClientId = astClient.id, Self.namesADevice(astClientId), astClientId.utf8.count <= 256 else {
                return refuse("invalid_request", "client '\(clientId)' needs the X-KOBIL-ASTCLIENTID header of an activated device")
            }
        }
        let loginHint = params["login_hint"]
        if let loginHint {
            // Users are never removed nor made pending again, so what this read finds still
            // holds when the session is stored.
            let key = UserKey(tenant: tenantId, user: loginHint)
            let status = state.userShard(key).withLock { $0[key]?.status }
            if status == nil || (client.purpose.requiresActiveUser && status != .active) {
                return refuse(IdpWire.FlowError.userNotEnrolled, "user '\(loginHint)' is not enrolled in tenant '\(tenantId)'")
            }
        }
        return .success(ValidAuthorization(prepared: prepared, request: AuthRequest(
            tenant: tenantId, clientId: clientId, redirectURI: redirectURI, responseMode: responseMode,
            state: params["state"], nonce: params["nonce"], codeChallenge: challenge,
            codeChallengeMethod: PKCE.methodS256, loginHint: loginHint,
            astClientId: astClient.id.flatMap { $0 == Self.unassignedAstClientId ? nil : $0 },
            traceParent: traceParent, expiresAt: expiresAt
        )))
    }

    /// The client `params` names in the tenant and the redirect URI registered for it, or the page
    /// that refuses the request: no error is sent to a redirect URI not known to be registered.
    private func authorizationClient(_ params: FormParameters, tenant tenantId: String, sessionCode: String)
        -> Result<(prepared: PreparedClient, clientId: String, redirectURI: String), AuthorizationRefusal> {
        guard let tenant = state.tenant(tenantId, stripe: ShardRouting.route(of: sessionCode)) else {
            return .failure(AuthorizationRefusal(response: Page.errorResponse(status: 404, code: IdpWire.FlowError.unknownTenant, "tenant '\(tenantId)' does not exist"),
                                                 clientId: nil, reason: "unknown tenant"))
        }
        guard let clientId = params["client_id"], let prepared = tenant.clients[clientId] else {
            let named = params["client_id"] ?? ""
            return .failure(AuthorizationRefusal(response: Page.errorResponse(status: 400, code: IdpWire.FlowError.unknownClient, "client '\(named)' is not known to tenant '\(tenantId)'"),
                                                 clientId: named, reason: "unknown client"))
        }
        let client = prepared.configuration
        // The registered string, not the request's: every flow's code then compares against
        // one string, whose bytes the token endpoint finds in cache under the grants lock.
        guard let requested = params["redirect_uri"], let redirectURI = Self.registered(requested, in: client.redirectURIs) else {
            return .failure(AuthorizationRefusal(response: Page.errorResponse(status: 400, code: "invalid_redirect_uri", "redirect_uri '\(params["redirect_uri"] ?? "")' is not registered for client '\(clientId)'"),
                                                 clientId: clientId, reason: "invalid redirect_uri"))
        }
        return .success((prepared, clientId, redirectURI))
    }

    /// Opens a login session for `request` under `sessionCode` in its shard, `sessions`.
    private func openSession(_ request: AuthRequest, code sessionCode: String, in sessions: LockedValue<SessionShard>, now: Date) {
        let session = AuthSession(request)
        // What opening pruned is released after the lock.
        let key = GrantKey(sessionCode)
        _ = sessions.withLockThenUpkeep { $0.open(session, code: key, now: now) }
    }

    /// `POST …/login-actions/authenticate`: decides one step's answers.
    ///
    /// The step is decided on copies, with no lock held: the flow's session and its user's record
    /// are read, each in a short lock section of its own (``readStep(_:tenant:previous:)``), the step is
    /// decided on them (``StepRules``), and the decision is committed with the session's shard
    /// and then the user's shard locked (the lock order of `ServerState`), only if neither
    /// changed since it was read (``commit(_:read:)``). Another decision on the same flow or user
    /// in between makes this one read and decide again; after ``optimisticTries`` such conflicts
    /// it reads, decides and commits in one lock section.
    func authenticate(tenant tenantId: String, request: HTTPRequest, traceParent: String?) -> HTTPResponse {
        let submission: StepSubmission
        switch StepSubmission.parse(request) {
        case .success(let parsed): submission = parsed
        case .failure(let refusal): return refusal.response
        }
        let sessionCode = submission.sessionCode
        let tenant = state.tenant(tenantId, stripe: ShardRouting.route(of: sessionCode))
        let (decision, read) = decideStep(submission, tenantId: tenantId, tenant: tenant, traceParent: traceParent)
        let now = read.now
        // The code was not handed out yet, so storing it after the locks are released leaves no
        // window in which it could be presented and not found; its text exists only once it is
        // stored (``GrantHandle``).
        var newCode = ""
        if case .completed(_, _, _, let code) = decision.outcome {
            // What it pruned is released after the lock.
            let draft = GrantHandle.draft()
            newCode = state.grantShard(route: draft.route).withLockThenUpkeep { $0.addCode(code, as: draft, now: now) }.0.text
        }
        return respond(to: decision, sessionCode: sessionCode, newCode: newCode, now: now, tenantId: tenantId, traceParent: traceParent)
    }

    /// Decides `submission` and commits the decision: on copies while it is not overtaken, under
    /// the locks after ``optimisticTries`` tries that were. Returns the decision and the snapshot
    /// of its last try (whose time and issued values the decision used).
    private func decideStep(_ submission: StepSubmission, tenantId: String, tenant: TenantConfiguration?,
                            traceParent: String?) -> (StepDecision, StepSnapshot) {
        let rules = stepRules
        var previous: StepSnapshot?
        var tries = 0
        while true {
            tries += 1
            let read = readStep(submission, tenant: tenant, previous: previous)
            previous = read
            // A controlled stress run may decide another request first.
            configuration.controller?.pause(at: Seam("idp.step", trace: TraceParent.seamTrace(traceParent)))
            if tries > Self.optimisticTries {
                read.fresh.makeAll()
                return (decideUnderLocks(submission, read: read, rules: rules, tenantId: tenantId, tenant: tenant), read)
            }
            let decision = rules.decide(submission, on: read, tenantId: tenantId, tenant: tenant)
            if commit(decision, read: read) { return (decision, read) }
        }
    }

    /// How many times a step is decided on copies before it is decided under its locks: a flow
    /// whose user other flows keep changing still ends in a bounded number of tries.
    package static let optimisticTries = 8

    /// The copies a step is decided on, and the digests of its secrets, made before any lock: made
    /// once per request, and taken from `previous` when the step is read again (a user's salt
    /// never changes, so neither do the digests). The random values a decision may issue come
    /// with `previous`, or new and not yet made (``FreshValues``).
    private func readStep(_ submission: StepSubmission, tenant: TenantConfiguration?, previous: StepSnapshot?) -> StepSnapshot {
        let sessionCode = submission.sessionCode
        let fresh = previous?.fresh ?? FreshValues()
        var key: UserKey?
        var record: UserRecord?
        var secrets: [String] = []
        let sessionKey = GrantKey(sessionCode)
        let session = state.sessionShard(sessionCode).withLock { $0.session(sessionKey) }
        if let step = session?.currentStep(in: tenant, answers: submission.answers) {
            key = step.key
            record = state.userShard(step.key).withLock { $0[step.key] }
            for field in step.fields where field.isSecret {
                if let answer = submission.answers[field.id] { secrets.append(answer) }
            }
        }
        let salt = record?.salt ?? (secrets.isEmpty ? [] : fresh.salt)
        let digests = previous.map(\.digests).flatMap { $0.salt == salt && $0.secrets == secrets ? $0 : nil }
            ?? SecretDigests(salt: salt, secrets: secrets)
        return StepSnapshot(session: session, key: key, record: record, now: now, fresh: fresh, digests: digests, sessionCode: sessionCode)
    }

    /// Stores what `decision` writes if the session and the user's record are still the ones
    /// `read` holds; returns whether it did. A decision that writes nothing needs no commit.
    ///
    /// The session's shard is held for one lookup of the session (its revision compared in
    /// place), the user's section inside it (one lookup, the record swapped in) and the session's
    /// write where the lookup found it; the values replaced are released after both locks.
    private func commit(_ decision: StepDecision, read: StepSnapshot) -> Bool {
        if case .none = decision.session, decision.user == nil { return true }
        guard let readSession = read.session else { return true }
        let sessionCode = read.sessionCode, sessionKey = GrantKey(sessionCode)
        if let committed = plantedStaleCommit(decision, read: read) { return committed }
        let replaced: (committed: Bool, session: AuthSession?, user: UserRecord?) = state.sessionShard(sessionCode).withLock { sessions in
            var replacedUser: UserRecord?
            let (committed, replacedSession) = sessions.commit(decision.session, code: sessionKey, ifRevision: readSession.revision) {
                guard let key = read.key else { return true }
                switch state.userShard(key).withLock({ $0.commit(decision.user, for: key, ifRevision: read.record?.revision) }) {
                case .stale: return false
                case .committed(let replaced):
                    replacedUser = replaced
                    return true
                }
            }
            return (committed, replacedSession, replacedUser)
        }
        return replaced.committed
    }

    /// Reads, decides and commits the step in one lock section: the flow's session shard, then
    /// its user's shard (a flow that other flows kept overtaking, ``optimisticTries``).
    private func decideUnderLocks(_ submission: StepSubmission, read: StepSnapshot, rules: StepRules, tenantId: String,
                                  tenant: TenantConfiguration?) -> StepDecision {
        let read = plantedSnapshotUnderLocks(read)
        let sessionCode = submission.sessionCode, sessionKey = GrantKey(sessionCode)
        return state.sessionShard(sessionCode).withLock { sessions in
            let session = sessions.session(sessionKey)
            guard let key = session?.currentStep(in: tenant, answers: submission.answers)?.key else {
                let decision = rules.decide(submission, on: read.with(session: session, key: nil, record: nil), tenantId: tenantId, tenant: tenant)
                sessions.apply(decision.session, code: sessionKey)
                return decision
            }
            return state.userShard(key).withLock { users in
                let decision = rules.decide(submission, on: read.with(session: session, key: key, record: users[key]), tenantId: tenantId, tenant: tenant)
                decision.write(sessionCode: sessionKey, sessions: &sessions, key: key, users: &users)
                return decision
            }
        }
    }

    /// The audit entries of `decision` and the page it answers with.
    private func respond(to decision: StepDecision, sessionCode: String, newCode: String, now: Date, tenantId: String, traceParent: String?) -> HTTPResponse {
        // A decision's audit entries: at the time it was decided at, numbered among its user's
        // decisions, and appended together, so a reader never sees half a decision.
        // A passed step or an issued code, the common decisions, is one entry appended without an
        // array.
        typealias DecisionEntry = (event: AuditEntry.Event, userId: String?, detail: String)
        func entry(_ session: AuthSession, _ entry: DecisionEntry) -> AuditEntry {
            AuditEntry(time: now, event: entry.event, tenant: tenantId, clientId: session.clientId, userId: decision.decidedUser ?? entry.userId,
                       traceParent: session.traceParent, detail: entry.detail, userDecision: decision.userDecision)
        }
        func recordDecision(_ session: AuthSession, _ only: DecisionEntry) {
            record(CollectionOfOne(entry(session, only)))
        }
        func recordDecision(_ session: AuthSession, _ first: DecisionEntry, _ second: DecisionEntry) {
            record([entry(session, first), entry(session, second)])
        }
        func rejected(_ session: AuthSession, _ code: String) -> String { "step \(session.step + 1) attempt \(session.attemptsOnStep): \(code)" }
        switch decision.outcome {
        case .page(let response):
            record(.flowFailed, tenant: tenantId, clientId: nil, userId: nil, traceParent: traceParent, "refused form submission")
            return response
        case .terminal(let session, let error, let description, let rejection, let userId):
            let failed = (event: AuditEntry.Event.flowFailed, userId: session.userId, detail: "\(error): \(description)")
            if let rejection {
                recordDecision(session, (.credentialsRejected, userId, rejected(session, rejection.code)), failed)
            } else {
                recordDecision(session, failed)
            }
            var parameters = [("error", error), ("error_description", description)]
            if let state = session.state { parameters.append(("state", state)) }
            return Page.redirect(to: session.redirectURI, responseMode: session.responseMode, parameters)
        case .locked(let session, let lockout, let evaluated, let userId):
            if evaluated {
                recordDecision(session, (.credentialsRejected, userId, rejected(session, "invalid_credentials")), (.accountLocked, userId, lockout.description))
            } else {
                recordDecision(session, (.lockedAttemptRefused, userId, "refused unevaluated: \(lockout.description)"))
            }
            var parameters = lockout.redirectParameters
            parameters.insert(("error_description", lockout.isPermanent
                ? "the account is locked permanently after too many wrong secrets"
                : "the account is locked after too many wrong secrets; try again after the lock lifts"), at: 1)
            if let state = session.state { parameters.append(("state", state)) }
            return Page.redirect(to: session.redirectURI, responseMode: session.responseMode, parameters)
        case .rejected(let session, let prepared, let rejection, let userId):
            recordDecision(session, (.credentialsRejected, userId, rejected(session, rejection.code)))
            return Page.form(prepared.forms[session.step], sessionCode: sessionCode, rejection: rejection)
        case .nextStep(let session, let prepared):
            recordDecision(session, (.stepServed, session.userId, "step \(session.step + 1) of \(prepared.configuration.steps.count)"))
            return Page.form(prepared.forms[session.step], sessionCode: sessionCode, rejection: nil)
        case .completed(let session, let client, let userId, _):
            let issued = (event: AuditEntry.Event.codeIssued, userId: Optional(userId), detail: "authorization code issued")
            switch client.purpose {
            case .enrollment:
                recordDecision(session, (.userActivated, userId, "activation code consumed"), issued)
            case .changePassword:
                recordDecision(session, (.passwordChanged, userId, "new password set after the current one was proven"), issued)
            case .forgotPassword:
                recordDecision(session, (.passwordReset, userId, "new password set; password-reset code consumed"), issued)
            case .login, .registration:
                recordDecision(session, issued)
            }
            var parameters = [("code", newCode), ("session_state", sessionCode)]
            if let state = session.state { parameters.append(("state", state)) }
            return Page.redirect(to: session.redirectURI, responseMode: session.responseMode, parameters)
        }
    }

    /// `requested` as registered among `uris` (the registered string itself), or `nil`.
    static func registered(_ requested: String, in uris: [String]) -> String? {
        for index in 0..<uris.count where uris[index] == requested { return uris[index] }
        return nil
    }

    /// Whether an AST client id names an activated device: it has a character other than `0` and `-`.
    static func namesADevice(_ astClientId: String) -> Bool {
        for byte in astClientId.utf8 where byte != UInt8(ascii: "0") && byte != UInt8(ascii: "-") { return true }
        return false
    }

    /// The description of the `reset_code_expired` error, at the step and at completion.
    static let resetCodeExpired = "the password-reset code has expired; ask for a new one"
}

extension IdpServer {
    /// A random (version 4) UUID in lower case, from ``SecureRandom`` (Foundation's `UUID()` reads
    /// `/dev/urandom` at every call).
    static func randomUUID() -> String {
        var generator = SecureRandom.Generator()
        var words = (generator.next(), generator.next())
        return withUnsafeMutableBytes(of: &words) { bytes in
            bytes[6] = bytes[6] & 0x0F | 0x40
            bytes[8] = bytes[8] & 0x3F | 0x80
            return String(unsafeUninitializedCapacity: 36) { text in
                var index = 0
                func append(_ character: UInt8) {
                    text[index] = character
                    index += 1
                }
                for position in 0..<bytes.count {
                    let byte = bytes[position]
                    if position == 4 || position == 6 || position == 8 || position == 10 { append(UInt8(ascii: "-")) }
                    append(Hex.digit(byte >> 4))
                    append(Hex.digit(byte & 0x0F))
                }
                return index
            }
        }
    }
}

/// A malformed or repeated request parameter.
struct ParameterProblem: Error {
    let message: String
}

/// An authorization request that passed validation.
private struct ValidAuthorization {
    /// The tenant's client the request is for.
    let prepared: PreparedClient
    /// What the request fixes for the whole of its flow.
    let request: AuthRequest
}

/// An authorization request refused: the page or the redirect it is answered with, and what its
/// audit entry says.
private struct AuthorizationRefusal: Error {
    let response: HTTPResponse
    /// The client the request named; `nil` when its tenant is unknown.
    let clientId: String?
    /// Why it was refused.
    let reason: String
}
