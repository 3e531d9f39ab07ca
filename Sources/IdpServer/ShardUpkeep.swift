import IdpPrimitives

/// A shard whose storage grows without allocating under its lock (an ``IncrementalTable``'s spare
/// table, an ``ExpiryQueue``'s, ``GrantLog``'s or ``AuditRing``'s next chunk): what it asks for is made after the
/// shard's lock is released, through `LockedValue.withLockThenUpkeep(_:)`.
protocol UpkeptShard {
    associatedtype Upkeep: ShardUpkeep
    /// Whether any table has upkeep to hand out.
    var upkeepDue: Bool { get }
    /// Hands out every table's upkeep (under the lock: it moves a few words).
    mutating func takeUpkeep() -> Upkeep
    /// Takes the spares `upkeep` made into the tables that still want them (under the lock).
    mutating func install(_ upkeep: inout Upkeep)
}

/// The upkeep of one shard's tables, done after its lock.
protocol ShardUpkeep {
    /// Makes the spares the tables asked for (outside the lock); returns whether it made any.
    mutating func makeSpares() -> Bool
}

/// A request for one chunk of empty slots, made after its owner's lock: what an ``ExpiryQueue``,
/// a ``GrantLog`` or an ``AuditRing`` asks for when its tail will need a chunk and it has no
/// spare (its `takeUpkeep()`), and hands in under the lock again (its `install(_:)`).
struct ChunkUpkeep<Element>: ShardUpkeep {
    typealias Chunk = ContiguousArray<Element?>
    /// The slots of the chunk asked for; 0 for none.
    let slots: Int
    /// The chunk, made by ``makeSpares()``; taken by the owner that installs it.
    var chunk: Chunk?

    /// A request for a chunk of `slots` slots, or (0) none.
    init(slots: Int = 0) { self.slots = slots }

    /// An empty chunk of `slots` slots, every one written (so its pages are mapped when it is
    /// made, not one by one by later appends).
    static func makeChunk(slots: Int) -> Chunk { Chunk(repeating: nil, count: slots) }

    /// Makes the chunk asked for, if any (outside the lock); returns whether it made one.
    mutating func makeSpares() -> Bool {
        guard slots > 0, chunk == nil else { return false }
        chunk = Self.makeChunk(slots: slots)
        return true
    }
}

extension ChunkUpkeep: Sendable where Element: Sendable {}

extension LockedValue where Value: UpkeptShard {
    /// Runs `body` under the lock, then does the upkeep its tables asked for after the lock: a
    /// drained table is freed, and a spare asked for is made and handed in under the lock again.
    /// - Warning: Call it with no other lock held; under another lock use
    ///   ``withLockTakingUpkeep(_:)`` and ``upkeep(_:)`` after that lock too.
    @inline(__always)
    func withLockThenUpkeep<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        let (result, upkeep) = try withLockTakingUpkeep(body)
        if let upkeep { self.upkeep(upkeep) }
        return result
    }

    /// Runs `body` under the lock and takes out its tables' upkeep, for ``upkeep(_:)`` once no
    /// lock is held.
    @inline(__always)
    func withLockTakingUpkeep<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> (Result, Value.Upkeep?) {
        var upkeep: Value.Upkeep?
        let result = try withLock { (shard) throws(Failure) -> Result in
            defer { if _slowPath(shard.upkeepDue) { upkeep = shard.takeUpkeep() } }
            return try body(&shard)
        }
        return (result, upkeep)
    }

    /// Does `upkeep` (from ``withLockTakingUpkeep(_:)``): makes the spares asked for and hands
    /// them in; what is freed is freed here, after the lock.
    func upkeep(_ upkeep: Value.Upkeep) {
        var upkeep = upkeep
        guard upkeep.makeSpares() else { return }
        withLock { $0.install(&upkeep) }
    }
}
