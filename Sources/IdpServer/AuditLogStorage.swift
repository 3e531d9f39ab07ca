import Dispatch
import IdpPrimitives

/// Where an audit entry stands in the log's total order, taken when the entry is appended.
///
/// Ordered by `uptime`, then `shard`, then `sequence`. An append reads the monotonic clock
/// under its shard's lock and returns only once the clock has moved past the value it read, so
/// an entry appended after another's append returned has a greater `uptime`: the order extends
/// happens-before. Within a shard, `uptime` never decreases and `sequence` counts up, so a
/// shard's entries are in the order they were appended.
struct AuditOrderKey: Comparable, Sendable {
    /// `DispatchTime.now().uptimeNanoseconds`, read under the shard's lock.
    var uptime: UInt64
    var shard: Int
    /// The entry's number among its shard's appends.
    var sequence: UInt64

    static func < (lhs: AuditOrderKey, rhs: AuditOrderKey) -> Bool {
        if lhs.uptime != rhs.uptime { return lhs.uptime < rhs.uptime }
        if lhs.shard != rhs.shard { return lhs.shard < rhs.shard }
        return lhs.sequence < rhs.sequence
    }
}

/// One shard of the audit log: its ring and the counters its order keys are taken from.
struct AuditShard: Sendable {
    typealias Kept = (key: AuditOrderKey, entry: AuditEntry)
    typealias Ring = AuditRing<Kept>
    var ring: Ring
    var sequence: UInt64 = 0
    var lastUptime: UInt64 = 0

    init(capacity: Int) { ring = AuditRing(capacity: capacity) }
}

extension AuditShard: UpkeptShard {
    var upkeepDue: Bool { ring.wantsChunk }
    mutating func takeUpkeep() -> Ring.Upkeep { ring.takeUpkeep() }
    mutating func install(_ upkeep: inout Ring.Upkeep) { ring.install(&upkeep) }
}

/// The IDP's audit log, split into as many shards as the server state has of each kind
/// (``ServerState/shardCount``), so that requests of different users and threads seldom append
/// under one lock.
///
/// - A batch of entries (one decision's) goes to one shard, together: the shard of its first
///   entry's user (the user's shard of the server state, so a user's decisions are in one
///   shard), or for entries that name no user, the calling thread's ``ThreadStripe``.
/// - Each shard keeps the newest `capacity` entries appended to it and drops its oldest first;
///   the log is the union of what the shards keep.
/// - A read takes the clock first, then copies each shard in turn and keeps the entries whose
///   order key is below that time: every entry whose append returned before the read began is
///   there, and with any entry, every entry ordered before it (the read is a prefix of the
///   order, not a mix of shards caught at different moments). The reader sorts by order key.
struct AuditLog: Sendable {
    private let shards: [LockedValue<AuditShard>]
    private let mask: Int

    init(capacity: Int, shardCount: Int) {
        let site = LockProfiler.Site(label: "IdpServer.audit")
        shards = (0..<shardCount).map { _ in LockedValue(AuditShard(capacity: capacity), site: site) }
        mask = shardCount - 1
    }

    /// Appends `entries` together to one shard, in order.
    func append<Entries: Collection<AuditEntry>>(_ entries: Entries) {
        guard !entries.isEmpty else { return }
        let index: Int
        var named: (tenant: String, user: String)?
        for entry in entries {
            if let user = entry.userId {
                named = (entry.tenant, user)
                break
            }
        }
        if let named {
            index = UserKey(tenant: named.tenant, user: named.user).hashValue & mask
        } else {
            index = ThreadStripe.current & mask
        }
        // The ring's next chunk, when it asks for one, is made after the lock and handed in; an
        // append that would need it before it arrives makes one after the lock and tries again.
        var appended: UInt64?
        while appended == nil {
            appended = shards[index].withLockThenUpkeep { shard -> UInt64? in
                guard shard.ring.fits(entries.count) else { return nil }
                let uptime = max(DispatchTime.now().uptimeNanoseconds, shard.lastUptime)
                shard.lastUptime = uptime
                for entry in entries {
                    shard.sequence += 1
                    shard.ring.append((AuditOrderKey(uptime: uptime, shard: index, sequence: shard.sequence), entry))
                }
                return uptime
            }
            if appended == nil { shards[index].upkeep(AuditShard.Ring.Upkeep(slots: shards[index].withLock { $0.ring.chunkSlotsToMake })) }
        }
        let uptime = appended ?? 0
        // Not before the clock has passed this key: a later append, on any thread, then reads a
        // greater time. With a nanosecond clock the first read is almost always past it already.
        while DispatchTime.now().uptimeNanoseconds <= uptime {}
    }

    /// How many chunks the shards' rings made under their locks, for want of one made after them.
    var chunksMadeUnderLock: Int { shards.reduce(0) { $0 + $1.withLock { $0.ring.chunksMadeUnderLock } } }

    /// The kept entries that `isIncluded` accepts, oldest first (see the type's note on reads).
    /// - Parameter isIncluded: Runs under each shard's lock in turn: a cheap test of the entry.
    func entries(where isIncluded: (AuditEntry) -> Bool = { _ in true }) -> [AuditEntry] {
        let cut = DispatchTime.now().uptimeNanoseconds
        var found: [(key: AuditOrderKey, entry: AuditEntry)] = []
        for shard in shards {
            let part = shard.withLock { shard in shard.ring.elements { $0.key.uptime < cut && isIncluded($0.entry) } }
            found.append(contentsOf: part)
        }
        found.sort { $0.key < $1.key }
        return found.map(\.entry)
    }
}
