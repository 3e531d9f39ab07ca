import Foundation
import IdpPrimitives
import IdpWireFormats

/// One `authenticate` request, parsed: which flow, which step its form was for, and the answers.
struct StepSubmission {
    let sessionCode: String
    /// The step the form was served for, from 1 (the `execution` query parameter).
    let execution: Int
    let answers: FormParameters

    /// A request that is not a step's submission, and the page that says why.
    struct Refusal: Error {
        let response: HTTPResponse
    }

    /// The submission in `request`, or the page that refuses it.
    static func parse(_ request: HTTPRequest) -> Result<StepSubmission, Refusal> {
        let query: FormParameters
        switch IdpServer.uniqueParameters(request.query) {
        case .success(let decoded): query = decoded
        case .failure(let problem): return .failure(Refusal(response: Page.errorResponse(status: 400, code: "invalid_request", problem.message)))
        }
        let answers: FormParameters
        switch IdpServer.uniqueParameters(body: request.body) {
        case nil:
            return .failure(Refusal(response: Page.errorResponse(status: 400, code: "invalid_request", "the form body is not UTF-8")))
        case .success(let decoded)?: answers = decoded
        case .failure(let problem)?: return .failure(Refusal(response: Page.errorResponse(status: 400, code: "invalid_request", problem.message)))
        }
        guard let sessionCode = query["session_code"], let execution = query["execution"].flatMap(Int.init) else {
            return .failure(Refusal(response: Page.errorResponse(status: 400, code: "invalid_request", "session_code and execution are required")))
        }
        return .success(StepSubmission(sessionCode: sessionCode, execution: execution, answers: answers))
    }
}

/// What a step is decided on: copies of the flow's session and of the one user the step can
/// touch, each read in a short lock section of its own, and the values made before any lock
/// (the salted digests of the step's secrets, the code and ids a completion issues).
struct StepSnapshot {
    /// The flow's session; `nil` if it is unknown or has ended.
    let session: AuthSession?
    /// The user the step concerns (``AuthSession/userKey(of:answers:)``); `nil` without a session
    /// whose step exists.
    let key: UserKey?
    /// That user's record; `nil` if there is no such user.
    let record: UserRecord?
    let now: Date
    /// The random values a decision may issue, made at their first use.
    let fresh: FreshValues
    /// The salted digests of the step's secret answers.
    let digests: SecretDigests

    /// The flow's session code.
    let sessionCode: String

    /// This snapshot with the session and the user read again (under their locks).
    func with(session: AuthSession?, key: UserKey?, record: UserRecord?) -> StepSnapshot {
        StepSnapshot(session: session, key: key, record: record, now: now, fresh: fresh, digests: digests, sessionCode: sessionCode)
    }

}

/// The random values a step's decision may issue (a registered user's salt, a new device's AST
/// client id), each made at its first use: most steps issue neither and make neither. One request
/// uses it, on its own thread, and keeps it over its retries; a decision made under the locks
/// has both made first (``makeAll()``), so no random value is drawn under a lock.
final class FreshValues {
    /// The salt a user registered by this flow gets.
    private(set) lazy var salt: [UInt8] = SecureRandom.bytes(16)
    /// The AST client id a new device gets.
    private(set) lazy var astClientId: String = IdpServer.randomUUID()

    /// Makes every value that is not made yet.
    func makeAll() {
        _ = salt
        _ = astClientId
    }
}

/// What one step decided, made from a ``StepSnapshot`` without any lock: the writes to commit and
/// what the flow is told.
struct StepDecision {
    /// What becomes of the flow's session.
    enum SessionWrite {
        /// Nothing is written (the session is unknown, or the form was stale).
        case none
        /// The flow goes on at this stage.
        case store(AuthSession)
        /// The flow ended.
        case remove
    }

