/// A hash table that grows a few entries at a time, so that no change made under a shard's lock
/// copies the whole table.
///
/// A `Dictionary` that outgrows its storage rehashes every entry into a new one in the insert that
/// found it full; for a table holding every token issued, that insert held the shard's lock for
/// as long as a rehash of the whole table takes. Here a full table becomes the *draining* table
/// and a larger, empty one the *current* table. Each change then moves ``movedPerChange`` entries
/// from the draining table to the current one, so the draining table is empty, and let go, before
/// the current one can fill: it holds at most the draining table's entries and one new entry per
/// change, at most twice what the draining table held, and it has room for that.
///
/// - A lookup reads the current table, then the draining one.
/// - An entry removed while the draining table still holds it leaves a tombstone in the current
///   table, so the stale copy never reappears. Tombstones are dropped when the table next drains.
/// - The larger table is made outside the lock: when the current table is half full the table
///   asks for one (``upkeepDue``, ``takeUpkeep()``), and its owner makes it after the lock and
///   hands it in (``install(_:)``). A table that fills before one arrives makes its own.
/// - A drained table is handed out the same way (``TableUpkeep``), so that whoever holds it frees
///   its storage after the lock.
///
/// Not thread-safe: it is a value kept inside a lock (`LockedValue`).
struct IncrementalTable<Key: Hashable, Value> {
    /// A table's storage: `nil` is a tombstone, an entry removed while the draining table still
    /// held it.
    typealias Storage = [Key: Value?]

    /// How many of the draining table's slots each change walks: at least one, so the draining
    /// table empties before the current one fills; a few, so a change stays nanoseconds.
    static var movedPerChange: Int { 4 }

    /// The smallest capacity a full table drains from; a smaller one grows in place.
    static var drainedCapacity: Int { 48 }

    /// Live entries, in both tables together.
    private(set) var count = 0
    private var current: Storage = [:]
    private var draining: Storage = [:]
    /// The next slot of ``draining`` to move; `nil` when the table is not draining.
    private var cursor: Storage.Index?
    /// An empty table made outside the lock, the next current table.
    private var spare: Storage?
    /// Whether a spare was asked for and not yet handed in.
    private var spareAsked = false
    /// A drained table, kept until its owner takes it out of the lock.
    private var retired: Storage?
    /// Whether ``takeUpkeep()`` has something to hand out.
    private(set) var upkeepDue = false
    /// How many times the table started to drain into a larger one.
    private(set) var drains = 0
    /// How many of those drains found no spare and made their table under the lock.
    private(set) var tablesMadeUnderLock = 0
    private let defect: IncrementalTableDefect?

    /// An empty table.
    /// - Parameter defect: A bug to plant (tests only): see ``IncrementalTableDefect``.
    init(planting defect: IncrementalTableDefect? = nil) {
        self.defect = defect
    }

    var isEmpty: Bool { count == 0 }

    /// Whether part of the table is still in the draining table.
    var isDraining: Bool { cursor != nil }

    /// How many entries the current table can hold before it starts to drain into a larger one.
    var capacity: Int { current.capacity }

    /// The value under `key`, if any.
    subscript(key: Key) -> Value? {
        if let entry = current[key] { return entry }
        guard cursor != nil, let entry = draining[key] else { return nil }
        return entry
    }

