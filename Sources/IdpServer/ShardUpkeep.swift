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

extension LockedValue where Value: UpkeptShard {
    /// Runs `body` under the lock, then does the upkeep its tables asked for after the lock: a
    /// drained table is freed, and a spare asked for is made and handed in under the lock again
    /// (``ValueLock/withLockThenGrow(_:request:make:install:)``).
    /// - Warning: Call it with no other lock held; under another lock use
    ///   ``withLockTakingUpkeep(_:)`` and ``upkeep(_:)`` after that lock too.
    @inline(__always)
    func withLockThenUpkeep<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try withLockThenGrow(body, request: { takeUpkeep(&$0) }, make: { madeSpares($0) }, install: { $0.install(&$1) })
    }

    /// Runs `body` under the lock and takes out its tables' upkeep, for ``upkeep(_:)`` once no
    /// lock is held.
    @inline(__always)
    func withLockTakingUpkeep<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> (Result, Value.Upkeep?) {
        try withLockTakingGrowth(body, request: { takeUpkeep(&$0) })
    }

    /// Does `upkeep` (from ``withLockTakingUpkeep(_:)``): makes the spares asked for and hands
    /// them in; what is freed is freed here, after the lock.
    func upkeep(_ upkeep: Value.Upkeep) {
        grow(upkeep, make: { madeSpares($0) }, install: { $0.install(&$1) })
    }
}

/// `shard`'s upkeep, when it has any (under its lock).
@inline(__always)
private func takeUpkeep<Shard: UpkeptShard>(_ shard: inout Shard) -> Shard.Upkeep? {
    _slowPath(shard.upkeepDue) ? shard.takeUpkeep() : nil
}

/// `upkeep` with its spares made (after the lock), or `nil` when it asked for none.
private func madeSpares<Upkeep: ShardUpkeep>(_ upkeep: Upkeep) -> Upkeep? {
    var upkeep = upkeep
    return upkeep.makeSpares() ? upkeep : nil
}
