import Foundation
import IdpPrimitives
import IdpWireFormats

/// Everything the server knows, split so that flows of different users seldom meet on one lock.
///
/// Four kinds of state, each in ``shardCount`` shards of its own `LockedValue` (all shards of a
/// kind share one ``LockProfiler`` label):
///
/// | kind | shard chosen by | holds |
/// |---|---|---|
/// | `tenants` | the caller's shard of another kind | a replica of the tenant directory |
/// | `sessions` | the session code | login flows in progress |
/// | `users` | tenant and user id | user records, lockout counts |
/// | `grants` | the code or token (``ShardRouting``) | codes, redeemed codes, tokens, families |
///
/// What must be atomic stays inside one shard or holds locks in one documented order:
/// - **Lock order**: a `sessions` shard, then a `users` shard, then a `grants` shard; never two
///   shards of one kind at once. A `tenants` replica is a leaf: read and released before any other
///   lock is taken (administration takes all replicas in index order and nothing else).
/// - Lockout counting (check locked, evaluate, count, lock) happens with the flow's session shard
///   and the user's shard held, so parallel guesses for one user are decided one after another.
/// - A code, the token family its redemption creates and every token rotated or exchanged from
///   that family live in one `grants` shard: ``ShardRouting`` puts the shard into the token
///   itself. Code single use and family revocation on reuse are therefore one shard's decisions.
/// - A refresh takes the user's shard, then the family's `grants` shard, so the lockout check and
///   the rotation are one decision.
///
/// The audit log (`AuditLog`) is sharded the same way, outside this lock order: it is appended to
/// after a decision's locks are released.
struct ServerState: Sendable {
    /// Shards per kind: a power of two, so that ``ShardRouting`` can put an index into a token's
    /// first Base 64 character. Sixteen keeps two random flows on different shards 15 times in 16,
    /// while a statistics call still takes only 64 locks.
    static let shardCount = 16

    let tenants: [LockedValue<TenantDirectory>]
    let sessions: [LockedValue<SessionShard>]
    let users: [LockedValue<UserShard>]
    let grants: [LockedValue<GrantShard>]

    init() {
        tenants = (0..<Self.shardCount).map { _ in LockedValue(TenantDirectory(), label: "IdpServer.tenants") }
        sessions = (0..<Self.shardCount).map { _ in LockedValue(SessionShard(), label: "IdpServer.sessions") }
        users = (0..<Self.shardCount).map { _ in LockedValue(UserShard(), label: "IdpServer.users") }
        grants = (0..<Self.shardCount).map { _ in LockedValue(GrantShard(), label: "IdpServer.grants") }
    }

    /// The tenant's configuration, read from the replica `stripe` (any index spreads the readers;
    /// callers pass the shard index they use next). A leaf lock: nothing else is held.
    func tenant(_ tenantId: String, stripe: Int) -> TenantConfiguration? {
        tenants[stripe & (Self.shardCount - 1)].withLock { $0.tenants[tenantId] }
    }

    /// Changes the tenant directory: `body` runs on replica 0, and its result replaces every
    /// replica, with all of them locked in index order so no reader sees two versions at once.
    /// If `body` throws, nothing changes.
    func updateTenants<Failure: Error>(_ body: (inout TenantDirectory) throws(Failure) -> Void) throws(Failure) {
        try lockReplicas(from: 0, updated: nil, body)
    }

    private func lockReplicas<Failure: Error>(
        from index: Int, updated: TenantDirectory?, _ body: (inout TenantDirectory) throws(Failure) -> Void
    ) throws(Failure) {
        guard index < tenants.count else { return }
        try tenants[index].withLock { (replica) throws(Failure) in
            if let updated {
                replica = updated
            } else {
                var candidate = replica
                try body(&candidate)
                replica = candidate
            }
            try lockReplicas(from: index + 1, updated: replica, body)
        }
    }

    func sessionShard(_ sessionCode: String) -> LockedValue<SessionShard> {
        sessions[ShardRouting.shard(of: sessionCode)]
    }

    func userShard(_ key: UserKey) -> LockedValue<UserShard> {
        users[key.hashValue & (Self.shardCount - 1)]
    }

    func grantShard(_ token: String) -> LockedValue<GrantShard> {
        grants[ShardRouting.shard(of: token)]
    }
}

/// Every tenant's configuration. Written only by administration; replicated once per shard so
/// that readers spread over locks.
struct TenantDirectory {
    var tenants: [String: TenantConfiguration] = [:]
}

