import IdpSdk

/// One shard of ``CredentialStore``: the users whose id hashes to it, in an open-addressing table
/// keyed by the store's own 64-bit hash of the user id.
///
/// Why not `[Key: Values]`: a `Dictionary` lookup hashes the key with SipHash (seed, combine,
/// finalize: most of a call's cost) and needs a `Key` built from two copied strings. Here the
/// caller hashes the user id once with ``hash(_:seed:)`` (a few multiplies, the same hash picks
/// the shard), probing compares stored 64-bit hashes, and only a slot whose hash matches compares
/// tenant and user id. Linear probing with backward-shift deletion: no tombstones, so a table that
/// sees many removals does not slow down. Unlike SipHash, the hash is not built to resist ids
/// chosen to collide; its seed is random per store, and collisions cost probing, never a wrong
/// answer (a hit always compares tenant and user id).
///
/// Not synchronized: ``CredentialStore`` keeps each table inside a ``LockedValue``.
struct CredentialStoreTable {
    /// A user's values, with what answering them needs precomputed. Stored in the slot itself,
    /// next to its hash, and read in place through the slots' buffer: no object per user to
    /// reach, no copy of its fields on a lookup (an `Entry?` array or a class per user measured
    /// slower).
    struct Entry {
        let tenantId: String
        let userId: String
        let values: [String: String]
        /// Names this version of the user's values: the shard's version when they were set.
        /// ``CredentialStore`` keeps a thread's copy of an answer while the stamp is unchanged.
        var stamp: Int = 0
        /// `values.keys`, as an array: checking that the values are exactly the asked fields walks
        /// it without hashing a field id. Entries with the same fields share one array (see
        /// ``CredentialStoreTable/set(_:hash:)``), so the check reads a buffer that stays in cache.
        fileprivate(set) var fieldIds: [String]

        /// An empty slot's filler: empty strings and collections allocate nothing.
        static let none = Entry(tenantId: "", userId: "", values: [:])

        init(tenantId: String, userId: String, values: [String: String]) {
            self.tenantId = tenantId
            self.userId = userId
            self.values = values
            var fieldIds = Array(values.keys)
            // Forms ask the username first (login, activation, password reset); in the order the
            // form asks, the check below is one equal comparison per field.
            if let username = fieldIds.firstIndex(of: IdpSdkConstants.USERNAME), username != 0 { fieldIds.swapAt(0, username) }
            self.fieldIds = fieldIds
        }

        /// Whether `values` holds exactly the fields `ids` asks: then the answer is `values` as
        /// it is. Every stored id is asked and there are as many ids as stored ones, so the two
        /// sets are equal (a repeated id would leave some stored id unasked). For the few fields
        /// of a form, a handful of string comparisons.
        @inline(__always)
        func answersExactly(_ ids: [String]) -> Bool {
            guard fieldIds.count == ids.count else { return false }
            // The usual case first: the same ids in the same order. Equal strings compare in a
            // few instructions; unequal ones call into the runtime, so do not start with those.
            var index = 0
            while index < ids.count, fieldIds[index] == ids[index] { index &+= 1 }
            if index == ids.count { return true }
            for id in fieldIds where !ids.contains(id) { return false }
            return true
        }
    }

    /// A slot: the entry's hash (0 when empty: ``hash(_:seed:)`` never returns 0) and the entry.
    private struct Slot {
        var hash: UInt64 = 0
        var entry = Entry.none
    }

    /// The slots; their count is 0 or a power of two.
    private var slots: [Slot] = []
    /// The number of entries.
    private(set) var count = 0

    private var mask: Int { slots.count &- 1 }

    /// The user's values, if stored, whether they are exactly the fields `ids` asks (then they
    /// are the answer as they are), and their stamp. `hash` is ``hash(_:seed:)`` of `userId`.
    @inline(__always)
    func values(hash: UInt64, tenantId: String, userId: String, asking ids: [String]) -> (values: [String: String], exact: Bool, stamp: Int)? {
        // Through the buffer, the entry's fields are read in place, not copied out of the array.
        slots.withUnsafeBufferPointer { slots in
            guard let index = Self.index(slots, hash: hash, tenantId: tenantId, userId: userId) else { return nil }
            return (slots[index].entry.values, slots[index].entry.answersExactly(ids), slots[index].entry.stamp)
        }
    }

    @inline(__always)
    private func index(hash: UInt64, tenantId: String, userId: String) -> Int? {
        slots.withUnsafeBufferPointer { Self.index($0, hash: hash, tenantId: tenantId, userId: userId) }
    }

