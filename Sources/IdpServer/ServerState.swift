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

/// Keys in the order they were entered, each with when it expires: what a shard prunes from, a
/// few entries per request, instead of scanning its tables under its lock. Entries lie in a
/// ``ChunkList``: a queue grows by one chunk at a time and never copies its entries, and a chunk
/// emptied at the head is kept to be filled at the tail, so once a shard's traffic is steady the
/// queue neither allocates nor frees.
///
/// No chunk is made under the shard's lock: the first is made with the queue, and at its first
/// append and whenever the tail starts a chunk with no spare left, the queue asks for one
/// (``wantsChunk``, ``takeUpkeep()``), which its owner makes after the lock (writing, and so
/// mapping, every page of it) and hands in (``install(_:)``) long before the 256 slots of the tail
/// chunk fill. A tail that fills first makes its own (``chunksMadeUnderLock``).
///
/// Entries of one queue expire in the order they were entered when they share one lifetime (a
/// session shard's do); one that outlives an entry behind it holds that entry
/// back until it expires itself, which costs memory for a while, never correctness: every read
/// checks expiry itself.
struct ExpiryQueue<Key> {
    typealias Entry = (key: Key, expiresAt: Date)
    typealias Upkeep = ChunkUpkeep<Entry>

    /// Slots per chunk.
    static var chunkCapacity: Int { ChunkList<Entry>.capacity }
    /// The chunks, 18 KiB of 72-byte slots each; the head chunk is the first not emptied.
    private var chunks = ChunkList<Entry>()
    /// The oldest entry's slot in the head chunk.
    private var offset = 0
    /// The next free slot in the last chunk.
    private var tailOffset = 0
    private(set) var count = 0
    /// When the oldest entry expires (the distant future when the queue is empty): kept here, in
    /// the queue's own words, so that a prune that finds nothing expired reads no chunk.
    private var oldestExpiry = Date.distantFuture

    /// Whether the queue has no spare chunk and has not asked for one yet: a new queue asks at its
    /// first append.
    var wantsChunk: Bool { chunks.wantsChunk }
    /// How many chunks the tail had to make under the lock, for want of a spare.
    var chunksMadeUnderLock: Int { chunks.chunksMadeUnderLock }

    /// Enters `key`, which expires at `expiresAt`; returns ``wantsChunk``, for the owner to note
    /// that it has upkeep to hand out.
    @discardableResult
    mutating func append(_ key: Key, expiresAt: Date) -> Bool {
        if tailOffset == Self.chunkCapacity {
            chunks.addChunk()
            tailOffset = 0
        }
        chunks[chunks.count - 1, tailOffset] = (key, expiresAt)
        tailOffset += 1
        if count == 0 { oldestExpiry = expiresAt }
        count += 1
        return wantsChunk
    }

    /// Takes out up to `limit` of the oldest entries that expired by `now`, passing each key to
    /// `body`.
    mutating func popExpired(now: Date, limit: Int, _ body: (Key) -> Void) {
        var popped = 0
        while popped < limit, oldestExpiry <= now, let entry = chunks[chunks.emptied, offset].take() {
            offset += 1
            count -= 1
            popped += 1
            if offset == Self.chunkCapacity {
                _ = chunks.dropHeadChunk()
                offset = 0
            }
            oldestExpiry = count > 0 ? chunks[chunks.emptied, offset]?.expiresAt ?? .distantFuture : .distantFuture
            body(entry.key)
        }
    }

    /// Hands out the queue's request for a chunk, if any, to be made after the lock.
    mutating func takeUpkeep() -> Upkeep { chunks.takeUpkeep() }

    /// Takes the chunk `upkeep` made as the spare, if the queue still has none; a chunk not taken
    /// stays in `upkeep`, for its holder to release after the lock.
    mutating func install(_ upkeep: inout Upkeep) { chunks.install(&upkeep) }
}