/// Where a grant or a session lives: the shard index is read from the token's first Base 64
/// character, so a code and every token it leads to can be made to share one shard.
enum ShardRouting {
    /// A random token (URL-safe Base 64 of `byteCount` bytes) that lives in `shard`: four bits of
    /// the first byte are the shard index (a 32-byte token keeps 252 random bits).
    static func token(byteCount: Int = 32, shard: Int) -> String {
        SecureRandom.token(byteCount: byteCount) { bytes in
            bytes[0] = (bytes[0] & 0b1100_0011) | UInt8(truncatingIfNeeded: shard & (ServerState.shardCount - 1)) << 2
        }
    }

    /// The shard of any text: from the first character's Base 64 value; 0 for text that is not a
    /// token of this server (which then is found nowhere, as before).
    static func shard(of token: String) -> Int {
        guard let first = token.utf8.first else { return 0 }
        let value: UInt8
        switch first {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = first - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): value = first - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): value = first - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): value = 62
        case UInt8(ascii: "_"): value = 63
        default: value = 0
        }
        return Int(value) & (ServerState.shardCount - 1)
    }
}

/// When a shard drops expired entries: after 256 requests to it, or one per eight entries it
/// holds if that is more, so a prune (a scan of the shard's tables under its lock) costs each
/// request a few entries at most, and a shard full of long-lived tokens is scanned rarely.
struct PruneSchedule {
    private var requests = 0

    /// Counts a request to a shard holding `entries`; `true` when this one should prune.
    mutating func isDue(entries: Int) -> Bool {
        requests += 1
        guard requests >= max(256, entries / 8) else { return false }
        requests = 0
        return true
    }
}

extension Dictionary {
    /// Removes the entries whose value matches, in place: a prune that finds nothing expired
    /// reads the table once and copies nothing (`filter` rebuilt every table, under the lock).
    mutating func removeValues(where shouldRemove: (Value) -> Bool) {
        let doomed = compactMap { shouldRemove($0.value) ? $0.key : nil }
        for key in doomed { removeValue(forKey: key) }
    }
}

/// Login flows in progress, by session code.
struct SessionShard {
    var sessions: [String: AuthSession] = [:]
    var pruning = PruneSchedule()

    /// Drops expired sessions when due.
    mutating func pruneIfDue(now: Date) {
        guard pruning.isDue(entries: sessions.count) else { return }
        sessions.removeValues { $0.expiresAt <= now }
    }
}

/// A user's place in the server: tenant and user id.
struct UserKey: Hashable {
    let tenant: String
    let user: String
}

/// User records by tenant and id: plain values, changed in place under the shard's lock (a
/// write goes to one entry; nothing is copied on the way).
struct UserShard {
    var users: [UserKey: UserRecord] = [:]
}

/// A code, token or token family id as a key of the grant tables: its UTF-8 bytes packed into
/// six words, so a table probe compares and hashes inline bytes instead of following each probed
/// key to its string's storage (the tables hold every token issued, so those were cache misses,
/// and a lookup probed several). Texts of up to 48 bytes map one to one; a longer text, which
/// this server never issues, maps to a key nothing is stored under.
struct GrantKey: Hashable, Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    /// The text's length in bytes, or `UInt8.max` for a text too long to be a grant.
    private var length: UInt8 = 0

    static let capacity = 48

    init(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard bytes.count <= Self.capacity else {
                length = .max
                return
            }
            length = UInt8(bytes.count)
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
        }
    }

    static func == (lhs: GrantKey, rhs: GrantKey) -> Bool {
        lhs.length == rhs.length && lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
            && lhs.words.3 == rhs.words.3 && lhs.words.4 == rhs.words.4 && lhs.words.5 == rhs.words.5
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(length)
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
        hasher.combine(words.4)
        hasher.combine(words.5)
    }
}

/// Codes and tokens whose value routes here (``ShardRouting``).
struct GrantShard {
    /// Issued, not yet redeemed authorization codes.
    var codes: [GrantKey: CodeRecord] = [:]
    /// Redeemed codes, kept until they would have expired, so reuse is told apart from an unknown
    /// code and can revoke what the first use issued (RFC 6749 §4.1.2).
    var redeemedCodes: [GrantKey: RedeemedCode] = [:]
    var tokens: [GrantKey: TokenRecord] = [:]
    /// Token families by id: everything one code redemption issued and every rotation and
    /// exchange since. A token is revoked exactly when its family is (or is gone): revocation is
    /// one write to the family, and a family keeps no list of its tokens.
    var families: [GrantKey: TokenFamily] = [:]
    var pruning = PruneSchedule()