    var session: SessionWrite
    /// The user's record to store, or `nil` to write none.
    var user: UserRecord?
    var outcome: StepOutcome
    /// The number of this decision among its user's (``UserRecord/decisions``), and that user;
    /// `nil` when the step named no existing user.
    var userDecision: UInt64?
    var decidedUser: String?

    /// A decision that writes nothing.
    static func page(_ response: HTTPResponse) -> StepDecision {
        StepDecision(session: .none, outcome: .page(response))
    }

    /// Writes the decision: the session `sessionCode`'s stage, and the record of the user `key`
    /// if it changed. The caller holds both shards' locks and has decided the copies are current.
    func write(sessionCode: GrantKey, sessions: inout SessionShard, key: UserKey, users: inout UserShard) {
        sessions.apply(session, code: sessionCode)
        if let user { users.store(user, for: key) }
    }
}

/// What a flow is told about its step.
enum StepOutcome {
    case page(HTTPResponse)
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

/// The server's rules for a step, and the decision they make on a snapshot: a pure function, so
/// the same decision is made on a copy outside any lock or, after conflicts, under the locks.
struct StepRules {
    let maximumFieldLength: Int
    let minimumPasswordLength: Int
    let lockout: LockoutPolicy
    let codeLifetime: TimeInterval
    #if DEBUG
    /// The endpoint's planted bug.
    let planted: PlantedBugSwitch
    #endif

    init(_ configuration: IdpServer.Configuration) {
        maximumFieldLength = configuration.maximumFieldLength
        minimumPasswordLength = configuration.minimumPasswordLength
        lockout = configuration.lockout
        codeLifetime = configuration.authorizationCodeLifetime.timeInterval
        #if DEBUG
        planted = configuration.plantedBug
        #endif
    }

    /// The decision on `submission`, made on `snapshot`.
    func decide(_ submission: StepSubmission, on snapshot: StepSnapshot, tenantId: String, tenant: TenantConfiguration?) -> StepDecision {
        guard let session = snapshot.session, session.tenant == tenantId else {
            return .page(Page.errorResponse(status: 400, code: IdpWire.FlowError.invalidSession, "the login session is unknown or has ended"))
        }
        guard session.expiresAt > snapshot.now else {
            var expired = StepDecision.page(Page.errorResponse(status: 400, code: IdpWire.FlowError.sessionExpired, "the login session has expired"))
            expired.session = .remove
            return expired
        }
        guard let tenant, let client = tenant.clients[session.clientId] else {
            return .page(Page.errorResponse(status: 404, code: IdpWire.FlowError.unknownTenant, "tenant '\(tenantId)' does not exist"))
        }
        guard submission.execution == session.step + 1, let key = snapshot.key else {
            return .page(Page.errorResponse(status: 400, code: "stale_form",
                                            "the form of step \(submission.execution) was submitted while the flow is at step \(session.step + 1)"))
        }
        return decideAnswers(session: session, key: key, snapshot: snapshot, tenant: tenant, client: client, answers: submission.answers)
    }