/// A table an ``ExpiryQueue`` prunes.
protocol PrunedTable<Key, Value> {
    associatedtype Key: Hashable
    associatedtype Value
    subscript(key: Key) -> Value? { get }
    mutating func removeValue(forKey key: Key) -> Value?
}

extension IncrementalTable: PrunedTable {}

extension ExpiryQueue where Key: Hashable {
    /// Drops from `table` up to two of this queue's keys that expired by `before`
    /// (``prunedPerRequest``), each only if its entry in `table` expired by then too (`expiresAt`):
    /// a key entered again with a later expiry stays. Table and queue are changed in place; the
    /// entries dropped are returned, for the caller to release after its lock.
    @discardableResult
    mutating func prune<Table: PrunedTable>(_ table: inout Table, before: Date, expiresAt: (Table.Value) -> Date) -> Pruned<Table.Value>
    where Table.Key == Key {
        var pruned = Pruned<Table.Value>()
        popExpired(now: before, limit: prunedPerRequest) { key in
            if let value = table[key], expiresAt(value) <= before { pruned.keep(table.removeValue(forKey: key)) }
        }
        return pruned
    }
}

extension ExpiryQueue: Sendable where Key: Sendable {}

/// The entries one prune dropped (at most ``prunedPerRequest``), moved out of their table so that
/// whoever holds this releases them, and frees what they own, after the lock is released.
struct Pruned<Value> {
    private var first: Value?
    private var second: Value?

    mutating func keep(_ value: Value?) {
        if first == nil { first = value } else { second = value }
    }

    /// How many of the dropped entries satisfy `predicate`.
    func count(where predicate: (Value) -> Bool) -> Int {
        (first.map(predicate) == true ? 1 : 0) + (second.map(predicate) == true ? 1 : 0)
    }
}

/// How many expired entries a queue drops each time a key is entered into it: more than the one
/// entered, so a queue drains, and few enough that the lock is held for nanoseconds.
let prunedPerRequest = 2

/// How long an expired code, token or session is kept before it is pruned: a day, so that one
/// presented late is told as expired, not as unknown.
let keptAfterExpiry: TimeInterval = 24 * 3600

/// Login flows in progress, by session code (a ``GrantKey``: a probe compares and hashes the
/// code's bytes inline, and a removal that moves its neighbours rehashes theirs without following
/// a pointer), in an ``IncrementalTable``: a shard that outgrows its table moves a few sessions
/// per change into a larger one made after the lock, instead of rehashing every session, into
/// memory first touched, under it.
struct SessionShard {
    private var sessions = IncrementalTable<GrantKey, AuthSession>()
    private var expiries = ExpiryQueue<GrantKey>()
    /// Whether the expiry queue asked for a chunk.
    private var expiriesWantChunk = false

    /// The session `code`, if it is open.
    func session(_ code: GrantKey) -> AuthSession? { sessions[code] }

    /// How many sessions are open (or expired and not yet pruned).
    var count: Int { sessions.count }

    /// Opens a session; returns the sessions it pruned (a few that expired a day ago or more).
    mutating func open(_ session: AuthSession, code: GrantKey, now: Date) -> Pruned<AuthSession> {
        let pruned = expiries.prune(&sessions, before: now.addingTimeInterval(-keptAfterExpiry)) { $0.expiresAt }
        let expiresAt = session.expiresAt
        sessions.updateValue(session, forKey: code)
        expiriesWantChunk = expiries.append(code, expiresAt: expiresAt) || expiriesWantChunk
        return pruned
    }

    /// Writes what a step decided (``StepDecision/SessionWrite``) to the session `code` if it is
    /// still at `revision` and `alongside` (the rest of the commit, run while the session is
    /// checked and not yet written) agrees: a stored session is the next revision. One lookup;
    /// the session is moved out of its slot and back, never copied. Returns whether it committed,
    /// and the session it replaced or removed, for the caller to release after the lock.
    mutating func commit(_ write: StepDecision.SessionWrite, code: GrantKey, ifRevision revision: UInt64,
                         alongside: () -> Bool) -> (committed: Bool, replaced: AuthSession?) {
        sessions.withValue(forKey: code) { session in
            guard session?.revision == revision, alongside() else { return (false, nil) }
            return (true, Self.write(write, to: &session))
        }
    }