    /// The slot of the user's entry, or `nil`.
    @inline(__always)
    private static func index(_ slots: UnsafeBufferPointer<Slot>, hash: UInt64, tenantId: String, userId: String) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count &- 1
        var index = Self.home(hash, mask)
        while true {
            let stored = slots[index].hash
            if stored == 0 { return nil }
            if stored == hash, slots[index].entry.userId == userId, slots[index].entry.tenantId == tenantId { return index }
            index = (index &+ 1) & mask
        }
    }

    /// Field-id arrays recently stored, at most ``recentFieldIdsLimit``: an entry whose fields are
    /// one of these sets shares that array instead of keeping its own. Only a cache: an entry
    /// always holds a reference to its own array, so forgetting one here changes nothing.
    private var recentFieldIds: [[String]] = []
    private static let recentFieldIdsLimit = 4

    /// Whether every id of `known` is among `ids`.
    private static func holdsAll(_ known: [String], of ids: [String]) -> Bool {
        outer: for index in 0..<known.count {
            for other in 0..<ids.count where ids[other] == known[index] { continue outer }
            return false
        }
        return true
    }

    /// `ids`, or an array of the same ids already held by other entries.
    private mutating func shared(_ ids: [String]) -> [String] {
        // A form has a few fields; a long list is rare and not worth comparing under the lock.
        guard ids.count <= 8 else { return ids }
        for known in recentFieldIds where known.count == ids.count && Self.holdsAll(known, of: ids) { return known }
        if recentFieldIds.count == Self.recentFieldIdsLimit { recentFieldIds.removeFirst() }
        recentFieldIds.append(ids)
        return ids
    }

    /// Adds or replaces the user's entry.
    mutating func set(_ entry: consuming Entry, hash: UInt64) {
        entry.fieldIds = shared(entry.fieldIds)
        if let index = index(hash: hash, tenantId: entry.tenantId, userId: entry.userId) {
            slots[index].entry = entry
            return
        }
        // At most three quarters full, so a miss ends at an empty slot soon.
        if (count &+ 1) &* 4 > slots.count &* 3 { grow() }
        let mask = self.mask
        var index = Self.home(hash, mask)
        while slots[index].hash != 0 { index = (index &+ 1) & mask }
        slots[index] = Slot(hash: hash, entry: entry)
        count &+= 1
    }

    /// Removes the user's entry; returns whether there was one.
    @discardableResult
    mutating func remove(hash: UInt64, tenantId: String, userId: String) -> Bool {
        guard var hole = index(hash: hash, tenantId: tenantId, userId: userId) else { return false }
        let mask = self.mask
        // Backward-shift deletion: move later entries of the probe run into the hole when their
        // home slot is not cyclically between the hole and them, so every entry stays reachable
        // from its home without passing an empty slot.
        var next = (hole &+ 1) & mask
        while slots[next].hash != 0 {
            let home = Self.home(slots[next].hash, mask)
            if (next &- home) & mask >= (next &- hole) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next &+ 1) & mask
        }
        slots[hole] = Slot()
        count &-= 1
        return true
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(), count: Swift.max(8, old.count &* 2))
        let mask = self.mask
        for slot in old where slot.hash != 0 {
            var index = Self.home(slot.hash, mask)
            while slots[index].hash != 0 { index = (index &+ 1) & mask }
            slots[index] = slot
        }
    }

    /// A hash's home slot: its low bits (``CredentialStore`` picks the shard from the top bits).
    @inline(__always)
    private static func home(_ hash: UInt64, _ mask: Int) -> Int { Int(truncatingIfNeeded: hash) & mask }

    /// The store's hash of a user or trace id: every UTF-8 byte, eight at a time (multiply and
    /// xor-shift, as in the wyhash / FxHash family), from a per-store random `seed`, so ids chosen
    /// to collide in one store do not collide in another. Not SipHash: it would cost more than the
    /// rest of a lookup. Never 0 (the table's empty-slot mark).
    @inline(__always)
    static func hash(_ id: String, seed: UInt64) -> UInt64 {
        var id = id
        return id.withUTF8 { hash(UnsafeRawBufferPointer($0), seed: seed) }
    }

    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        let count = bytes.count
        var hash = seed ^ UInt64(truncatingIfNeeded: count)
        // Whole words from the start, then the rest by loads that stay inside its last word: a
        // small string is handed over as two 8-byte words just stored on the stack, and a load
        // across the two would wait for both stores instead of being forwarded from one.
        var offset = 0
        while offset &+ 8 <= count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* multiplier
            hash ^= hash &>> 29
            offset &+= 8
        }
        let rest = count &- offset
        if rest >= 4 {
            let low = UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let high = UInt64(bytes.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self))
            hash = (hash ^ (low | high &<< 32)) &* multiplier
        } else if rest > 0 {
            // First, middle and last byte: every one of one to three bytes.
            let word = UInt64(bytes[offset]) &<< 16 | UInt64(bytes[offset &+ rest &>> 1]) &<< 8 | UInt64(bytes[count &- 1])
            hash = (hash ^ word) &* multiplier
        }
        // Fold the well-mixed high bits into the low ones (the table's slot) and mix again.
        hash ^= hash &>> 32
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash &>> 29
        return hash == 0 ? 1 : hash
    }
}