    /// Checks the step's answers: check locked, evaluate, count and lock, or complete the flow.
    private func decideAnswers(session: AuthSession, key: UserKey, snapshot: StepSnapshot, tenant: TenantConfiguration,
                               client preparedClient: PreparedClient, answers: FormParameters) -> StepDecision {
        var record = snapshot.record
        let userDecision = record?.nextDecision()
        func decision(_ write: StepDecision.SessionWrite, _ outcome: StepOutcome) -> StepDecision {
            StepDecision(session: write, user: record, outcome: outcome, userDecision: userDecision, decidedUser: userDecision == nil ? nil : key.user)
        }
        let client = preparedClient.configuration
        var session = session
        var evaluation = StepEvaluation(session: session, candidate: key.user, record: record, client: client, now: snapshot.now,
                                        maximumFieldLength: maximumFieldLength, minimumPasswordLength: minimumPasswordLength,
                                        digests: snapshot.digests, fresh: snapshot.fresh)
        switch evaluation.evaluate(fields: client.steps[session.step], answers: answers) {
        case .terminal(let error, let description):
            return decision(.remove, .terminal(session, error: error, description: description))
        case .locked(let lockout):
            // Refused before evaluation: nothing is counted.
            return decision(.remove, .locked(session, lockout, evaluated: false, userId: evaluation.identifiedUser))
        case .reject(let rejection):
            session.countAttempt()
            if rejection.countsAgainstUser, let userId = evaluation.identifiedUser, userId == key.user {
                var policy = lockout
                if plantedLocksOneGuessLate, policy.maximumFailures > 0 { policy.maximumFailures += 1 }
                if let lock = record?.recordFailure(at: snapshot.now, policy: policy) {
                    return decision(.remove, .locked(session, lock, evaluated: true, userId: userId))
                }
            }
            if session.attemptsOnStep >= client.maxAttempts {
                return decision(.remove, .terminal(session, error: IdpWire.FlowError.tooManyAttempts,
                                                   description: "step \(session.step + 1) was answered wrongly \(session.attemptsOnStep) times; the flow is ended",
                                                   rejection: rejection, userId: evaluation.identifiedUser))
            }
            return decision(.store(session), .rejected(session, preparedClient, rejection, userId: evaluation.identifiedUser))
        case .pass:
            session = evaluation.session
            guard session.userId == key.user else {
                return decision(.remove, .terminal(session, error: "server_error", description: "the flow's user changed during the flow"))
            }
            session.advance()
            if session.step < client.steps.count {
                return decision(.store(session), .nextStep(session, preparedClient))
            }
            // Every step passed: the flow's effects, at once, then the code.
            switch complete(session, key: key, record: record, tenantId: tenant.id, client: client, snapshot: snapshot) {
            case .success(let completion):
                record = completion.user
                return decision(.remove, .completed(session, client, userId: completion.code.userId, code: completion.code))
            case .failure(let refusal):
                return decision(.remove, .terminal(session, error: refusal.error, description: refusal.description))
            }
        }
    }

    /// Why a flow that passed every step cannot complete.
    struct CompletionRefusal: Error {
        let error: String
        let description: String
    }