    /// Every live key, in no order: for inspection (statistics, tests), never under a flow's lock.
    var keys: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        for (key, entry) in current where entry != nil { keys.append(key) }
        if cursor != nil {
            for (key, entry) in draining where entry != nil && current.index(forKey: key) == nil { keys.append(key) }
        }
        return keys
    }

    /// Stores `value` under `key`; returns the value it replaced, for the caller to release after
    /// the lock.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        withValue(forKey: key) { entry in
            defer { entry = value }
            return entry.take()
        }
    }

    /// Removes the value under `key`; returns it, for the caller to release after the lock.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        withValue(forKey: key) { $0.take() }
    }

    /// Runs `body` on the value under `key` (`nil`: none) and stores what it leaves there: a
    /// value replaces or adds the entry, `nil` removes it. A value in the current table is
    /// changed where it lies, without a copy.
    mutating func withValue<Result, Failure: Error>(
        forKey key: Key, _ body: (inout Value?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        defer { step() }
        if let index = current.index(forKey: key) {
            let wasLive = current.values[index] != nil
            defer {
                let isLive = current.values[index] != nil
                if wasLive != isLive { count += isLive ? 1 : -1 }
                if !isLive, !drainingHoldsLive(key) { current.remove(at: index) }
            }
            return try body(&current.values[index])
        }
        var entry: Value? = cursor == nil ? nil : draining[key] ?? nil
        let wasLive = entry != nil
        let result = try body(&entry)
        let isLive = entry != nil
        if wasLive != isLive { count += isLive ? 1 : -1 }
        // A removed entry the draining table holds is shadowed by a tombstone.
        if isLive || (wasLive && !isOn(.removesWithoutTombstone)) {
            makeRoom()
            current.updateValue(entry, forKey: key)
        }
        return result
    }

    /// Hands out what the owner is to do after the lock: free a drained table, make a spare.
    mutating func takeUpkeep() -> TableUpkeep<Key, Value> {
        var upkeep = TableUpkeep<Key, Value>()
        upkeep.retired = retired.take()
        if wantsSpare {
            upkeep.spareCapacity = 2 * current.capacity
            spareAsked = true
        }
        upkeepDue = false
        return upkeep
    }

    /// Takes the spare `upkeep` made, if it is still wanted and large enough; what is not taken
    /// stays in `upkeep`, for its holder to release after the lock.
    mutating func install(_ upkeep: inout TableUpkeep<Key, Value>) {
        guard let made = upkeep.spare else { return }
        spareAsked = false
        guard spare == nil, cursor == nil, made.capacity >= 2 * current.capacity else {
            upkeepDue = upkeepDue || wantsSpare
            return
        }
        spare = upkeep.spare.take()
    }

    /// Whether the current table is at least half full with no spare made or asked for, and large
    /// enough to drain when it fills: a spare is then made before it fills.
    private var wantsSpare: Bool {
        spare == nil && !spareAsked && cursor == nil && current.capacity >= Self.drainedCapacity && current.count >= current.capacity / 2
    }

    private func drainingHoldsLive(_ key: Key) -> Bool {
        guard cursor != nil, !isOn(.removesWithoutTombstone), let entry = draining[key] else { return false }
        return entry != nil
    }

    /// Makes room for one more entry in the current table: a full one starts to drain into the
    /// spare (or, with none made, a table made here, twice as large). A small one grows in place:
    /// copying fewer than ``drainedCapacity`` entries costs less than asking for a spare.
    private mutating func makeRoom() {
        guard current.count >= current.capacity else { return }
        guard current.capacity >= Self.drainedCapacity else {
            current.reserveCapacity(max(Self.drainedCapacity / 2, 2 * current.capacity))
            return
        }
        // Unreachable while each change moves at least one entry (see the type's comment); a
        // drain still in progress is finished first, so no entry is ever lost.
        while cursor != nil { step() }
        drains += 1
        if spare == nil { tablesMadeUnderLock += 1 }
        let next = spare.take() ?? Storage(minimumCapacity: 2 * current.capacity)
        draining = current
        current = next
        cursor = draining.startIndex
    }

    /// Moves up to ``movedPerChange`` slots of the draining table into the current one: a live
    /// entry the current table has no entry (or tombstone) for. The last one retires the
    /// draining table.
    private mutating func step() {
        guard var index = cursor else {
            upkeepDue = upkeepDue || wantsSpare
            return
        }
        for _ in 0..<Self.movedPerChange {
            guard index != draining.endIndex else { break }
            let (key, entry) = draining[index]
            if entry != nil, current.index(forKey: key) == nil { current.updateValue(entry, forKey: key) }
            draining.formIndex(after: &index)
        }
        guard index == draining.endIndex || isOn(.retiresBeforeDrained) else {
            cursor = index
            return
        }
        cursor = nil
        retired = draining
        draining = [:]
        upkeepDue = true
    }

    @inline(__always)
    private func isOn(_ planted: IncrementalTableDefect) -> Bool {
        #if DEBUG
        defect == planted
        #else
        false
        #endif
    }
}

/// What an ``IncrementalTable`` asks its owner to do once the lock is released.
struct TableUpkeep<Key: Hashable, Value> {
    /// A drained table: released with this value, after the lock.
    fileprivate(set) var retired: IncrementalTable<Key, Value>.Storage?
    /// The capacity of the spare to make; 0 for none.
    fileprivate(set) var spareCapacity = 0
    /// The spare, made by ``makeSpare()``.
    fileprivate(set) var spare: IncrementalTable<Key, Value>.Storage?

    /// Makes the spare asked for, if any (outside the lock: it allocates the table's storage);
    /// returns whether it made one.
    mutating func makeSpare() -> Bool {
        guard spareCapacity > 0 else { return false }
        spare = IncrementalTable<Key, Value>.Storage(minimumCapacity: spareCapacity)
        return true
    }
}

/// A bug an ``IncrementalTable`` can be built with, so that a test shows its differential check
/// catches it. Only a debug build acts on one.
enum IncrementalTableDefect {
    /// A value removed while the draining table still holds it leaves no tombstone: the stale
    /// copy reappears.
    case removesWithoutTombstone
    /// The draining table is let go after one step, with entries still in it: they are lost.
    case retiresBeforeDrained
}


extension TableUpkeep: ShardUpkeep {
    mutating func makeSpares() -> Bool { makeSpare() }
}

extension IncrementalTable: Sendable where Key: Sendable, Value: Sendable {}
extension TableUpkeep: Sendable where Key: Sendable, Value: Sendable {}
