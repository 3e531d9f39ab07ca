import Foundation

/// What an authorize request fixed for the whole of its flow. A class, since it never changes: a
/// copy of a session (what a step is decided on, read under the session's lock) retains one object
/// instead of each of these strings.
final class AuthRequest: Sendable {
    let tenant: String
    let clientId: String
    let redirectURI: String
    let responseMode: String
    let state: String?
    let nonce: String?
    let codeChallenge: String
    let codeChallengeMethod: String
    let loginHint: String?
    let astClientId: String?
    let traceParent: String?
    let expiresAt: Date

    init(tenant: String, clientId: String, redirectURI: String, responseMode: String, state: String?, nonce: String?, codeChallenge: String,
         codeChallengeMethod: String, loginHint: String?, astClientId: String?, traceParent: String?, expiresAt: Date) {
        self.tenant = tenant
        self.clientId = clientId
        self.redirectURI = redirectURI
        self.responseMode = responseMode
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
        self.loginHint = loginHint
        self.astClientId = astClientId
        self.traceParent = traceParent
        self.expiresAt = expiresAt
    }
}

/// One login flow between the authorize request and the redirect: what the request fixed, and
/// the stage the flow is at. A flow that ends (a code issued, a terminal error, a lock) is removed
/// from its shard, so an ended flow has no stage.
///
/// A plain value: a step is decided on a copy (`StepDecision`) and committed only if the stored
/// session's ``revision`` is still the copy's.
@dynamicMemberLookup
struct AuthSession {
    /// Where the flow stands.
    enum Stage {
        /// The first step, before an answer to it named the user. A first step that was rejected
        /// leaves the flow here: its answers are forgotten, and the next attempt names a user anew.
        case first(attempts: Int)
        /// Step `step` (from 0), answered for `user`, with what completion applies. The first step
        /// names the user (every client asks for the username in its first step, and a step's
        /// username is checked before its other answers), so later steps are always here.
        case named(user: String, step: Int, attempts: Int, pending: PendingChanges)
    }

    let request: AuthRequest
    private(set) var stage: Stage = .first(attempts: 0)
    /// Bumped by every change committed to the session's shard.
    var revision: UInt64 = 0

    init(_ request: AuthRequest) {
        self.request = request
    }

    subscript<Value>(dynamicMember keyPath: KeyPath<AuthRequest, Value>) -> Value { request[keyPath: keyPath] }

    /// The step the flow is at (from 0).
    var step: Int {
        switch stage {
        case .first: 0
        case .named(_, let step, _, _): step
        }
    }

    /// The answers given to the current step so far.
    var attemptsOnStep: Int {
        switch stage {
        case .first(let attempts), .named(_, _, let attempts, _): attempts
        }
    }

    /// The user the flow's answers named, once named.
    var userId: String? {
        if case .named(let user, _, _, _) = stage { return user }
        return nil
    }

    /// What completion applies; `nil` before a user is named.
    var pending: PendingChanges? {
        if case .named(_, _, _, let pending) = stage { return pending }
        return nil
    }

    /// The flow's answers named `user`, on the current step.
    mutating func name(_ user: String) {
        stage = .named(user: user, step: step, attempts: attemptsOnStep, pending: pending ?? PendingChanges())
    }

    /// Changes what completion applies. Returns `false`, changing nothing, before a user is named.
    mutating func updatePending(_ change: (inout PendingChanges) -> Void) -> Bool {
        guard case .named(let user, let step, let attempts, var pending) = stage else { return false }
        change(&pending)
        stage = .named(user: user, step: step, attempts: attempts, pending: pending)
        return true
    }

    /// One more wrong answer to the current step.
    mutating func countAttempt() {
        switch stage {
        case .first(let attempts): stage = .first(attempts: attempts + 1)
        case .named(let user, let step, let attempts, let pending): stage = .named(user: user, step: step, attempts: attempts + 1, pending: pending)
        }
    }

    /// The current step passed: the next one, with no attempts yet. Only a named flow passes a step.
    mutating func advance() {
        guard case .named(let user, let step, _, let pending) = stage else { return }
        stage = .named(user: user, step: step + 1, attempts: 0, pending: pending)
    }
}

/// The changes a flow applies only when it completes, so an abandoned flow changes nothing.
struct PendingChanges {
    var password: PendingPassword?
    var activationCode: String?
    var resetCode: String?
    /// The password hash the current password was proven against (change password); completion
    /// requires it unchanged, so a flow proven against an old password cannot overwrite a newer one.
    var provenPasswordHash: [UInt8]?
}
