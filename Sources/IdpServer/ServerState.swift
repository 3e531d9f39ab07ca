import Foundation
import IdpPrimitives

/// Everything the server knows, kept behind one `LockedValue` in ``IdpServer``.
struct ServerState {
    var tenants: [String: TenantState] = [:]
    /// Login flows in progress, by session code.
    var sessions: [String: AuthSession] = [:]
    /// Issued, not yet redeemed authorization codes.
    var codes: [String: CodeRecord] = [:]
    /// Redeemed codes, kept until they would have expired, so reuse is told apart from an unknown
    /// code and can revoke what the first use issued (RFC 6749 §4.1.2).
    var redeemedCodes: [String: RedeemedCode] = [:]
    var tokens: [String: TokenRecord] = [:]
    /// Token families by id: everything one code redemption issued and every rotation since.
    var families: [String: TokenFamily] = [:]
    var requestsSincePrune = 0

    /// Drops expired sessions and codes; amortised over many requests so no request pays for all.
    mutating func pruneIfDue(now: Date) {
        requestsSincePrune += 1
        guard requestsSincePrune >= 4096 else { return }
        requestsSincePrune = 0
        sessions = sessions.filter { $0.value.expiresAt > now }
        codes = codes.filter { $0.value.expiresAt > now }
        redeemedCodes = redeemedCodes.filter { $0.value.forgetAt > now }
        tokens = tokens.filter { $0.value.expiresAt > now && !$0.value.revoked }
        families = families.filter { $0.value.expiresAt > now && !$0.value.revoked }
    }

    /// Revokes every token of `family`: what reuse of a rotated refresh token does (OAuth 2.0
    /// Security BCP §4.14.2).
    mutating func revokeFamily(_ family: String) {
        guard var record = families[family] else { return }
        record.revoked = true
        for token in record.tokens { tokens[token]?.revoked = true }
        families[family] = record
    }
}

struct TenantState {
    let id: String
    let secretEncoding: IdpServer.SecretEncoding
    var clients: [String: IdpClientConfiguration] = [:]
    let users = UserTable()

    /// What a password looks like on the wire for this tenant.
    func wireForm(ofSecret secret: String) -> String {
        switch secretEncoding {
        case .plain: secret
        case .sha256: Base64URL.encode(SHA256.hash(secret))
        }
    }
}

/// A tenant's users, by id.
///
/// A class, not a dictionary in ``TenantState``: the endpoints take copies of the tenant while they
/// decide, and writing a user back through a copy used to copy-on-write the tenant's whole user
/// dictionary, every login (`idp-bench` found it: 1.5 ms per login with 4,096 users). Every copy
/// of a tenant now shares this one table, and a write changes one entry.
///
/// `@unchecked Sendable` is sound because the table is reachable only through the
/// ``ServerState`` inside ``IdpServer``'s `LockedValue`, so every access happens under that lock.
final class UserTable: @unchecked Sendable {
    private var records: [String: UserRecord] = [:]

    subscript(userId: String) -> UserRecord? {
        get { records[userId] }
        _modify { yield &records[userId] }
    }
}

struct UserRecord {
    let id: String
    var status: IdpUserSnapshot.Status = .pendingActivation
    let salt: [UInt8]
    var passwordHash: [UInt8]? = nil
    /// Outstanding one-time activation codes and when each expires.
    var activationCodes: [String: Date] = [:]
    /// Outstanding one-time password-reset codes and when each expires.
    var passwordResetCodes: [String: Date] = [:]
    var attributes: [String: String]
    /// Wrong secrets since the last success or lockout.
    var failedAttempts = 0
    /// Wrong secrets since the last success.
    var totalFailedAttempts = 0
    /// Lockouts since the last success (each lasts longer, see ``LockoutPolicy``).
    var lockouts = 0
    var lockedUntil: Date?
    var permanentlyLocked = false
    var astClientIds: [String] = []

    init(id: String, salt: [UInt8], attributes: [String: String]) {
        self.id = id
        self.salt = salt
        self.attributes = attributes
    }

    static func hash(_ secret: String, salt: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(salt)
        hasher.update(secret)
        return hasher.finalize()
    }

    func passwordMatches(_ wireSecret: String) -> Bool {
        guard let passwordHash else { return false }
        return ConstantTime.equals(UserRecord.hash(wireSecret, salt: salt), passwordHash)
    }
}

/// One login flow between the authorize request and the redirect.
struct AuthSession {
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
    /// Index into the client's steps.
    var step = 0
    /// Answers given to the current step.
    var attemptsOnStep = 0
    /// The user named by the username field, once given.
    var userId: String?
    /// Changes applied only when the whole flow succeeds, so an abandoned flow changes nothing.
    var pendingPassword: String?
    var pendingActivationCode: String?
    var pendingResetCode: String?
    /// The password hash the current password was proven against (change password); completion
    /// requires it unchanged, so a flow proven against an old password cannot overwrite a newer one.
    var provenPasswordHash: [UInt8]?
}

struct CodeRecord {
    let tenant: String
    let clientId: String
    let userId: String
    let redirectURI: String
    let codeChallenge: String
    let codeChallengeMethod: String
    let astClientId: String
    let expiresAt: Date
}

struct RedeemedCode {
    let forgetAt: Date
    /// The tokens the first redemption issued; revoked if the code is presented again.
    let tokens: [String]
}

struct TokenRecord {
    enum Kind: String { case access, refresh, offline, exchanged }
    let kind: Kind
    let tenant: String
    let clientId: String
    let userId: String
    let expiresAt: Date
    let family: String
    /// The audience of an exchanged token (RFC 8693); `nil` for the MC's own tokens.
    var audience: String? = nil
    var revoked = false
    /// A refresh or offline token that was exchanged already; presenting it again is reuse.
    var rotated = false
}

/// The tokens of one login: the code redemption's and every rotation's after it.
struct TokenFamily {
    var tokens: [String]
    /// When the family's offline session ends ("Offline Session Max"), fixed at login.
    let expiresAt: Date
    let astClientId: String
    var revoked = false
}