    /// Writes what a step decided for the session `code` (``StepDecision/SessionWrite``): a
    /// stored session is the next revision. Returns the session it replaced or removed.
    @discardableResult
    mutating func apply(_ write: StepDecision.SessionWrite, code: GrantKey) -> AuthSession? {
        if case .none = write { return nil }
        return sessions.withValue(forKey: code) { Self.write(write, to: &$0) }
    }

    /// `write` applied to `session`; returns what it replaced or removed.
    private static func write(_ write: StepDecision.SessionWrite, to session: inout AuthSession?) -> AuthSession? {
        switch write {
        case .none:
            return nil
        case .store(var stored):
            stored.revision = (session?.revision ?? 0) &+ 1
            let replaced = session.take()
            session = consume stored
            return replaced
        case .remove:
            return session.take()
        }
    }
}

/// A user's place in the server: tenant and user id, hashed once when the key is made, so that a
/// lookup under a shard's lock hashes one word instead of two strings.
struct UserKey: Hashable {
    let tenant: String
    let user: String
    /// The hash of tenant and user id.
    let hash: Int

    init(tenant: String, user: String) {
        self.tenant = tenant
        self.user = user
        var hasher = Hasher()
        hasher.combine(tenant)
        hasher.combine(user)
        hash = hasher.finalize()
    }

    static func == (lhs: UserKey, rhs: UserKey) -> Bool {
        lhs.hash == rhs.hash && lhs.tenant == rhs.tenant && lhs.user == rhs.user
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}

/// User records by tenant and id: plain values, changed in place under the shard's lock (a
/// write goes to one entry; nothing is copied on the way). Every change makes a new
/// ``UserRecord/revision``, so a step decided on a copy of a record (`StepDecision`) can tell, when
/// it commits, whether the record is still the one it read. The records grow with the users
/// added, so they are an ``IncrementalTable``.
struct UserShard {
    private var records = IncrementalTable<UserKey, UserRecord>()

    subscript(key: UserKey) -> UserRecord? { records[key] }

    /// Stores `record` under `key`, as the next revision of what is there.
    mutating func store(_ record: UserRecord, for key: UserKey) {
        records.withValue(forKey: key) { stored in
            var record = record
            record.revision = (stored?.revision ?? 0) &+ 1
            stored = record
        }
    }

    /// What ``commit(_:for:ifRevision:)`` did.
    enum Commit {
        /// The record under the key is no longer the revision the caller read: nothing changed.
        case stale
        /// The record is stored (or, with none to store, the one there is still current);
        /// `replaced`: the record it replaced, for the caller to release after the lock.
        case committed(replaced: UserRecord?)
    }

    /// Stores `record` under `key`, as the next revision, if the record there is still at
    /// `revision` (`nil`: there is none); with no `record`, only checks that. One lookup; the
    /// revision is read in place, and the record stored is swapped in, so nothing is copied.
    mutating func commit(_ record: UserRecord?, for key: UserKey, ifRevision revision: UInt64?) -> Commit {
        records.withValue(forKey: key) { stored in
            guard stored?.revision == revision else { return .stale }
            guard var record else { return .committed(replaced: nil) }
            record.revision = (revision ?? 0) &+ 1
            guard stored != nil else {
                stored = record
                return .committed(replaced: nil)
            }
            swap(&record, &stored!)
            return .committed(replaced: record)
        }
    }

