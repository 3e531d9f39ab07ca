import Foundation
import IdpPrimitives
import IdpWireFormats

/// Everything the server knows, split so that flows of different users seldom meet on one lock.
///
/// Four kinds of state, each in ``shardCount`` shards (four per core) of its own `LockedValue` (all
/// shards of a kind share one ``LockProfiler`` label):
///
/// | kind | shard chosen by | holds |
/// |---|---|---|
/// | `tenants` | the caller's shard of another kind | a replica of the tenant directory |
/// | `sessions` | the session code | login flows in progress |
/// | `users` | tenant and user id | user records, lockout counts |
/// | `grants` | the code or token (``ShardRouting``) | codes, tokens, token families, each kind in the order issued (``GrantLog``) |
///
/// What must be atomic stays inside one shard or holds locks in one documented order:
/// - **Lock order**: a `sessions` shard, then a `users` shard, then a `grants` shard; never two
///   shards of one kind at once. A `tenants` replica is a leaf: read and released before any other
///   lock is taken (administration takes all replicas in index order and nothing else).
/// - A form step (check locked, evaluate, count and lock, or complete) is decided on copies of
///   the flow's session and its user's record, and committed with the session's shard and the
///   user's shard held only if both are still the revisions it read; otherwise it is decided
///   again. So parallel guesses for one user are decided one after another, and the locks are
///   held for a comparison and two writes.
/// - A code, the token family its redemption creates and every token rotated or exchanged from
///   that family live in one `grants` shard: ``ShardRouting`` puts the shard into the token
///   itself. Code single use and family revocation on reuse are therefore one shard's decisions.
///   A redemption takes that shard in short sections, one log entry each: the first claims the
///   code (its entry is marked redeemed where it lies) and reserves the family's place, the next
///   opens the family unless a replay in between revoked it, and one each stores a token, all
///   before the answer hands the tokens out.
/// - A refresh takes the user's shard, then the family's `grants` shard, so the lockout check and
///   the rotation are one decision.
///
/// The audit log (`AuditLog`) is sharded the same way, outside this lock order: it is appended to
/// after a decision's locks are released.
struct ServerState: Sendable {
    /// Shards per kind: four per core, a power of two from 16 to 64, chosen when the server starts
    /// (``shardCount(cores:)``). A power of two, so that a token's route (``ShardRouting``, six bits
    /// of its first Base 64 character) picks its shard with a mask; four per core, so that two of
    /// the flows the cores run at once seldom meet on one shard.
    let shardCount: Int
    /// `shardCount - 1`.
    let mask: Int

    let tenants: [LockedValue<TenantDirectory>]
    let sessions: [LockedValue<SessionShard>]
    let users: [LockedValue<UserShard>]
    let grants: [LockedValue<GrantShard>]

    /// Shards for `cores` cores: four per core, rounded up to a power of two, from 16 (two random
    /// flows on different shards 15 times in 16 however few the cores) to 64 (the routes a token's
    /// first character can carry).
    static func shardCount(cores: Int) -> Int {
        var count = 16
        while count < 4 * cores, count < ShardRouting.routes { count *= 2 }
        return count
    }

    init(shardCount: Int = ServerState.shardCount(cores: Processors.available)) {
        precondition(shardCount > 0 && shardCount & (shardCount - 1) == 0 && shardCount <= ShardRouting.routes,
                     "a power of two up to \(ShardRouting.routes) shards")
        self.shardCount = shardCount
        mask = shardCount - 1
        tenants = (0..<shardCount).map { _ in LockedValue(TenantDirectory(), label: "IdpServer.tenants") }
        sessions = (0..<shardCount).map { _ in LockedValue(SessionShard(), label: "IdpServer.sessions") }
        users = (0..<shardCount).map { _ in LockedValue(UserShard(), label: "IdpServer.users") }
        grants = (0..<shardCount).map { _ in LockedValue(GrantShard(), label: "IdpServer.grants") }
    }

    /// The tenant's configuration, read from the replica `stripe` (any index spreads the readers;
    /// callers pass the route they use next). A leaf lock: nothing else is held.
    func tenant(_ tenantId: String, stripe: Int) -> TenantConfiguration? {
        tenants[stripe & mask].withLock { $0.tenants[tenantId] }
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
        sessions[ShardRouting.route(of: sessionCode) & mask]
    }

    func userShard(_ key: UserKey) -> LockedValue<UserShard> {
        users[key.hash & mask]
    }

    func grantShard(_ token: String) -> LockedValue<GrantShard> {
        grants[ShardRouting.route(of: token) & mask]
    }

    /// The grant shard of route `route` (``ShardRouting``).
    func grantShard(route: Int) -> LockedValue<GrantShard> {
        grants[route & mask]
    }
}

/// Every tenant's configuration. Written only by administration; replicated once per shard so
/// that readers spread over locks.
struct TenantDirectory {
    var tenants: [String: TenantConfiguration] = [:]
}

/// Where a grant or a session lives: a token's route is its first Base 64 character's value (six
/// bits), and its shard the route masked to the server's shard count, so a code and every token it
/// leads to can be made to share one shard, whatever the count.
enum ShardRouting {
    /// How many routes a token carries: the most shards of a kind.
    static let routes = 64

    /// A random token (URL-safe Base 64 of `byteCount` bytes) on route `route`: the first byte's
    /// six high bits are the route (a 32-byte token keeps 250 random bits).
    static func token(byteCount: Int = 32, route: Int) -> String {
        SecureRandom.token(byteCount: byteCount) { bytes in
            bytes[0] = (bytes[0] & 0b0000_0011) | UInt8(truncatingIfNeeded: route & (routes - 1)) << 2
        }
    }

    /// The route of any text: its first character's Base 64 value; 0 for text that is not a
    /// token of this server (which then is found nowhere, as before).
    static func route(of token: String) -> Int {
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
        return Int(value)
    }
}