    /// The effects of a flow that passed every step on its user's record (`record`, as the
    /// snapshot read it; a registration's user does not exist yet), and the code it is issued.
    /// What earlier steps checked is checked again here, on this step's snapshot: another flow
    /// may have used the same activation code, changed the password or spent the reset code
    /// since.
    private func complete(_ session: AuthSession, key: UserKey, record: UserRecord?, tenantId: String, client: IdpClientConfiguration,
                          snapshot: StepSnapshot) -> Result<(user: UserRecord, code: CodeRecord), CompletionRefusal> {
        let userId = key.user
        let pending = session.pending ?? PendingChanges()
        var user: UserRecord
        if client.purpose == .registration {
            // Two registrations of one username may both have passed the form.
            guard record == nil else {
                return .failure(CompletionRefusal(error: "username_taken", description: "username '\(userId)' was registered meanwhile"))
            }
            user = UserRecord(id: userId, salt: pending.password?.salt ?? snapshot.fresh.salt, attributes: [:])
        } else {
            guard let record else { return .failure(CompletionRefusal(error: "server_error", description: "the flow's user does not exist")) }
            user = record
        }
        let astClientId: String
        switch client.purpose {
        case .enrollment, .registration:
            if let code = pending.activationCode {
                guard let expiry = user.activationCodes[code] else {
                    return .failure(CompletionRefusal(error: "activation_code_used", description: "the activation code was used by another flow meanwhile"))
                }
                guard expiry > snapshot.now else {
                    return .failure(CompletionRefusal(error: IdpWire.FlowError.activationCodeExpired, description: "the activation code has expired; ask for a new one"))
                }
            }
            guard let password = pending.password?.digest(forSalt: user.salt) else {
                return .failure(CompletionRefusal(error: "server_error", description: "the flow set no password"))
            }
            user.status = .active
            user.passwordHash = password
            if let code = pending.activationCode { user.activationCodes[code] = nil }
            // A device that is bound already (it sent its X-KOBIL-ASTCLIENTID) keeps its
            // binding: the new user shares it. A new device gets a new one.
            astClientId = session.astClientId ?? snapshot.fresh.astClientId
            if !user.astClientIds.contains(astClientId) { user.astClientIds.append(astClientId) }
        case .login:
            astClientId = session.astClientId ?? user.astClientIds.last ?? IdpServer.unassignedAstClientId
        case .changePassword, .forgotPassword:
            if client.purpose == .changePassword, user.passwordHash != pending.provenPasswordHash {
                return .failure(CompletionRefusal(error: "password_changed", description: "the password was changed by another flow meanwhile; start again"))
            }
            if client.purpose == .forgotPassword {
                guard let code = pending.resetCode, let expiry = user.passwordResetCodes[code] else {
                    return .failure(CompletionRefusal(error: "reset_code_used", description: "the password-reset code was used by another flow meanwhile"))
                }
                guard expiry > snapshot.now else { return .failure(CompletionRefusal(error: IdpWire.FlowError.resetCodeExpired, description: IdpServer.resetCodeExpired)) }
                user.passwordResetCodes[code] = nil
            }
            guard let password = pending.password?.digest(forSalt: user.salt) else {
                return .failure(CompletionRefusal(error: "server_error", description: "the flow set no password"))
            }
            user.passwordHash = password
            astClientId = session.astClientId ?? user.astClientIds.last ?? IdpServer.unassignedAstClientId
        }
        user.recordSuccess()
        let codeUser = plantedIssuesCodeForHint && client.purpose == .enrollment ? session.loginHint ?? userId : userId
        let code = CodeRecord(
            tenant: tenantId, clientId: client.clientId, userId: codeUser, redirectURI: session.redirectURI,
            codeChallenge: session.codeChallenge, codeChallengeMethod: session.codeChallengeMethod,
            astClientId: astClientId, expiresAt: snapshot.now.addingTimeInterval(codeLifetime)
        )
        return .success((user, code))
    }
}

extension AuthSession {
    /// The fields of the step the flow is at, in its client of `tenant`, and the user they
    /// concern; `nil` if the tenant, the client or the step does not exist.
    func currentStep(in tenant: TenantConfiguration?, answers: FormParameters) -> (fields: [IdpFormField], key: UserKey)? {
        guard let client = tenant?.clients[request.clientId], step < client.configuration.steps.count else { return nil }
        let fields = client.configuration.steps[step]
        return (fields, userKey(of: fields, answers: answers))
    }

    /// The user a step with `fields` concerns, the only one it can touch: named by an earlier
    /// step or by this step's username field. A step without either is refused before any user
    /// is looked at; its key names nobody, as no user id is empty.
    func userKey(of fields: [IdpFormField], answers: FormParameters) -> UserKey {
        UserKey(tenant: request.tenant, user: userId ?? fields.first { $0.role == .username }.flatMap { answers[$0.id] } ?? "")
    }
}

/// The salted digests of a step's secret answers, computed before any lock is taken: a SHA-256
/// per secret is work no lock should be held for.
struct SecretDigests {
    /// The salt the digests were made with: the named user's, or a new user's.
    let salt: [UInt8]
    /// The secrets the digests were made of.
    let secrets: [String]
    /// The first secret's digest, kept apart: most steps ask one secret, whose digest then needs
    /// no dictionary made for it.
    private let first: [UInt8]?
    /// The digests of the other secrets, by secret.
    private let others: [String: [UInt8]]

