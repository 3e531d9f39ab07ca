import IdpPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// A hash table that grows a few entries at a time, so that no change made under a shard's lock
/// rehashes the whole table.
///
/// A `Dictionary` that outgrows its storage rehashes every entry into a new one in the insert that
/// found it full; for a table holding every user of a large tenant, that insert held the shard's
/// lock for as long as a rehash of the whole table takes. Here a full table becomes the *draining* table
/// and a table twice its size the *current* one, and each change then moves
/// ``movedPerChange`` of the draining table's entries across. The draining table is empty, and let
/// go, before the current one can fill: that holds at most the draining table's entries and one new
/// entry per change, at most twice what the draining table held, and it has room for that.
///
/// The slots are open-addressed (linear probing, at most three quarters of them occupied) and an
/// entry's home slot is the top bits of its hash, so an entry's home in the table twice the size is
/// twice its home here: the draining table is walked in slot order and its entries land in the
/// current table in slot order too, so a move touches memory next to the last one's instead of a
/// random place in a large table.
///
/// - The walk starts at an empty slot, so no run of occupied slots crosses its start, and empties
///   each slot it passes. A key whose home it has not passed is probed from its home as usual; one
///   whose home it passed can only still be in the run the walk is in, and is probed from there.
/// - A removal closes its gap by moving later entries of its run back (no tombstones).
/// - The larger table is made outside the lock: when the current table is seven eighths full the
///   table asks for one (``upkeepDue``, ``takeUpkeep()``), its owner makes it after the lock (which
///   writes, and so maps, every page of it) and hands it in (``install(_:)``). A table that fills
///   before one arrives makes its own (``tablesMadeUnderLock``).
/// - A drained table is handed out the same way, so that whoever holds it frees it after the lock.
///
/// A value type: a copy shares its storage until one of them changes (copy on write). Not
/// thread-safe: it is a value kept inside a lock (`LockedValue`).
struct IncrementalTable<Key: Hashable, Value> {
    typealias Storage = SlotStorage<Key, Value>

    /// How many of the draining table's entries each change moves: at least one, so the draining
    /// table empties before the current one fills; a few, because every change made while the
    /// table drains pays for its moves under the lock (more per change drain the table in fewer
    /// changes, but each of those holds the lock longer).
    static var movedPerChange: Int { 4 }

    /// The fewest slots of a table that drains when full; a smaller one grows at once (a move of
    /// at most 24 entries).
    static var drainedSlots: Int { 64 }

    private var current = Storage(slotCount: 16)
    private var draining: Storage?
    /// Where the walk over the draining table began: a slot that was empty, so no run of occupied
    /// slots crosses it.
    private var walkStart = 0
    /// How many slots from ``walkStart`` the walk has passed: all of them are empty.
    private var walked = 0
    /// An empty table made outside the lock, the next current table.
    private var spare = GrowthSpare<Storage>()
    /// A drained table, kept until its owner takes it out of the lock.
    private var retired: Storage?
    /// Whether ``takeUpkeep()`` has something to hand out.
    private(set) var upkeepDue = false
    /// How many times the table started to drain into a larger one.
    private(set) var drains = 0
    /// How many of those drains found no spare and made their table under the lock.
    var tablesMadeUnderLock: Int { spare.madeUnderLock }
    #if DEBUG
    /// The planted bug (``init(planting:)``).
    var planted = PlantedBugSwitch()
    #endif

    /// An empty table.
    init() {}

    /// Live entries, in both tables together.
    var count: Int { current.count + (draining?.count ?? 0) }

    /// Whether part of the table is still in the draining table.
    var isDraining: Bool { draining != nil }

    /// The value under `key`, if any.
    subscript(key: Key) -> Value? {
        let hash = Storage.hash(of: key)
        guard let (table, slot) = locate(key, hash: hash) else { return nil }
        return table.value(at: slot)
    }