    /// Changes the record under `key` in place, as its next revision; `nil` if there is none.
    mutating func update<Result, Failure: Error>(_ key: UserKey, _ change: (inout UserRecord) throws(Failure) -> Result) throws(Failure) -> Result? {
        try records.withValue(forKey: key) { (stored) throws(Failure) -> Result? in
            guard stored != nil else { return nil }
            stored!.revision &+= 1
            return try change(&stored!)
        }
    }
}

extension SessionShard: UpkeptShard {
    /// The expiry queue's chunk and the table's spare, made after the lock; the table's drained
    /// storage, released with it.
    struct Upkeep: ShardUpkeep {
        var expiries = ExpiryQueue<GrantKey>.Upkeep()
        var table = TableUpkeep<GrantKey, AuthSession>()

        mutating func makeSpares() -> Bool {
            let madeChunk = expiries.makeSpares()
            return table.makeSpares() || madeChunk
        }
    }

    var upkeepDue: Bool { expiriesWantChunk || sessions.upkeepDue }

    /// How many chunks the expiry queue made under the lock, for want of a spare.
    var chunksMadeUnderLock: Int { expiries.chunksMadeUnderLock }

    /// How many tables the session table made under the lock, for want of a spare.
    var tablesMadeUnderLock: Int { sessions.tablesMadeUnderLock }

    mutating func takeUpkeep() -> Upkeep {
        expiriesWantChunk = false
        return Upkeep(expiries: expiries.takeUpkeep(), table: sessions.takeUpkeep())
    }

    mutating func install(_ upkeep: inout Upkeep) {
        expiries.install(&upkeep.expiries)
        sessions.install(&upkeep.table)
    }
}

extension UserShard: UpkeptShard {
    var upkeepDue: Bool { records.upkeepDue }
    mutating func takeUpkeep() -> TableUpkeep<UserKey, UserRecord> { records.takeUpkeep() }
    mutating func install(_ upkeep: inout TableUpkeep<UserKey, UserRecord>) { records.install(&upkeep) }
}

/// A session code as a table key: its UTF-8 bytes packed into six words, so a table probe
/// compares and hashes inline bytes instead of following each probed key to its string's
/// storage. Texts of up to 48 bytes map one to one; a longer text, which
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

    /// Hashes the first 16 bytes and the length: every session code this server issues is random
    /// there (at least 122 bits once the route is set), so more bytes would spread keys no better,
    /// and a table probe, done under its shard's lock, hashes a third as much. Equality still
    /// compares every byte.
    func hash(into hasher: inout Hasher) {
        hasher.combine(length)
        hasher.combine(words.0)
        hasher.combine(words.1)
    }
}

/// Codes, tokens and token families whose handles route here (``ShardRouting``), each kind in a
/// ``GrantLog``: the order they were issued in, at positions their handles name.
///
/// Each change is a few log operations on values made before the lock. Storing a grant appends it
/// at its log's tail and first drops up to ``prunedPerRequest`` grants of that log that expired a
/// day ago or more, so a shard is pruned by its own traffic, a few entries at a time, and never
/// scanned; what was dropped is handed out of the lock (``Pruned``). The logs' next chunks are
/// made after the lock (``withLockThenUpkeep(_:)``).
struct GrantShard {
    /// Authorization codes, issued and redeemed: a redeemed code is kept until it would have
    /// expired, so reuse is told apart from an unknown code and can revoke what the first use
    /// issued (RFC 6749 §4.1.2). Redeeming changes the code's entry where it lies.
    private(set) var codes = GrantLog<CodeEntry>(.codes)
    /// How many of ``codes`` are redeemed.
    private(set) var redeemedCodeCount = 0
    /// Tokens by lifetime: access and exchanged tokens, refresh tokens, offline tokens.
    private var shortTokens = GrantLog<TokenRecord>(.shortTokens)
    private var refreshTokens = GrantLog<TokenRecord>(.refreshTokens)
    private var offlineTokens = GrantLog<TokenRecord>(.offlineTokens)
    /// Token families: everything one code redemption issued and every rotation and exchange
    /// since. A token is revoked exactly when its family is gone (revoked or ended): revocation
    /// removes one entry, and a family keeps no list of its tokens. Named by position
    /// (``FamilyID``): no client ever presents one.
    private var families = GrantLog<FamilyState>(.codes)
    /// Whether a log asked for a chunk since the shard last handed out its upkeep.
    private(set) var upkeepDue = false

