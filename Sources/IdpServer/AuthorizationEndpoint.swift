import Foundation
import IdpPrimitives
import IdpWireFormats

extension IdpServer {
    /// The all-zero AST client id of a device that has no user yet (`IdpWire/unassignedAstClientId`).
    package static var unassignedAstClientId: String { IdpWire.unassignedAstClientId }

    /// Decodes form or query parameters; a parameter given twice is an error (RFC 6749 §3.1).
    static func uniqueParameters(_ text: String) -> Result<FormParameters, ParameterProblem> {
        let pairs: [(name: String, value: String)]
        do {
            pairs = try FormURLEncoding.decode(text)
        } catch {
            return .failure(ParameterProblem(message: "malformed parameters: \(error)"))
        }
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
        switch Self.uniqueParameters(String(request.query)) {
        case .success(let decoded): params = decoded
        case .failure(let problem): return Page.errorResponse(status: 400, code: "invalid_request", problem.message)
        }
        let now = self.now
        let sessionCode = SecureRandom.token(byteCount: 24)
        let astClientData = request.headers["X-KOBIL-ASTCLIENTDATA"]
        let astClientId = request.headers["X-KOBIL-ASTCLIENTID"]
        let lifetime = configuration.authSessionLifetime.timeInterval

        enum Decision {
            case refuse(HTTPResponse, clientId: String?, reason: String)
            case serve(PreparedClient, loginHint: String?)
        }
        let sessions = state.sessionShard(sessionCode)
        let decision: Decision = {
            guard let tenant = state.tenant(tenantId, stripe: ShardRouting.route(of: sessionCode)) else {
                return .refuse(Page.errorResponse(status: 404, code: IdpWire.FlowError.unknownTenant, "tenant '\(tenantId)' does not exist"), clientId: nil, reason: "unknown tenant")
            }
            guard let clientId = params["client_id"], let prepared = tenant.clients[clientId] else {
                let named = params["client_id"] ?? ""
                return .refuse(Page.errorResponse(status: 400, code: IdpWire.FlowError.unknownClient, "client '\(named)' is not known to tenant '\(tenantId)'"), clientId: named, reason: "unknown client")
            }
            let client = prepared.configuration
            guard let redirectURI = params["redirect_uri"], client.redirectURIs.contains(redirectURI) else {
                return .refuse(Page.errorResponse(status: 400, code: "invalid_redirect_uri", "redirect_uri '\(params["redirect_uri"] ?? "")' is not registered for client '\(clientId)'"), clientId: clientId, reason: "invalid redirect_uri")
            }
            // From here on the redirect URI is trusted, so errors go back to it (RFC 6749 §4.1.2.1).
            let responseMode = params["response_mode"] ?? "fragment"
            func refuse(_ error: String, _ description: String) -> Decision {
                var parameters = [("error", error), ("error_description", description)]
                if let state = params["state"] { parameters.append(("state", state)) }
                let mode = responseMode == "query" ? "query" : "fragment"
                return .refuse(Page.redirect(to: redirectURI, responseMode: mode, parameters), clientId: clientId, reason: description)
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
            guard let astClientData, !astClientData.isEmpty, astClientData.utf8.count <= 4096 else {
                return refuse("invalid_request", "the X-KOBIL-ASTCLIENTDATA header is missing or too long")
            }
            // The web-view header rule (000_*.txt): existing users and logins send the device's AST
            // client id with the client data; a new user has none yet.
            if client.astClientIdHeader == .required {
                guard let astClientId, astClientId.contains(where: { $0 != "0" && $0 != "-" }), astClientId.utf8.count <= 256 else {
                    return refuse("invalid_request", "client '\(clientId)' needs the X-KOBIL-ASTCLIENTID header of an activated device")
                }
            }
            let loginHint = params["login_hint"]
            if let loginHint {
                // Users are never removed nor made pending again, so what this read finds still
                // holds when the session is stored below.
                let key = UserKey(tenant: tenantId, user: loginHint)
                let status = state.userShard(key).withLock { $0.users[key]?.status }
                if status == nil || (client.purpose.requiresActiveUser && status != .active) {
                    return refuse(IdpWire.FlowError.userNotEnrolled, "user '\(loginHint)' is not enrolled in tenant '\(tenantId)'")
                }
            }
            let session = AuthSession(
                tenant: tenantId, clientId: clientId, redirectURI: redirectURI, responseMode: responseMode,
                state: params["state"], nonce: params["nonce"], codeChallenge: challenge,
                codeChallengeMethod: PKCE.methodS256, loginHint: loginHint,
                astClientId: astClientId.flatMap { $0 == Self.unassignedAstClientId ? nil : $0 },
                traceParent: traceParent, expiresAt: now.addingTimeInterval(lifetime)
            )
            sessions.withLock { shard in
                shard.pruneSome(now: now)
                shard.open(session, code: sessionCode)
            }
            return .serve(prepared, loginHint: loginHint)
        }()
        switch decision {
        case .refuse(let response, let clientId, let reason):
            record(.authorizationRefused, tenant: tenantId, clientId: clientId, userId: nil, traceParent: traceParent, reason)
            return response
        case .serve(let prepared, let loginHint):
            let client = prepared.configuration
            let restarted = request.headers["tracestate"]?.contains(TraceParent.restartedTraceState) == true
            record(.authorizationRequested, tenant: tenantId, clientId: client.clientId, userId: loginHint, traceParent: traceParent,
                   "step 1 of \(client.steps.count)" + (restarted ? "; new trace: the client could not parse its caller's traceparent" : ""))
            return Page.form(prepared.forms[0], sessionCode: sessionCode, rejection: nil)
        }
    }

    /// `POST …/login-actions/authenticate`: checks one step's answers.
    func authenticate(tenant tenantId: String, request: HTTPRequest, traceParent: String?) -> HTTPResponse {
        let query: FormParameters
        switch Self.uniqueParameters(String(request.query)) {
        case .success(let decoded): query = decoded
        case .failure(let problem): return Page.errorResponse(status: 400, code: "invalid_request", problem.message)
        }
        guard let bodyText = String(validating: request.body, as: UTF8.self) else {
            return Page.errorResponse(status: 400, code: "invalid_request", "the form body is not UTF-8")
        }
        let answers: FormParameters
        switch Self.uniqueParameters(bodyText) {
        case .success(let decoded): answers = decoded
        case .failure(let problem): return Page.errorResponse(status: 400, code: "invalid_request", problem.message)
        }
        guard let sessionCode = query["session_code"], let execution = query["execution"].flatMap(Int.init) else {
            return Page.errorResponse(status: 400, code: "invalid_request", "session_code and execution are required")
        }
        let tenant = state.tenant(tenantId, stripe: ShardRouting.route(of: sessionCode))
        let prepared = prepareStep(sessionCode: sessionCode, tenant: tenant, answers: answers)
        let now = prepared.now
        let newCode = prepared.newCode
        // A controlled stress run may decide another request first.
        configuration.controller?.pause(at: Seam("idp.step", trace: TraceParent.seamTrace(traceParent)))

        // The session's shard, then (inside it) the user's: the lock order of `ServerState`.
        let outcome: StepOutcome = state.sessionShard(sessionCode).withLock { sessions in
            guard let session = sessions.sessions[sessionCode], session.tenant == tenantId else {
                return .page(Page.errorResponse(status: 400, code: IdpWire.FlowError.invalidSession, "the login session is unknown or has ended"), audit: nil)
            }
            guard session.expiresAt > now else {
                sessions.sessions[sessionCode] = nil
                return .page(Page.errorResponse(status: 400, code: IdpWire.FlowError.sessionExpired, "the login session has expired"), audit: nil)
            }
            guard let tenant, let client = tenant.clients[session.clientId] else {
                return .page(Page.errorResponse(status: 404, code: IdpWire.FlowError.unknownTenant, "tenant '\(tenantId)' does not exist"), audit: nil)
            }
            guard execution == session.step + 1 else {
                return .page(Page.errorResponse(status: 400, code: "stale_form", "the form of step \(execution) was submitted while the flow is at step \(session.step + 1)"), audit: nil)
            }
            // Every user this step can touch is this one (``AuthSession/userKey(of:answers:)``).
            let key = session.userKey(of: client.configuration.steps[session.step], answers: answers)
            return state.userShard(key).withLock { users in
                decideStep(session: session, sessionCode: sessionCode, sessions: &sessions, users: &users, key: key, tenant: tenant,
                           client: client, answers: answers, prepared: prepared)
            }
        }
        // The code was not handed out yet, so storing it after the locks are released leaves no
        // window in which it could be presented and not found.
        if case .completed(_, _, _, let code) = outcome {
            state.grantShard(newCode).withLock { grants in
                grants.pruneSome(now: now)
                grants.addCode(GrantKey(newCode), code)
            }
        }
        // A decision's audit entries: at the time it was decided at, numbered among its user's
        // decisions, and appended together, so a reader never sees half a decision.
        // A passed step or an issued code, the common decisions, is one entry appended without an
        // array.
        typealias DecisionEntry = (event: AuditEntry.Event, userId: String?, detail: String)
        func entry(_ session: AuthSession, _ entry: DecisionEntry) -> AuditEntry {
            AuditEntry(time: now, event: entry.event, tenant: tenantId, clientId: session.clientId, userId: session.decidedUser ?? entry.userId,
                       traceParent: session.traceParent, detail: entry.detail, userDecision: session.userDecision)
        }
        func recordDecision(_ session: AuthSession, _ only: DecisionEntry) {
            record(CollectionOfOne(entry(session, only)))
        }
        func recordDecision(_ session: AuthSession, _ first: DecisionEntry, _ second: DecisionEntry) {
            record([entry(session, first), entry(session, second)])
        }
        func rejected(_ session: AuthSession, _ code: String) -> String { "step \(session.step + 1) attempt \(session.attemptsOnStep): \(code)" }
        switch outcome {
        case .page(let response, _):
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

    /// Decides one step with the flow's session shard and the user's shard locked: check locked,
    /// evaluate, count and lock, or apply the flow's effects. Returns the code to store on
    /// completion; everything else it decides is written here.
    private func decideStep(
        session: AuthSession, sessionCode: String, sessions: inout SessionShard, users: inout UserShard, key: UserKey,
        tenant: TenantConfiguration, client preparedClient: PreparedClient, answers: FormParameters, prepared step: PreparedStep
    ) -> StepOutcome {
        let now = step.now, newSalt = step.newSalt
        var session = session
        // A planted bug decides the lock on a copy of the user's lock state read before this
        // lock was taken, and writes it back.
        if let stale = step.staleLock, stale.key == key, users.users[key] != nil { users.users[key]!.lockState = stale.state }
        // Numbered under the user's shard lock: the audit entries of this decision carry it.
        session.userDecision = users.users[key]?.nextDecision()
        session.decidedUser = session.userDecision == nil ? nil : key.user
        let client = preparedClient.configuration
        let tenantId = tenant.id
        let fields = client.steps[session.step]
        var evaluation = StepEvaluation(session: session, candidate: key.user, record: users.users[key], client: client, now: now,
                                        maximumFieldLength: configuration.maximumFieldLength, minimumPasswordLength: configuration.minimumPasswordLength,
                                        digests: step.digests, newSalt: newSalt)
        // check-locked, evaluate, count and lock all happen here, under the user's shard lock:
        // parallel guesses for one user are decided one after the other.
        let verdict = evaluation.evaluate(fields: fields, answers: answers)
        switch verdict {
        case .terminal(let error, let description):
            sessions.sessions[sessionCode] = nil
            return .terminal(session, error: error, description: description)
        case .locked(let lockout):
            // Refused before evaluation: nothing is counted.
            sessions.sessions[sessionCode] = nil
            return .locked(session, lockout, evaluated: false, userId: evaluation.identifiedUser)
        case .reject(let rejection):
            session.attemptsOnStep += 1
            if rejection.countsAgainstUser, let userId = evaluation.identifiedUser {
                var policy = configuration.lockout
                if configuration.plantedBug.isOn(.idpLocksOneGuessLate), policy.maximumFailures > 0 { policy.maximumFailures += 1 }
                // In place: one entry of this shard changes, nothing is copied.
                let lock = userId == key.user ? users.users[key]?.recordFailure(at: now, policy: policy) : nil
                if let lock {
                    sessions.sessions[sessionCode] = nil
                    return .locked(session, lock, evaluated: true, userId: userId)
                }
            }
            if session.attemptsOnStep >= client.maxAttempts {
                sessions.sessions[sessionCode] = nil
                return .terminal(session, error: IdpWire.FlowError.tooManyAttempts,
                                 description: "step \(session.step + 1) was answered wrongly \(session.attemptsOnStep) times; the flow is ended",
                                 rejection: rejection, userId: evaluation.identifiedUser)
            }
            sessions.sessions[sessionCode] = session
            return .rejected(session, preparedClient, rejection, userId: evaluation.identifiedUser)
        case .pass:
            session = evaluation.session
            session.step += 1
            session.attemptsOnStep = 0
            if session.step < client.steps.count {
                sessions.sessions[sessionCode] = session
                return .nextStep(session, preparedClient)
            }
            // Every step passed: apply the flow's effects at once, then issue the code.
            sessions.sessions[sessionCode] = nil
            let userId = session.userId!
            guard userId == key.user else {
                return .terminal(session, error: "server_error", description: "the flow's user changed during the flow")
            }
            if client.purpose == .registration {
                // Checked again here, under the same lock as the insert: two registrations
                // of one username may both have passed the form.
                guard users.users[key] == nil else {
                    return .terminal(session, error: "username_taken", description: "username '\(userId)' was registered meanwhile")
                }
                users.users[key] = UserRecord(id: userId, salt: session.pendingPassword?.salt ?? newSalt, attributes: [:])
            }
            var user = users.users[key]!
            let astClientId: String
            switch client.purpose {
            case .enrollment, .registration:
                // Re-checked here, under the same lock as the write: another flow with the same
                // activation code may have completed since this flow's step passed.
                if let code = session.pendingActivationCode {
                    guard let expiry = user.activationCodes[code] else {
                        return .terminal(session, error: "activation_code_used", description: "the activation code was used by another flow meanwhile")
                    }
                    guard expiry > now else {
                        return .terminal(session, error: IdpWire.FlowError.activationCodeExpired, description: "the activation code has expired; ask for a new one")
                    }
                }
                guard let password = session.pendingPassword?.digest(forSalt: user.salt) else {
                    return .terminal(session, error: "server_error", description: "the flow set no password")
                }
                user.status = .active
                user.passwordHash = password
                if let code = session.pendingActivationCode { user.activationCodes[code] = nil }
                // A device that is bound already (it sent its X-KOBIL-ASTCLIENTID) keeps its
                // binding: the new user shares it. A new device gets a new one.
                astClientId = session.astClientId ?? step.newAstClientId
                if !user.astClientIds.contains(astClientId) { user.astClientIds.append(astClientId) }
            case .login:
                astClientId = session.astClientId ?? user.astClientIds.last ?? Self.unassignedAstClientId
            case .changePassword, .forgotPassword:
                // Re-checked here, under the same lock as the write: another flow may have
                // changed the password or spent the code since this flow's proof passed.
                if client.purpose == .changePassword, user.passwordHash != session.provenPasswordHash {
                    return .terminal(session, error: "password_changed", description: "the password was changed by another flow meanwhile; start again")
                }
                if client.purpose == .forgotPassword {
                    guard let code = session.pendingResetCode, let expiry = user.passwordResetCodes[code] else {
                        return .terminal(session, error: "reset_code_used", description: "the password-reset code was used by another flow meanwhile")
                    }
                    guard expiry > now else { return .terminal(session, error: IdpWire.FlowError.resetCodeExpired, description: Self.resetCodeExpired) }
                    user.passwordResetCodes[code] = nil
                }
                guard let password = session.pendingPassword?.digest(forSalt: user.salt) else {
                    return .terminal(session, error: "server_error", description: "the flow set no password")
                }
                user.passwordHash = password
                astClientId = session.astClientId ?? user.astClientIds.last ?? Self.unassignedAstClientId
            }
            user.recordSuccess()
            users.users[key] = user
            let codeUser = configuration.plantedBug.isOn(.idpIssuesCodeForLoginHint) && client.purpose == .enrollment ? session.loginHint ?? userId : userId
            let code = CodeRecord(
                tenant: tenantId, clientId: client.clientId, userId: codeUser, redirectURI: session.redirectURI,
                codeChallenge: session.codeChallenge, codeChallengeMethod: session.codeChallengeMethod,
                astClientId: astClientId, expiresAt: now.addingTimeInterval(configuration.authorizationCodeLifetime.timeInterval)
            )
            return .completed(session, client, userId: codeUser, code: code)
        }
    }
}

extension IdpServer {
    /// What a step's decision needs that can be made before any lock is taken: the values a
    /// completion issues, and the salted digests of the step's secret answers. The user the step
    /// names, and that user's salt, are read first, each in a lock section of its own: sessions
    /// and users are never removed and a salt never changes, so the decision, under both locks,
    /// finds the same ones (and computes a digest itself in the one case it could not foresee).
    private func prepareStep(sessionCode: String, tenant: TenantConfiguration?, answers: FormParameters) -> PreparedStep {
        let newSalt = SecureRandom.bytes(16)
        var salt = newSalt
        var secrets: [String] = []
        var staleLock: (key: UserKey, state: UserRecord.LockState)?
        if let session = state.sessionShard(sessionCode).withLock({ $0.sessions[sessionCode] }),
           let client = tenant?.clients[session.clientId], session.step < client.configuration.steps.count {
            let fields = client.configuration.steps[session.step]
            let key = session.userKey(of: fields, answers: answers)
            let user = state.userShard(key).withLock { $0.users[key].map { (salt: $0.salt, lock: $0.lockState) } }
            if let user { salt = user.salt }
            secrets = fields.filter(\.isSecret).compactMap { answers[$0.id] }
            // A planted bug decides the lock on this copy, read before the decision's lock.
            if configuration.plantedBug.isOn(.idpCountsFailureOnStaleCopy), let user { staleLock = (key, user.lock) }
        }
        return PreparedStep(now: now, newCode: SecureRandom.token(byteCount: 32), newAstClientId: Self.randomUUID(), newSalt: newSalt,
                            digests: SecretDigests(salt: salt, secrets: secrets), staleLock: staleLock)
    }

    /// The description of the `reset_code_expired` error, at the step and at completion.
    static let resetCodeExpired = "the password-reset code has expired; ask for a new one"
}

extension IdpServer {
    /// A random (version 4) UUID in lower case, from ``SecureRandom``: Foundation's `UUID()` opened
    /// and read `/dev/urandom` on every call, a sixteenth of a login step.
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
                for (position, byte) in bytes.enumerated() {
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

private enum StepOutcome {
    case page(HTTPResponse, audit: String?)
    /// The flow ends; `rejection`: the wrong answer that ended it (its last attempt), audited
    /// as rejected before the flow's end, since it may have counted towards a lock.
    case terminal(AuthSession, error: String, description: String, rejection: Rejection? = nil, userId: String? = nil)
    case rejected(AuthSession, PreparedClient, Rejection, userId: String?)
    /// The user is locked: by this answer (`evaluated`) or already, before evaluation.
    case locked(AuthSession, LockoutInformation, evaluated: Bool, userId: String?)
    case nextStep(AuthSession, PreparedClient)
    /// Every step passed; `code` is to be stored in its grant shard.
    case completed(AuthSession, IdpClientConfiguration, userId: String, code: CodeRecord)
}

extension AuthSession {
    /// The user a step with `fields` concerns, the only one it can touch: named by an earlier
    /// step or by this step's username field. A step without either is refused before any user
    /// is looked at; its key names nobody, as no user id is empty.
    func userKey(of fields: [IdpFormField], answers: FormParameters) -> UserKey {
        UserKey(tenant: tenant, user: userId ?? fields.first { $0.role == .username }.flatMap { answers[$0.id] } ?? "")
    }
}

/// What a step's decision needs that is made before its locks are taken (see
/// `IdpServer.prepareStep`).
private struct PreparedStep {
    let now: Date
    /// The code a completion issues; its first character picks its grant shard.
    let newCode: String
    /// The AST client id a new device gets.
    let newAstClientId: String
    /// The salt a registered user gets.
    let newSalt: [UInt8]
    /// The salted digests of the step's secret answers.
    let digests: SecretDigests
    /// ``PlantedBug/idpCountsFailureOnStaleCopy``: the user's lock state read before the lock.
    let staleLock: (key: UserKey, state: UserRecord.LockState)?
}

/// The salted digests of a step's secret answers, computed before any lock is taken: a SHA-256
/// per secret is work no lock should be held for.
struct SecretDigests {
    /// The salt the digests were made with: the named user's, or a new user's.
    let salt: [UInt8]
    private let digests: [String: [UInt8]]

    init(salt: [UInt8], secrets: [String]) {
        self.salt = salt
        var digests: [String: [UInt8]] = [:]
        for secret in secrets where digests[secret] == nil { digests[secret] = UserRecord.hash(secret, salt: salt) }
        self.digests = digests
    }

    /// The digest of `secret` under `salt`: the one made beforehand, or (a salt or a secret not
    /// foreseen) made now.
    func digest(of secret: String, salt: [UInt8]) -> [UInt8] {
        if salt == self.salt, let digest = digests[secret] { return digest }
        return UserRecord.hash(secret, salt: salt)
    }
}

/// Checks one step's answers against the tenant's users. Pure: it changes only its own copy of the
/// session, which the caller commits when the step passes.
private struct StepEvaluation {
    enum Verdict {
        case pass
        case reject(Rejection)
        case terminal(error: String, description: String)
        /// The identified user is locked; the secrets were not looked at.
        case locked(LockoutInformation)
    }

    var session: AuthSession
    /// The one user the step can be about (see `decideStep`), and their record if they exist.
    let candidate: String
    let record: UserRecord?
    let client: IdpClientConfiguration
    let now: Date
    let maximumFieldLength: Int
    let minimumPasswordLength: Int
    let digests: SecretDigests
    /// The salt a user registered by this flow gets.
    let newSalt: [UInt8]
    /// The user the answers are about, once known (for counting wrong answers).
    var identifiedUser: String?

    init(session: AuthSession, candidate: String, record: UserRecord?, client: IdpClientConfiguration, now: Date,
         maximumFieldLength: Int, minimumPasswordLength: Int, digests: SecretDigests, newSalt: [UInt8]) {
        self.session = session
        self.candidate = candidate
        self.record = record
        self.client = client
        self.now = now
        self.maximumFieldLength = maximumFieldLength
        self.minimumPasswordLength = minimumPasswordLength
        self.digests = digests
        self.newSalt = newSalt
        identifiedUser = session.userId
    }

    mutating func evaluate(fields: [IdpFormField], answers: FormParameters) -> Verdict {
        for field in fields {
            guard let value = answers[field.id], !value.isEmpty else {
                return .reject(Rejection(code: "missing_field", message: "Please fill in \(field.label).", countsAgainstUser: false))
            }
            guard value.utf8.count <= maximumFieldLength else {
                return .reject(Rejection(code: "field_too_long", message: "\(field.label) is too long.", countsAgainstUser: false))
            }
        }
        let asksSecret = fields.contains { $0.role == .password || $0.role == .currentPassword }
        // The username first: every other answer is checked against that user — unless that user
        // is locked, which is decided before any secret is looked at. A new password last: whether
        // it differs from the current one is told only once the current one is proven.
        func rank(_ field: IdpFormField) -> Int {
            switch field.role {
            case .username: 0
            case .newPassword: 2
            default: 1
            }
        }
        var lockChecked = false
        for field in fields.sorted(by: { rank($0) < rank($1) }) {
            let value = answers[field.id]!
            if field.role != .username, !lockChecked {
                lockChecked = true
                if let lockout = currentUser?.lockout(at: now) { return .locked(lockout) }
            }
            switch field.role {
            case .username:
                let unknown = Rejection(code: "invalid_user", message: asksSecret ? "Invalid username or password." : "Invalid username.", countsAgainstUser: false)
                // At enrollment (add user) the hint names the user already on the device, not the
                // one enrolling.
                if client.purpose.requiresActiveUser, let hint = session.loginHint, hint != value {
                    return .reject(Rejection(code: "username_mismatch", message: "This login is for another user.", countsAgainstUser: false))
                }
                if client.purpose == .registration {
                    guard user(value) == nil else {
                        return .reject(Rejection(code: "username_taken", message: "This username is taken; choose another.", countsAgainstUser: false))
                    }
                    session.userId = value
                    continue
                }
                guard let user = user(value) else { return .reject(unknown) }
                switch client.purpose {
                case .login, .changePassword:
                    guard user.status == .active else { return .reject(unknown) }
                case .forgotPassword:
                    guard user.status == .active else { return .reject(unknown) }
                    guard !user.passwordResetCodes.isEmpty else {
                        return .reject(Rejection(code: "reset_not_pending", message: "There is no pending password reset for this user.", countsAgainstUser: false))
                    }
                case .enrollment:
                    guard !user.activationCodes.isEmpty else {
                        return .reject(Rejection(code: "activation_not_pending", message: "There is no pending activation for this user.", countsAgainstUser: false))
                    }
                case .registration:
                    break   // handled above: the user does not exist yet
                }
                session.userId = value
                identifiedUser = value
            case .activationCode:
                guard let user = currentUser else { return .terminal(error: "server_error", description: "no user identified before the activation code") }
                guard let expiry = user.activationCodes[value] else {
                    return .reject(Rejection(code: "invalid_activation_code", message: "The activation code is not valid.", countsAgainstUser: true))
                }
                guard expiry > now else {
                    return .terminal(error: IdpWire.FlowError.activationCodeExpired, description: "the activation code has expired; ask for a new one")
                }
                session.pendingActivationCode = value
            case .passwordResetCode:
                guard let user = currentUser else { return .terminal(error: "server_error", description: "no user identified before the password-reset code") }
                guard let expiry = user.passwordResetCodes[value] else {
                    return .reject(Rejection(code: "invalid_reset_code", message: "The password-reset code is not valid.", countsAgainstUser: true))
                }
                guard expiry > now else { return .terminal(error: IdpWire.FlowError.resetCodeExpired, description: IdpServer.resetCodeExpired) }
                session.pendingResetCode = value
            case .newPassword:
                guard value.count >= minimumPasswordLength else {
                    return .reject(Rejection(code: "password_policy", message: "The password must have at least \(minimumPasswordLength) characters.", countsAgainstUser: false))
                }
                if client.purpose == .changePassword {
                    guard session.provenPasswordHash != nil, let user = currentUser else {
                        return .terminal(error: "server_error", description: "the new password was asked before the current one was proven")
                    }
                    guard !user.passwordMatches(digest: digests.digest(of: value, salt: user.salt)) else {
                        return .reject(Rejection(code: "password_reuse", message: "The new password must differ from the current one.", countsAgainstUser: false))
                    }
                }
                // Kept as its digest under the salt the user has (or, registering, will get).
                let salt = currentUser?.salt ?? session.pendingPassword?.salt ?? newSalt
                session.pendingPassword = PendingPassword(digest: digests.digest(of: value, salt: salt), salt: salt)
            case .password, .currentPassword:
                guard let user = currentUser, user.passwordMatches(digest: digests.digest(of: value, salt: user.salt)) else {
                    return .reject(Rejection(code: "invalid_credentials", message: "Invalid username or password.", countsAgainstUser: true))
                }
                if field.role == .currentPassword { session.provenPasswordHash = user.passwordHash }
            case .attribute(let key):
                guard let user = currentUser, let expected = user.attributes[key], ConstantTime.equals(expected, value) else {
                    return .reject(Rejection(code: "invalid_credentials", message: "Invalid \(field.label).", countsAgainstUser: true))
                }
            }
        }
        return .pass
    }

    private var currentUser: UserRecord? { session.userId.flatMap(user) }

    /// The record of `userId`: the candidate's; any other user is not looked up (the caller
    /// chose the candidate from the same answers, so this does not happen).
    private func user(_ userId: String) -> UserRecord? { userId == candidate ? record : nil }
}