    /// Every live key, in no order: for inspection (statistics, tests), never under a flow's lock.
    var keys: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        for table in [current, draining].compactMap({ $0 }) {
            for slot in 0..<table.slotCount where table.isOccupied(slot) { keys.append(table.key(at: slot)) }
        }
        return keys
    }

    /// Stores `value` under `key`; returns the value it replaced, for the caller to release after
    /// the lock.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        makeUnique()
        defer { step() }
        let hash = Storage.hash(of: key)
        if let draining, let slot = findDraining(key, hash: hash, in: draining) {
            defer { draining.restore(value, at: slot) }
            return draining.takeValue(at: slot)
        }
        let (slot, found) = current.probe(key, hash: hash)
        guard found else {
            insertNew(value, forKey: key, hash: hash, probeEndedAt: slot)
            return nil
        }
        defer { current.restore(value, at: slot) }
        return current.takeValue(at: slot)
    }

    /// Removes the value under `key`; returns it, for the caller to release after the lock.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        withValue(forKey: key) { $0.take() }
    }

    /// Runs `body` on the value under `key` (`nil`: none) and stores what it leaves there: a
    /// value replaces or adds the entry, `nil` removes it. The value is moved out of its slot and
    /// back, never copied.
    mutating func withValue<Result, Failure: Error>(
        forKey key: Key, _ body: (inout Value?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        makeUnique()
        defer { step() }
        let hash = Storage.hash(of: key)
        if let (table, slot) = locate(key, hash: hash) {
            var value: Value? = table.takeValue(at: slot)
            defer {
                if let value = value.take() {
                    table.restore(value, at: slot)
                } else {
                    table.close(slot)
                }
            }
            return try body(&value)
        }
        var value: Value?
        let result = try body(&value)
        if let value { insertNew(value, forKey: key, hash: hash, probeEndedAt: nil) }
        return result
    }

    /// Stores `value` under `key`, which is in neither table: where the key's probe of the
    /// current table ended (`slot`, if the caller probed it), unless the table must first make
    /// room, which moves the entries.
    private mutating func insertNew(_ value: consuming Value, forKey key: Key, hash: Int, probeEndedAt slot: Int?) {
        if let slot, current.count < current.capacity {
            current.insert(at: slot, hash: hash, key: key, value: value)
        } else {
            makeRoom()
            current.insert(hash: hash, key: key, value: value)
        }
    }

    /// Hands out what the owner is to do after the lock: free a drained table, make a spare.
    mutating func takeUpkeep() -> TableUpkeep<Key, Value> {
        var upkeep = TableUpkeep<Key, Value>()
        upkeep.retired = retired.take()
        upkeep.spareSlots = spare.request(2 * current.slotCount, due: wantsSpare) ?? 0
        upkeepDue = false
        return upkeep
    }

    /// Takes the spare `upkeep` made, if it is still wanted and large enough; what is not taken
    /// stays in `upkeep`, for its holder to release after the lock.
    mutating func install(_ upkeep: inout TableUpkeep<Key, Value>) {
        let larger = 2 * current.slotCount, idle = draining == nil
        spare.install(&upkeep.spare) { idle && $0.slotCount >= larger }
        if upkeep.spare != nil { upkeepDue = upkeepDue || wantsSpare }
    }

    /// Where `key` lies: in the draining table, else in the current table.
    private func locate(_ key: Key, hash: Int) -> (Storage, Int)? {
        if let draining, let slot = findDraining(key, hash: hash, in: draining) { return (draining, slot) }
        guard let slot = current.find(key, hash: hash) else { return nil }
        return (current, slot)
    }

    /// The slot of `key` in the draining table, if it is still there. A key whose home the walk
    /// has not passed is probed from its home. One whose home it passed can only lie after the
    /// walk, in the run the walk is in (the walk empties what it passes, and a removal closes its
    /// gap by moving later entries back, never before the walk): that run is probed from the walk's
    /// next slot, which the walk keeps in cache.
    @inline(__always)
    private func findDraining(_ key: Key, hash: Int, in draining: Storage) -> Int? {
        let home = draining.home(hash)
        let passed = (home - walkStart) & (draining.slotCount - 1) < walked
        guard passed, !plantedProbesFromHome else { return draining.find(key, hash: hash) }
        return draining.find(key, hash: hash, from: (walkStart + walked) & (draining.slotCount - 1))
    }

    /// Whether the current table is seven eighths full with no spare made or asked for, and large
    /// enough to drain when it fills: a spare is then made before it fills (the owner makes it
    /// right after the lock; the last eighth takes thousands of changes), and is not held long
    /// beside the table it will replace.
    private var wantsSpare: Bool {
        spare.isWanted && draining == nil && current.slotCount >= Self.drainedSlots
            && current.count >= current.capacity - current.capacity / 8
    }

    /// Makes room for one more entry in the current table: a full one starts to drain into the
    /// spare (or, with none made, a table made here); a small one grows at once.
    private mutating func makeRoom() {
        guard current.count >= current.capacity else { return }
        // Unreachable while each change moves at least one entry (see the type's comment); a
        // drain still in progress is finished first, so no entry is ever lost.
        while draining != nil { step() }
        guard current.slotCount >= Self.drainedSlots else {
            let larger = Storage(slotCount: 2 * current.slotCount)
            current.moveAll(into: larger)
            current = larger
            return
        }
        drains += 1
        let next = spare.take { isKnownUniquelyReferenced(&$0) } ?? Storage(slotCount: 2 * current.slotCount)
        walkStart = current.firstEmptySlot()
        walked = 0
        draining = current
        current = next
    }

    /// Moves up to ``movedPerChange`` of the draining table's entries into the current one, in
    /// slot order from where the walk began; the last move retires the draining table.
    private mutating func step() {
        guard let from = draining else {
            upkeepDue = upkeepDue || wantsSpare
            return
        }
        let mask = from.slotCount - 1
        var moved = 0
        while walked < from.slotCount, moved < Self.movedPerChange {
            let slot = (walkStart + walked) & mask
            if from.isOccupied(slot) {
                from.move(slot, into: current)
                moved += 1
            }
            walked += 1
        }
        guard walked == from.slotCount || plantedRetiresEarly else { return }
        draining = nil
        retired = from
        upkeepDue = true
    }

    /// Makes the storage this value changes its own (copy on write).
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&current) { current = current.copy() }
        // Moved out of the optional first: the optional's own uniqueness check is not exact.
        if var storage = draining.take() {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            draining = storage
        }
    }

}