    /// How many of ``codes`` are issued and not redeemed.
    var outstandingCodeCount: Int { codes.count - redeemedCodeCount }

    /// How many tokens are stored.
    var tokenCount: Int { shortTokens.count + refreshTokens.count + offlineTokens.count }

    /// Every stored token's handle: for inspection (statistics, tests), never under a flow's lock.
    var tokenHandles: [GrantHandle] { shortTokens.handles + refreshTokens.handles + offlineTokens.handles }

    /// Stores an issued code, placing `draft`; returns its handle and the expired codes it pruned.
    mutating func addCode(_ code: CodeRecord, as draft: GrantHandle, now: Date) -> (GrantHandle, Pruned<CodeEntry>) {
        let pruned = codes.prune(before: now.addingTimeInterval(-keptAfterExpiry)) { $0.expiresAt }
        redeemedCodeCount -= pruned.count { if case .redeemed = $0 { true } else { false } }
        let handle = codes.append(.issued(code), as: draft, expiresAt: code.expiresAt)
        upkeepDue = upkeepDue || codes.wantsChunk
        return (handle, pruned)
    }

    /// The record of the code `code` while it is issued: read in a section of its own, so that the
    /// request's checks against it (``PresentedCode/verdict(on:)``: comparisons of strings whose
    /// bytes lie outside the log) run after the lock, and the redemption's section decides on
    /// their verdict (``redeem(_:_:checked:familyEndsAt:forgetAt:keepsCode:now:)``).
    func issuedRecord(_ code: GrantHandle) -> CodeRecord? {
        if case .issued(let record)? = codes[code] { return record }
        return nil
    }

    /// Decides the code `code`, presented for redemption by `presented`, with one lookup: an
    /// issued code the request may redeem is marked redeemed where it lies, and the family its
    /// redemption opens is reserved (ending at `familyEndsAt`), to be opened in a section of its
    /// own (``openFamily(_:_:)``); a redeemed code has the family it opened revoked and is marked.
    /// An expired code is dropped; another refusal leaves the code redeemable.
    /// - Parameters:
    ///   - checked: The verdict on the code's issued record, reached before the lock
    ///     (``issuedRecord(_:)``); used while the code's entry still holds that record, and
    ///     otherwise reached here.
    ///   - keepsCode: ``PlantedBug/idpCodeStaysRedeemable``: a redeemed code stays issued.
    mutating func redeem(_ code: GrantHandle, _ presented: PresentedCode, checked: CheckedCode?, familyEndsAt: Date, forgetAt: Date,
                         keepsCode: Bool, now: Date) -> CodeRedemption {
        /// What the code's entry decided, before the shard's other logs are changed.
        enum Found {
            case unknown, reused(FamilyID), refused(CodeRefusal, CodeRecord), kept(CodeRecord), redeemed(CodeRecord)
        }
        // The family's place, taken only if the code is redeemed: the position the next append
        // gives it, read before the code's entry is changed.
        let family = FamilyID(position: families.tail)
        let found: Found = codes.withRecord(code) { entry in
            switch entry {
            case nil:
                return .unknown
            case .redeemed(var redeemed)?:
                if !redeemed.revokedFamily {
                    redeemed.revokedFamily = true
                    entry = .redeemed(redeemed)
                }
                return .reused(redeemed.family)
            case .issued(let record)?:
                let verdict = checked.flatMap { $0.record === record ? $0.verdict : nil } ?? presented.verdict(on: record)
                switch verdict {
                case .otherTenant:
                    return .unknown
                case .refused(let refusal):
                    if refusal == .expired { entry = nil }
                    return .refused(refusal, record)
                case .redeemable:
                    guard !keepsCode else { return .kept(record) }
                    entry = .redeemed(RedeemedCode(forgetAt: forgetAt, family: family))
                    return .redeemed(record)
                }
            }
        }
        switch found {
        case .unknown: return .unknown
        case .reused(let family): return .reused(revoked: revokeFamily(family))
        case .refused(let refusal, let record): return .refused(refusal, record)
        case .kept(let record): return .redeemed(record, family: reserveFamily(endingAt: familyEndsAt, now: now))
        case .redeemed(let record):
            redeemedCodeCount += 1
            let reserved = reserveFamily(endingAt: familyEndsAt, now: now)
            assert(reserved.family == family, "a family's place is the log's tail")
            return .redeemed(record, family: reserved)
        }
    }