    init(salt: [UInt8], secrets: [String]) {
        self.salt = salt
        self.secrets = secrets
        first = secrets.isEmpty ? nil : UserRecord.hash(secrets[0], salt: salt)
        var others: [String: [UInt8]] = [:]
        for secret in secrets.dropFirst() where secret != secrets[0] && others[secret] == nil {
            others[secret] = UserRecord.hash(secret, salt: salt)
        }
        self.others = others
    }

    /// The digest of `secret` under `salt`: the one made beforehand, or (a salt or a secret not
    /// foreseen) made now.
    func digest(of secret: String, salt: [UInt8]) -> [UInt8] {
        if salt == self.salt {
            if let first, secret == secrets[0] { return first }
            if let digest = others[secret] { return digest }
        }
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
    /// The one user the step can be about (``AuthSession/userKey(of:answers:)``), and their record
    /// if they exist.
    let candidate: String
    let record: UserRecord?
    let client: IdpClientConfiguration
    let now: Date
    let maximumFieldLength: Int
    let minimumPasswordLength: Int
    let digests: SecretDigests
    /// The salt a user registered by this flow gets, among the values made at first use.
    let fresh: FreshValues
    /// The user the answers are about, once known (for counting wrong answers).
    var identifiedUser: String?

    init(session: AuthSession, candidate: String, record: UserRecord?, client: IdpClientConfiguration, now: Date,
         maximumFieldLength: Int, minimumPasswordLength: Int, digests: SecretDigests, fresh: FreshValues) {
        self.session = session
        self.candidate = candidate
        self.record = record
        self.client = client
        self.now = now
        self.maximumFieldLength = maximumFieldLength
        self.minimumPasswordLength = minimumPasswordLength
        self.digests = digests
        self.fresh = fresh
        identifiedUser = session.userId
    }

    /// The verdict on `answers` to a step with `fields`: every field answered and not too long,
    /// then each answer checked by its field's role, the username first and a new password last.
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
        // Rank by rank, each in field order: the order a stable sort by rank gives, with no
        // sorted array made.
        for pass in 0...2 {
            for field in fields where rank(field) == pass {
                let value = answers[field.id]!
                if field.role != .username, !lockChecked {
                    lockChecked = true
                    if let lockout = currentUser?.lockout(at: now) { return .locked(lockout) }
                }
                let verdict: Verdict?
                switch field.role {
                case .username: verdict = checkUsername(value, asksSecret: asksSecret)
                case .activationCode: verdict = checkActivationCode(value)
                case .passwordResetCode: verdict = checkPasswordResetCode(value)
                case .newPassword: verdict = checkNewPassword(value)
                case .password, .currentPassword: verdict = checkPassword(value, provesCurrent: field.role == .currentPassword)
                case .attribute(let key): verdict = checkAttribute(key, value, label: field.label)
                }
                if let verdict { return verdict }
            }
        }
        return .pass
    }

    /// Checks the username answer `value` and names the flow's user; `asksSecret`: the step also
    /// asks a password, so an unknown user is refused as a wrong username or password.
    /// - Returns: The verdict that ends the step's evaluation; `nil`: the answer holds.
    private mutating func checkUsername(_ value: String, asksSecret: Bool) -> Verdict? {
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
            session.name(value)
            return nil
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
        session.name(value)
        identifiedUser = value
        return nil
    }

    /// Checks the activation code answer `value` against the named user's and keeps it for the
    /// completion.
    /// - Returns: The verdict that ends the step's evaluation; `nil`: the answer holds.
    private mutating func checkActivationCode(_ value: String) -> Verdict? {
        guard let user = currentUser else { return .terminal(error: "server_error", description: "no user identified before the activation code") }
        guard let expiry = user.activationCodes[value] else {
            return .reject(Rejection(code: "invalid_activation_code", message: "The activation code is not valid.", countsAgainstUser: true))
        }
        guard expiry > now else {
            return .terminal(error: IdpWire.FlowError.activationCodeExpired, description: "the activation code has expired; ask for a new one")
        }
        guard session.updatePending({ $0.activationCode = value }) else {
            return .terminal(error: "server_error", description: "no user identified before the activation code")
        }
        return nil
    }