/// The slots of an ``IncrementalTable``'s table: a power of two of them, probed linearly from an
/// entry's home (the top bits of its hash). Two arrays: each slot's hash (0 marks an empty slot)
/// beside its key, which a probe reads; and the values.
final class SlotStorage<Key: Hashable, Value> {
    /// A slot's hash and key: the hash is 0, and the key `nil`, in an empty slot.
    struct KeySlot {
        var hash: Int
        var key: Key?
    }

    let slotCount: Int
    private let mask: Int
    /// 64 − log2(slotCount): what a hash is shifted right by to give its home.
    private let shift: Int
    /// Each slot's hash (0: empty) and key, side by side: for a key of up to 48 bytes, one cache
    /// line, so a probe that finds its key's tag reads the hash and compares the key with one miss.
    private let keySlots: UnsafeMutablePointer<KeySlot>
    /// Each slot's tag, one byte (``tag(of:)``; 0: empty), 64 slots to a cache line: a probe
    /// reads these, and a slot's key only where the tag is its key's, so the probe of a key that is
    /// in no slot (every new entry's insert) ends without a miss on the slots, whose lines are
    /// 64 times as many.
    private let tags: UnsafeMutablePointer<UInt8>
    private let values: UnsafeMutablePointer<Value>
    /// Occupied slots. Unchecked exclusivity: the storage is changed only by the table value
    /// that holds it alone, under its owner's lock, so accesses cannot overlap; the dynamic check
    /// would cost a call per change.
    @exclusivity(unchecked) private(set) var count = 0

    /// The fewest slots of a table whose making is heavy work (``LockProfiler/noteHeavyWork(_:)``):
    /// a table of at most ``IncrementalTable/drainedSlots`` grows at once under its lock, a move
    /// of a few dozen entries; a larger one is made outside it, as a spare.
    static var largeSlotCount: Int { 128 }

    /// Empty slots, every byte of them written: a table made outside a lock has all its pages
    /// mapped before a change under the lock first writes to them.
    init(slotCount: Int) {
        precondition(slotCount >= 4 && slotCount & (slotCount - 1) == 0, "a power of two of at least 4 slots")
        if slotCount >= Self.largeSlotCount { LockProfiler.noteHeavyWork(.largeAllocation) }
        self.slotCount = slotCount
        mask = slotCount - 1
        shift = Int.bitWidth - slotCount.trailingZeroBitCount
        keySlots = .allocate(capacity: slotCount)
        keySlots.initialize(repeating: KeySlot(hash: 0, key: nil), count: slotCount)
        tags = Self.writtenMemory(count: slotCount)
        values = Self.writtenMemory(count: slotCount)
    }