    /// Appends a reserved family ending at `endsAt`; returns its id and the families it pruned.
    private mutating func reserveFamily(endingAt endsAt: Date, now: Date) -> ReservedFamily {
        let pruned = families.prune(before: now.addingTimeInterval(-keptAfterExpiry)) { $0.expiresAt }
        let handle = families.append(.reserved(expiresAt: endsAt), as: .blank, expiresAt: endsAt)
        upkeepDue = upkeepDue || families.wantsChunk
        return ReservedFamily(family: FamilyID(position: handle.position), pruned: pruned)
    }

    /// Opens `family`, reserved by its code's redemption: its tokens are live from now until it
    /// ends or is revoked. A family revoked in between (its code was presented again) stays
    /// revoked.
    mutating func openFamily(_ family: FamilyID, _ value: TokenFamily) {
        families.withRecord(position: family.position) { state in
            if case .reserved? = state { state = .open(value) }
        }
    }

    /// The open family `family`, if it is neither revoked nor ended.
    func family(_ family: FamilyID) -> TokenFamily? {
        if case .open(let value)? = families[position: family.position] { return value }
        return nil
    }

    /// Whether `token`'s family has been revoked (or has ended, or was never opened): then the
    /// token is revoked too.
    func isRevoked(_ token: TokenRecord) -> Bool {
        family(token.family) == nil
    }

    /// Revokes every token of `family`: what reuse of a rotated refresh token does (OAuth 2.0
    /// Security BCP §4.14.2). Returns the family, for the caller to release after the lock.
    @discardableResult
    mutating func revokeFamily(_ family: FamilyID) -> TokenFamily? {
        let removed = families.withRecord(position: family.position) { $0.take() }
        if case .open(let value)? = removed { return value }
        return nil
    }

    /// The token `token` names, if it is stored.
    func token(_ token: GrantHandle) -> TokenRecord? {
        switch token.log {
        case .shortTokens: shortTokens[token]
        case .refreshTokens: refreshTokens[token]
        case .offlineTokens: offlineTokens[token]
        case .codes: nil
        }
    }

    /// Marks the refresh or offline token `token` rotated: presenting it again is reuse.
    mutating func markRotated(_ token: GrantHandle) {
        switch token.log {
        case .refreshTokens: refreshTokens.withRecord(token) { $0?.rotated = true }
        case .offlineTokens: offlineTokens.withRecord(token) { $0?.rotated = true }
        case .shortTokens, .codes: break
        }
    }