    /// Checks the password-reset code answer `value` against the named user's and keeps it for the
    /// completion.
    /// - Returns: The verdict that ends the step's evaluation; `nil`: the answer holds.
    private mutating func checkPasswordResetCode(_ value: String) -> Verdict? {
        guard let user = currentUser else { return .terminal(error: "server_error", description: "no user identified before the password-reset code") }
        guard let expiry = user.passwordResetCodes[value] else {
            return .reject(Rejection(code: "invalid_reset_code", message: "The password-reset code is not valid.", countsAgainstUser: true))
        }
        guard expiry > now else { return .terminal(error: IdpWire.FlowError.resetCodeExpired, description: IdpServer.resetCodeExpired) }
        guard session.updatePending({ $0.resetCode = value }) else {
            return .terminal(error: "server_error", description: "no user identified before the password-reset code")
        }
        return nil
    }

    /// Checks the new password `value` against the policy (and, changing a password, against the
    /// current one) and keeps its digest for the completion.
    /// - Returns: The verdict that ends the step's evaluation; `nil`: the answer holds.
    private mutating func checkNewPassword(_ value: String) -> Verdict? {
        guard value.count >= minimumPasswordLength else {
            return .reject(Rejection(code: "password_policy", message: "The password must have at least \(minimumPasswordLength) characters.", countsAgainstUser: false))
        }
        if client.purpose == .changePassword {
            guard session.pending?.provenPasswordHash != nil, let user = currentUser else {
                return .terminal(error: "server_error", description: "the new password was asked before the current one was proven")
            }
            guard !user.passwordMatches(digest: digests.digest(of: value, salt: user.salt)) else {
                return .reject(Rejection(code: "password_reuse", message: "The new password must differ from the current one.", countsAgainstUser: false))
            }
        }
        // Kept as its digest under the salt the user has (or, registering, will get).
        let salt = currentUser?.salt ?? session.pending?.password?.salt ?? fresh.salt
        let password = PendingPassword(digest: digests.digest(of: value, salt: salt), salt: salt)
        guard session.updatePending({ $0.password = password }) else {
            return .terminal(error: "server_error", description: "no user identified before the new password")
        }
        return nil
    }

    /// Checks the password answer `value` against the named user's; `provesCurrent`: the field is
    /// a change-password flow's current password, whose proof the completion checks again.
    /// - Returns: The verdict that ends the step's evaluation; `nil`: the answer holds.
    private mutating func checkPassword(_ value: String, provesCurrent: Bool) -> Verdict? {
        guard let user = currentUser, user.passwordMatches(digest: digests.digest(of: value, salt: user.salt)) else {
            return .reject(Rejection(code: "invalid_credentials", message: "Invalid username or password.", countsAgainstUser: true))
        }
        if provesCurrent { _ = session.updatePending { $0.provenPasswordHash = user.passwordHash } }
        return nil
    }

    /// Checks the answer `value` to the field `label` against the named user's attribute `key`.
    /// - Returns: The verdict that ends the step's evaluation; `nil`: the answer holds.
    private func checkAttribute(_ key: String, _ value: String, label: String) -> Verdict? {
        guard let user = currentUser, let expected = user.attributes[key], ConstantTime.equals(expected, value) else {
            return .reject(Rejection(code: "invalid_credentials", message: "Invalid \(label).", countsAgainstUser: true))
        }
        return nil
    }

    private var currentUser: UserRecord? { session.userId.flatMap(user) }

    /// The record of `userId`: the candidate's; any other user is not looked up (the caller
    /// chose the candidate from the same answers, so this does not happen).
    private func user(_ userId: String) -> UserRecord? { userId == candidate ? record : nil }
}
