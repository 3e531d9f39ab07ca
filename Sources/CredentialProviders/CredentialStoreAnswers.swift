/// One thread's answers from one ``CredentialStore``: the answers it gave, by user and asked fields,
/// each with the shard version it was last known good at. Only its thread reaches it (the store
/// keeps it in a `ThreadConfined`), so it is read and written without a lock.
///
/// An answer takes a slot the second time the thread gives it (its first time leaves a
/// fingerprint of the user and fields in a small Bloom filter), as the store gave it: the stored
/// dictionary, shared with every thread that answers the user. The first time the thread answers
/// from the slot, it makes a copy of its own (``UnsharedCopy``), whose reference count only this
/// thread writes. A user answered once on a thread (an activation's steps, each asking other
/// fields; a login of a user seen once) costs neither a slot nor its release when the table
/// starts again.
///
/// An open-addressing table keyed by the store's hash of the user id, linear probing, slots never
/// emptied one by one (a removed user's slot keeps its key and drops its values), growing to
/// ``maximumSlots``; when that is full, it starts again empty.
final class CredentialStoreAnswers {
    struct Slot {
        /// The store's hash of the user id; 0 when the slot is empty.
        var hash: UInt64 = 0
        var tenantId = ""
        var userId = ""
        var fieldIds: [String] = []
        /// The shard version at which `answer` was last known to be the store's answer.
        var validAt = -1
        /// The stamp of the user's values `answer` was built from.
        var stamp = -1
        var answer: [String: String] = [:]
        /// Whether `answer` is this thread's own copy.
        var owned = false
    }

    /// The most slots a thread keeps per store: 1,536 answers at most (three quarters full), about
    /// 200 KB.
    static let maximumSlots = 2_048

    // Unchecked exclusivity: only the owning thread reaches these, and no access overlaps another
    // (the dynamic check would cost a thread-local lookup per access).
    @exclusivity(unchecked) private(set) var slots = [Slot](repeating: Slot(), count: 64)
    @exclusivity(unchecked) private(set) var count = 0
    /// The answers given once and not kept: a Bloom filter of their fingerprints (two bits each),
    /// emptied after every ``givenOnceWindow`` answers it takes in. A false positive only keeps an
    /// answer at its first time, never a wrong one (``index(hash:tenantId:userId:asking:)``
    /// compares the whole key). Unlike a table with one fingerprint per slot, it never loses an
    /// answer to another that shares its slot, so users answered in a fixed rotation are kept at
    /// their second time however many there are, up to the window.
    @exclusivity(unchecked) private var givenOnce = [UInt64](repeating: 0, count: CredentialStoreAnswers.givenOnceBits / 64)
    @exclusivity(unchecked) private(set) var givenOnceTaken = 0
    static let givenOnceBits = 16_384
    /// Twice the most answers a thread keeps per store, so that a rotation it can keep fits in one window.
    static let givenOnceWindow = 4_096

    /// The slot of the answer to `ids` for the user, or `nil`.
    @inline(__always)
    func index(hash: UInt64, tenantId: String, userId: String, asking ids: [String]) -> Int? {
        slots.withUnsafeBufferPointer { slots in
            let mask = slots.count &- 1
            var index = Int(truncatingIfNeeded: hash) & mask
            while true {
                let stored = slots[index].hash
                if stored == 0 { return nil }
                if stored == hash, slots[index].userId == userId, slots[index].tenantId == tenantId, slots[index].fieldIds == ids { return index }
                index = (index &+ 1) & mask
            }
        }
    }

    /// The answer in `slot` if it is still good at shard version `version`: this thread's own
    /// copy, made now if the answer was the store's.
    @inline(__always)
    func answer(in slot: Int, at version: Int) -> [String: String]? {
        guard slots[slot].validAt == version else { return nil }
        return ownAnswer(in: slot)
    }

    /// The answer in `slot`, after the store confirmed at `version` that the user's values still
    /// have the slot's stamp.
    func revalidate(_ slot: Int, at version: Int) -> [String: String] {
        slots[slot].validAt = version
        return ownAnswer(in: slot)
    }

    /// This thread's own copy of the answer in `slot`, made at its second use.
    @inline(__always)
    private func ownAnswer(in slot: Int) -> [String: String] {
        if !slots[slot].owned {
            slots[slot].answer = UnsharedCopy.of(slots[slot].answer)
            slots[slot].owned = true
        }
        return slots[slot].answer
    }

    /// Drops the values of `slot` (the user is gone): its next use asks the store again.
    func forget(_ slot: Int) {
        slots[slot].answer = [:]
        slots[slot].owned = false
        slots[slot].validAt = -1
        slots[slot].stamp = -1
    }

    /// Whether an answer to `ids` for the user (`hash`, the store's hash of the user id) that has
    /// no slot should be kept: it should when the thread gave it before, as far as the filter of
    /// answers given once remembers. Remembers it otherwise.
    func admits(hash: UInt64, asking ids: [String]) -> Bool {
        var fingerprint = hash
        for id in ids { fingerprint = CredentialStoreTable.hash(id, seed: fingerprint) }
        let mask = UInt64(Self.givenOnceBits &- 1)
        let first = Int(truncatingIfNeeded: fingerprint & mask), second = Int(truncatingIfNeeded: (fingerprint &>> 32) & mask)
        let firstBit: UInt64 = 1 &<< UInt64(first & 63), secondBit: UInt64 = 1 &<< UInt64(second & 63)
        if givenOnce[first &>> 6] & firstBit != 0 && givenOnce[second &>> 6] & secondBit != 0 { return true }
        givenOnceTaken &+= 1
        if givenOnceTaken >= Self.givenOnceWindow {
            for word in givenOnce.indices { givenOnce[word] = 0 }
            givenOnceTaken = 0
        }
        givenOnce[first &>> 6] |= firstBit
        givenOnce[second &>> 6] |= secondBit
        return false
    }

    /// Keeps `answer`, as the store gave it, for the user and `ids` (in `slot` if they have one).
    func keep(_ answer: [String: String], stamp: Int, version: Int, in slot: Int?, hash: UInt64, tenantId: String, userId: String, asking ids: [String]) {
        let kept = Slot(hash: hash, tenantId: tenantId, userId: userId, fieldIds: ids, validAt: version, stamp: stamp, answer: answer, owned: false)
        if let slot {
            slots[slot] = kept
            return
        }
        if (count &+ 1) &* 4 > slots.count &* 3 {
            if slots.count < Self.maximumSlots {
                grow()
            } else {
                // Full: start again empty (users answered again are kept again).
                slots = [Slot](repeating: Slot(), count: slots.count)
                count = 0
            }
        }
        let mask = slots.count &- 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while slots[index].hash != 0 { index = (index &+ 1) & mask }
        slots[index] = kept
        count &+= 1
    }

    private func grow() {
        let old = slots
        slots = [Slot](repeating: Slot(), count: old.count &* 2)
        let mask = slots.count &- 1
        for slot in old where slot.hash != 0 {
            var index = Int(truncatingIfNeeded: slot.hash) & mask
            while slots[index].hash != 0 { index = (index &+ 1) & mask }
            slots[index] = slot
        }
    }
}

@available(*, unavailable, message: "a thread's answers belong to its thread")
extension CredentialStoreAnswers: Sendable {}