    deinit {
        for slot in 0..<slotCount where isOccupied(slot) { (values + slot).deinitialize(count: 1) }
        keySlots.deinitialize(count: slotCount)
        Self.release(keySlots, count: slotCount)
        Self.release(tags, count: slotCount)
        Self.release(values, count: slotCount)
    }

    /// Frees memory made by ``init(slotCount:)``. A large block's pages go back to the kernel a
    /// megabyte at a time first (`MADV_DONTNEED`, which lets the process's other threads fault in
    /// pages meanwhile), so the unmapping that frees the block, during which no thread of the
    /// process can take a page fault, is short.
    private static func release<Element>(_ memory: UnsafeMutablePointer<Element>, count: Int) {
        #if canImport(Glibc)
        let bytes = MemoryLayout<Element>.stride * count
        let page = 4096, piece = 1 << 20
        if bytes >= 4 * piece {
            let start = (Int(bitPattern: memory) + page - 1) & ~(page - 1)
            let end = (Int(bitPattern: memory) + bytes) & ~(page - 1)
            var at = start
            while at < end {
                _ = madvise(UnsafeMutableRawPointer(bitPattern: at), min(piece, end - at), MADV_DONTNEED)
                at += piece
            }
        }
        #endif
        memory.deallocate()
    }

    /// Memory for `count` elements, zeroed byte by byte (so its pages are mapped) and left
    /// uninitialized as elements.
    private static func writtenMemory<Element>(count: Int) -> UnsafeMutablePointer<Element> {
        let bytes = MemoryLayout<Element>.stride * count
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes), alignment: MemoryLayout<Element>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        return raw.bindMemory(to: Element.self, capacity: count)
    }

    /// The most entries it holds: three quarters of its slots, so that runs of occupied slots, and
    /// with them probes and the walk's steps, stay short.
    var capacity: Int { slotCount / 4 * 3 }

    /// `key`'s hash as this storage keeps it: never 0, the mark of an empty slot.
    @inline(__always)
    static func hash(of key: Key) -> Int { key.hashValue | 1 }

    /// The tag of a slot holding a key of hash `hash`: its low byte, never 0 (the hash is odd), and
    /// taken from other bits than the top ones that give the key's home, so the keys of one run
    /// share a tag only by chance (1 in 128).
    @inline(__always)
    static func tag(of hash: Int) -> UInt8 { UInt8(truncatingIfNeeded: hash) }

    @inline(__always)
    func home(_ hash: Int) -> Int { Int(UInt(bitPattern: hash) >> UInt(shift)) }

    @inline(__always)
    func isOccupied(_ slot: Int) -> Bool { tags[slot] != 0 }

    /// The key in the occupied `slot`.
    @inline(__always)
    func key(at slot: Int) -> Key { keySlots[slot].key! }

    /// The value in the occupied `slot`.
    @inline(__always)
    func value(at slot: Int) -> Value { values[slot] }

    /// The slot holding `key`, or the empty slot where its probe ended (`found` false): where it
    /// would be inserted. The probe starts at the key's home, or at `start`, a slot of the run
    /// that holds it.
    @inline(__always)
    func probe(_ key: Key, hash: Int, from start: Int? = nil) -> (slot: Int, found: Bool) {
        var slot = start ?? home(hash)
        let tag = Self.tag(of: hash)
        while true {
            let found = tags[slot]
            if found == 0 { return (slot, false) }
            if found == tag, keySlots[slot].hash == hash, keySlots[slot].key! == key { return (slot, true) }
            slot = (slot + 1) & mask
        }
    }

    /// Puts an entry whose key is in no slot into `slot`, the empty slot its probe ended at.
    @inline(__always)
    func insert(at slot: Int, hash: Int, key: consuming Key, value: consuming Value) {
        keySlots[slot] = KeySlot(hash: hash, key: key)
        tags[slot] = Self.tag(of: hash)
        (values + slot).initialize(to: value)
        count += 1
    }

    /// The slot holding `key`, if any (``probe(_:hash:from:)``).
    @inline(__always)
    func find(_ key: Key, hash: Int, from start: Int? = nil) -> Int? {
        let (slot, found) = probe(key, hash: hash, from: start)
        return found ? slot : nil
    }

    /// An empty slot (one exists: at most three quarters are occupied).
    func firstEmptySlot() -> Int {
        var slot = 0
        while isOccupied(slot) { slot += 1 }
        return slot
    }

    /// Puts an entry whose key is in no slot into the first empty slot from its home.
    @inline(__always)
    func insert(hash: Int, key: consuming Key, value: consuming Value) {
        var slot = home(hash)
        while isOccupied(slot) { slot = (slot + 1) & mask }
        insert(at: slot, hash: hash, key: key, value: value)
    }

    /// Moves the value out of the occupied `slot`; ``restore(_:at:)`` puts one back, or
    /// ``close(_:)`` empties the slot.
    @inline(__always)
    func takeValue(at slot: Int) -> Value { (values + slot).move() }

    /// Puts `value` back into `slot`, whose value was taken.
    @inline(__always)
    func restore(_ value: consuming Value, at slot: Int) { (values + slot).initialize(to: value) }

    /// Empties `slot`, whose value was taken, and moves back the later entries of its run that may
    /// then sit nearer their homes, so no probe ever stops at the gap before its entry.
    func close(_ slot: Int) {
        keySlots[slot] = KeySlot(hash: 0, key: nil)
        tags[slot] = 0
        count -= 1
        var gap = slot
        var next = (slot + 1) & mask
        while isOccupied(next) {
            // The entry may fill the gap unless its home lies cyclically after the gap, up to it.
            let home = home(keySlots[next].hash)
            let homeAfterGap = gap <= next ? (gap < home && home <= next) : (gap < home || home <= next)
            if !homeAfterGap {
                swap(&keySlots[gap], &keySlots[next])
                swap(&tags[gap], &tags[next])
                (values + gap).moveInitialize(from: values + next, count: 1)
                gap = next
            }
            next = (next + 1) & mask
        }
    }

    /// Moves the entry of the occupied `slot` into `other`, emptying the slot without closing its
    /// gap (what a walk over every slot does).
    @inline(__always)
    func move(_ slot: Int, into other: SlotStorage) {
        let hash = keySlots[slot].hash
        let key = keySlots[slot].key.take()!
        keySlots[slot].hash = 0
        tags[slot] = 0
        count -= 1
        other.insert(hash: hash, key: key, value: (values + slot).move())
    }

    /// Moves every entry into `larger`, leaving this empty.
    func moveAll(into larger: SlotStorage) {
        for slot in 0..<slotCount where isOccupied(slot) { move(slot, into: larger) }
    }

    /// A copy with the same entries in the same slots.
    func copy() -> SlotStorage {
        let copy = SlotStorage(slotCount: slotCount)
        for slot in 0..<slotCount where isOccupied(slot) {
            copy.keySlots[slot] = keySlots[slot]
            copy.tags[slot] = tags[slot]
            (copy.values + slot).initialize(to: values[slot])
        }
        copy.count = count
        return copy
    }
}

