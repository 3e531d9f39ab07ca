/// One shard of ``CredentialStore``: the users whose id hashes to it, in an open-addressing table
/// keyed by the store's own 64-bit hash of the user id.
///
/// Why not `[Key: Values]`: a `Dictionary` lookup hashes the key with SipHash (seed, combine,
/// finalize: most of a call's cost) and needs a `Key` built from two copied strings. Here the
/// caller hashes the user id once with ``hash(_:seed:)`` (a few multiplies, the same hash picks
/// the shard), probing compares stored 64-bit hashes, and only a slot whose hash matches compares
/// tenant and user id. Linear probing with backward-shift deletion: no tombstones, so a table that
/// sees many removals does not slow down.
///
/// Not synchronized: ``CredentialStore`` keeps each table inside a ``LockedValue``.
struct CredentialStoreTable {
    /// A user's values, with what answering them needs precomputed. A class, so that probing
    /// reads its fields in place instead of copying four references out of the slot.
    final class Entry: Sendable {
        let tenantId: String
        let userId: String
        let values: [String: String]
        /// `values.keys`, as an array: checking that the values are exactly the asked fields walks
        /// it without hashing a field id.
        let fieldIds: [String]

        init(tenantId: String, userId: String, values: [String: String]) {
            self.tenantId = tenantId
            self.userId = userId
            self.values = values
            fieldIds = Array(values.keys)
        }

        /// Whether `values` holds exactly the fields `ids` asks: then the answer is `values` as
        /// it is. Every stored id is asked and there are as many ids as stored ones, so the two
        /// sets are equal (a repeated id would leave some stored id unasked). For the few fields
        /// of a form, a handful of string comparisons.
        @inline(__always)
        func answersExactly(_ ids: [String]) -> Bool {
            guard fieldIds.count == ids.count else { return false }
            for id in fieldIds where !ids.contains(id) { return false }
            return true
        }
    }

    /// The hash of each slot's entry, 0 for an empty slot (``hash(_:seed:)`` never returns 0).
    /// Probing reads only this array: eight bytes a slot, several slots a cache line.
    private var hashes: [UInt64] = []
    /// The entries, at the same index as their hash.
    private var entries: [Entry?] = []
    /// The number of entries.
    private(set) var count = 0

    /// `hashes.count - 1`; the capacity is 0 or a power of two.
    private var mask: Int { hashes.count &- 1 }

    /// The user's values, if stored, and whether they are exactly the fields `ids` asks (then
    /// they are the answer as they are). `hash` is ``hash(_:seed:)`` of `userId`.
    @inline(__always)
    func values(hash: UInt64, tenantId: String, userId: String, asking ids: [String]) -> (values: [String: String], exact: Bool)? {
        guard let index = index(hash: hash, tenantId: tenantId, userId: userId) else { return nil }
        let entry = entries[index].unsafelyUnwrapped
        return (entry.values, entry.answersExactly(ids))
    }

    /// The slot of the user's entry, or `nil`.
    @inline(__always)
    private func index(hash: UInt64, tenantId: String, userId: String) -> Int? {
        guard count > 0 else { return nil }
        let mask = self.mask
        var index = Self.home(hash, mask)
        while true {
            let stored = hashes[index]
            if stored == 0 { return nil }
            if stored == hash, let entry = entries[index], entry.userId == userId, entry.tenantId == tenantId { return index }
            index = (index &+ 1) & mask
        }
    }

    /// Adds or replaces the user's entry.
    mutating func set(_ entry: Entry, hash: UInt64) {
        if let index = index(hash: hash, tenantId: entry.tenantId, userId: entry.userId) {
            entries[index] = entry
            return
        }
        // At most three quarters full, so a miss ends at an empty slot soon.
        if (count &+ 1) &* 4 > hashes.count &* 3 { grow() }
        let mask = self.mask
        var index = Self.home(hash, mask)
        while hashes[index] != 0 { index = (index &+ 1) & mask }
        hashes[index] = hash
        entries[index] = entry
        count &+= 1
    }

    /// Removes the user's entry; returns whether there was one.
    @discardableResult
    mutating func remove(hash: UInt64, tenantId: String, userId: String) -> Bool {
        guard var hole = index(hash: hash, tenantId: tenantId, userId: userId) else { return false }
        let mask = self.mask
        // Backward-shift deletion: move later entries of the probe run into the hole when their
        // home slot is not between the hole and them, so every entry stays reachable from its home
        // without passing an empty slot.
        var next = (hole &+ 1) & mask
        while hashes[next] != 0 {
            let home = Self.home(hashes[next], mask)
            // Cyclic distance from home to `next` versus from home to the hole.
            if (next &- home) & mask >= (next &- hole) & mask {
                hashes[hole] = hashes[next]
                entries[hole] = entries[next]
                hole = next
            }
            next = (next &+ 1) & mask
        }
        hashes[hole] = 0
        entries[hole] = nil
        count &-= 1
        return true
    }

    private mutating func grow() {
        let capacity = Swift.max(8, hashes.count &* 2)
        let oldHashes = hashes, oldEntries = entries
        hashes = Array(repeating: 0, count: capacity)
        entries = Array(repeating: nil, count: capacity)
        let mask = capacity &- 1
        for (hash, entry) in zip(oldHashes, oldEntries) where hash != 0 {
            var index = Self.home(hash, mask)
            while hashes[index] != 0 { index = (index &+ 1) & mask }
            hashes[index] = hash
            entries[index] = entry
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
        if count >= 8 {
            var offset = 0
            // Every whole word but the last; the last eight bytes (which may overlap the previous
            // word) close the loop, so no byte is left out.
            while offset &+ 8 < count {
                hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* multiplier
                hash ^= hash &>> 29
                offset &+= 8
            }
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)) &* multiplier
        } else if count >= 4 {
            let low = UInt64(bytes.loadUnaligned(as: UInt32.self))
            let high = UInt64(bytes.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self))
            hash = (hash ^ (low | high &<< 32)) &* multiplier
        } else {
            var word: UInt64 = 0
            for byte in bytes { word = word &<< 8 | UInt64(byte) }
            hash = (hash ^ word) &* multiplier
        }
        // Fold the well-mixed high bits into the low ones (the table's slot) and mix again.
        hash ^= hash &>> 32
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash &>> 29
        return hash == 0 ? 1 : hash
    }
}