    /// Stores `record`, placing `draft` in the log of its kind; returns the token's handle and the
    /// expired tokens of its kind it pruned.
    mutating func add(_ record: TokenRecord, as draft: GrantHandle, now: Date) -> (GrantHandle, Pruned<TokenRecord>) {
        let before = now.addingTimeInterval(-keptAfterExpiry)
        // The log is changed in place: a copy of a log would copy its chunks' list.
        let result: (GrantHandle, Pruned<TokenRecord>)
        switch record.kind {
        case .access, .exchanged:
            let pruned = shortTokens.prune(before: before) { $0.expiresAt }
            result = (shortTokens.append(record, as: draft, expiresAt: record.expiresAt), pruned)
            upkeepDue = upkeepDue || shortTokens.wantsChunk
        case .refresh:
            let pruned = refreshTokens.prune(before: before) { $0.expiresAt }
            result = (refreshTokens.append(record, as: draft, expiresAt: record.expiresAt), pruned)
            upkeepDue = upkeepDue || refreshTokens.wantsChunk
        case .offline:
            let pruned = offlineTokens.prune(before: before) { $0.expiresAt }
            result = (offlineTokens.append(record, as: draft, expiresAt: record.expiresAt), pruned)
            upkeepDue = upkeepDue || offlineTokens.wantsChunk
        }
        return result
    }
}

/// A family reserved by a code's redemption (``GrantShard/redeem(_:_:checked:familyEndsAt:forgetAt:keepsCode:now:)``).
struct ReservedFamily {
    let family: FamilyID
    /// The expired families reserving it pruned, released after the lock.
    let pruned: Pruned<FamilyState>
}

extension GrantShard: UpkeptShard {
    /// The upkeep of the shard's logs: their requests for chunks.
    struct Upkeep: ShardUpkeep {
        var codes = GrantLog<CodeEntry>.Upkeep(), shortTokens = GrantLog<TokenRecord>.Upkeep(), refreshTokens = GrantLog<TokenRecord>.Upkeep()
        var offlineTokens = GrantLog<TokenRecord>.Upkeep(), families = GrantLog<FamilyState>.Upkeep()

        mutating func makeSpares() -> Bool {
            let made = [codes.makeSpares(), shortTokens.makeSpares(), refreshTokens.makeSpares(), offlineTokens.makeSpares(), families.makeSpares()]
            return made.contains(true)
        }
    }

    /// How many chunks the shard's logs made under its lock, for want of a spare.
    var chunksMadeUnderLock: Int {
        codes.chunksMadeUnderLock + shortTokens.chunksMadeUnderLock + refreshTokens.chunksMadeUnderLock + offlineTokens.chunksMadeUnderLock
            + families.chunksMadeUnderLock
    }

    mutating func takeUpkeep() -> Upkeep {
        upkeepDue = false
        return Upkeep(codes: codes.takeUpkeep(), shortTokens: shortTokens.takeUpkeep(), refreshTokens: refreshTokens.takeUpkeep(),
                      offlineTokens: offlineTokens.takeUpkeep(), families: families.takeUpkeep())
    }

    mutating func install(_ upkeep: inout Upkeep) {
        codes.install(&upkeep.codes)
        shortTokens.install(&upkeep.shortTokens)
        refreshTokens.install(&upkeep.refreshTokens)
        offlineTokens.install(&upkeep.offlineTokens)
        families.install(&upkeep.families)
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
    /// Bumped by every change stored in the user's shard (``UserShard``).
    var revision: UInt64 = 0

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

    /// This record with `written` (a decision made on the stale copy `read`) committed over it
    /// as ``PlantedBug/idpCountsFailureOnStaleCopy`` commits it: the lockout counters and the
    /// decision number are the stale copy's, lost updates; every other field the decision
    /// changed is applied to this record, so only the counting is wrong.
    func withLostUpdate(from written: UserRecord, read: UserRecord?) -> UserRecord {
        var merged = self
        merged.failedAttempts = written.failedAttempts
        merged.totalFailedAttempts = written.totalFailedAttempts
        merged.lockouts = written.lockouts
        merged.lockedUntil = written.lockedUntil
        merged.permanentlyLocked = written.permanentlyLocked
        merged.decisions = written.decisions
        if written.status != read?.status { merged.status = written.status }
        if written.passwordHash != read?.passwordHash { merged.passwordHash = written.passwordHash }
        merged.activationCodes.apply(changes: written.activationCodes, since: read?.activationCodes ?? [:])
        merged.passwordResetCodes.apply(changes: written.passwordResetCodes, since: read?.passwordResetCodes ?? [:])
        merged.attributes.apply(changes: written.attributes, since: read?.attributes ?? [:])
        merged.astClientIds += written.astClientIds.filter { !(read?.astClientIds.contains($0) ?? false) && !merged.astClientIds.contains($0) }
        return merged
    }

    /// Whether `digest` (a secret's ``hash(_:salt:)`` under this user's salt) is the password's.
    func passwordMatches(digest: [UInt8]) -> Bool {
        guard let passwordHash else { return false }
        return ConstantTime.equals(digest, passwordHash)
    }
}

/// A new password a flow sets when it completes: its digest, and the salt it was made with.
struct PendingPassword {
    let digest: [UInt8]
    let salt: [UInt8]