// Sound: a `SlotStorage` is reached only through the `IncrementalTable` values that hold it. Reads
// share it; a change is made only by a value that holds it alone (`isKnownUniquelyReferenced`,
// else it changes a copy), so no two threads touch one storage while one of them writes to it —
// the reasoning of the standard library's own copy-on-write collections.
extension SlotStorage: @unchecked Sendable where Key: Sendable, Value: Sendable {}

/// What an ``IncrementalTable`` asks its owner to do once the lock is released.
struct TableUpkeep<Key: Hashable, Value> {
    /// A drained table: released with this value, after the lock.
    fileprivate(set) var retired: SlotStorage<Key, Value>?
    /// The slots of the spare to make; 0 for none.
    fileprivate(set) var spareSlots = 0
    /// The spare, made by ``makeSpare()``.
    fileprivate(set) var spare: SlotStorage<Key, Value>?

    /// Makes the spare asked for, if any (outside the lock: it allocates, and writes every slot
    /// of, the table); returns whether it made one.
    mutating func makeSpare() -> Bool {
        guard spareSlots > 0 else { return false }
        spare = SlotStorage(slotCount: spareSlots)
        return true
    }
}

extension TableUpkeep: ShardUpkeep {
    mutating func makeSpares() -> Bool { makeSpare() }
}

extension IncrementalTable: Sendable where Key: Sendable, Value: Sendable {}
extension TableUpkeep: Sendable where Key: Sendable, Value: Sendable {}