    /// Drops expired codes and tokens when due, and the tokens of revoked or ended families.
    mutating func pruneIfDue(now: Date) {
        guard pruning.isDue(entries: codes.count + redeemedCodes.count + tokens.count + families.count) else { return }
        codes.removeValues { $0.expiresAt <= now }
        redeemedCodes.removeValues { $0.forgetAt <= now }
        let familyCount = families.count
        families.removeValues { $0.expiresAt <= now || $0.revoked }
        if families.count == familyCount {
            // No family went, so no token lost its family here (the tokens of one that went
            // earlier went with it): no lookup per token.
            tokens.removeValues { $0.expiresAt <= now }
        } else {
            let live = families
            tokens.removeValues { $0.expiresAt <= now || live[$0.family] == nil }
        }
    }

    /// Whether `token`'s family has been revoked (or pruned, which only a revoked or ended family
    /// is): then the token is revoked too.
    func isRevoked(_ token: TokenRecord) -> Bool {
        families[token.family]?.revoked ?? true
    }

    /// Revokes every token of `family`: what reuse of a rotated refresh token or of a redeemed
    /// code does (OAuth 2.0 Security BCP §4.14.2, RFC 6749 §4.1.2).
    mutating func revokeFamily(_ family: GrantKey) {
        guard var record = families[family] else { return }
        record.revoked = true
        families.updateValue(record, forKey: family)
    }

    mutating func addToken(_ token: GrantKey, _ kind: TokenRecord.Kind, tenant: String, clientId: String, userId: String, family: GrantKey, expiresAt: Date) {
        tokens.updateValue(TokenRecord(kind: kind, tenant: tenant, clientId: clientId, userId: userId, expiresAt: expiresAt, family: family), forKey: token)
    }

    /// Opens `family` with its first tokens (a code redemption's), all entered with `updateValue`
    /// (the subscript's modify accessor on these large records allocated its frame on the heap).
    mutating func openFamily(_ family: GrantKey, expiresAt: Date, astClientId: String, tenant: String, clientId: String, userId: String,
                             tokens issued: [(key: GrantKey, kind: TokenRecord.Kind, expiresAt: Date)]) {
        families.updateValue(TokenFamily(expiresAt: expiresAt, astClientId: astClientId), forKey: family)
        for token in issued { addToken(token.key, token.kind, tenant: tenant, clientId: clientId, userId: userId, family: family, expiresAt: token.expiresAt) }
    }
}

/// A tenant's settings and clients, each client with its forms prepared.
struct TenantConfiguration: Sendable {
    let id: String
    let secretEncoding: IdpServer.SecretEncoding
    var clients: [String: PreparedClient] = [:]

    /// What a password looks like on the wire for this tenant.
    func wireForm(ofSecret secret: String) -> String {
        switch secretEncoding {
        case .plain: secret
        case .sha256: Base64URL.encode(SHA256.hash(secret))
        }
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
    /// How many form steps naming this user the IDP has decided; numbers the audit entries of
    /// those decisions (``AuditEntry/userDecision``), so a reader can put them back in the order
    /// they were decided in without one lock around every decision and its audit.
    var decisions: UInt64 = 0

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
    /// The number of the last decision on this flow's user (``UserRecord/decisions``), and that
    /// user; `nil` when the step named no existing user.
    var userDecision: UInt64?
    var decidedUser: String?
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
    /// The family the first redemption opened; revoked if the code is presented again.
    let family: GrantKey
}

struct TokenRecord {
    enum Kind: String { case access, refresh, offline, exchanged }
    let kind: Kind
    let tenant: String
    let clientId: String
    let userId: String
    let expiresAt: Date
    let family: GrantKey
    /// The audience of an exchanged token (RFC 8693); `nil` for the MC's own tokens.
    var audience: String? = nil
    /// A refresh or offline token that was exchanged already; presenting it again is reuse.
    var rotated = false
}

/// One login's tokens, by their ``TokenRecord/family``: the code redemption's and every
/// rotation's and exchange's after it.
struct TokenFamily {
    /// When the family's offline session ends ("Offline Session Max"), fixed at login.
    let expiresAt: Date
    let astClientId: String
    var revoked = false
}