    /// The digest, if it was made with `salt` (the user's).
    func digest(forSalt salt: [UInt8]) -> [UInt8]? { salt == self.salt ? digest : nil }
}

/// What an issued code is bound to. A class, since it never changes: a code's entry holds one
/// word for it, and a redemption copies it out with one retain.
final class CodeRecord: Sendable {
    let tenant: String
    let clientId: String
    let userId: String
    let redirectURI: String
    let codeChallenge: String
    let codeChallengeMethod: String
    let astClientId: String
    let expiresAt: Date

    init(tenant: String, clientId: String, userId: String, redirectURI: String, codeChallenge: String, codeChallengeMethod: String,
         astClientId: String, expiresAt: Date) {
        self.tenant = tenant
        self.clientId = clientId
        self.userId = userId
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
        self.astClientId = astClientId
        self.expiresAt = expiresAt
    }
}

/// An authorization code's entry in its shard.
enum CodeEntry {
    case issued(CodeRecord)
    case redeemed(RedeemedCode)

    /// When the entry expires: the code's expiry while it is issued, then when its redemption is
    /// forgotten.
    var expiresAt: Date {
        switch self {
        case .issued(let record): record.expiresAt
        case .redeemed(let redeemed): redeemed.forgetAt
        }
    }
}

struct RedeemedCode {
    let forgetAt: Date
    /// The family the first redemption opened; revoked if the code is presented again.
    let family: FamilyID
    /// Whether the code was presented again, which revoked its family.
    var revokedFamily = false
}

struct TokenRecord {
    enum Kind: String { case access, refresh, offline, exchanged }
    let kind: Kind
    let tenant: String
    let clientId: String
    let userId: String
    let expiresAt: Date
    let family: FamilyID
    /// The audience of an exchanged token (RFC 8693); `nil` for the MC's own tokens.
    var audience: String? = nil
    /// A refresh or offline token that was exchanged already; presenting it again is reuse.
    var rotated = false
}

/// A token family's id: its position in its shard's family log (``GrantLog``). A family is
/// reached only through its tokens and its code, which live in its shard, never named by a client,
/// so its id needs neither text nor random bits.
struct FamilyID: Hashable, Sendable {
    let position: UInt64
}

/// A token family's entry: reserved by its code's redemption, then open.
enum FamilyState {
    case reserved(expiresAt: Date)
    case open(TokenFamily)

    /// When the family ends.
    var expiresAt: Date {
        switch self {
        case .reserved(let expiresAt): expiresAt
        case .open(let family): family.expiresAt
        }
    }
}

/// One login's tokens, by their ``TokenRecord/family``: the code redemption's and every
/// rotation's and exchange's after it.
struct TokenFamily {
    /// When the family's offline session ends ("Offline Session Max"), fixed at login.
    let expiresAt: Date
    let astClientId: String
}

extension Dictionary where Value: Equatable {
    /// Applies the entries `changed` added, changed or removed since `base`.
    mutating func apply(changes changed: Self, since base: Self) {
        for key in base.keys where changed[key] == nil { removeValue(forKey: key) }
        for (key, value) in changed where base[key] != value { self[key] = value }
    }
}
