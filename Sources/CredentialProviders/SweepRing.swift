import IdpSdk

/// The sweep tickets of one ``MultiStepProvider`` shard, oldest first: a ring buffer whose
/// storage doubles when full (as the shard's dictionary does) and is otherwise never moved, so
/// taking the first and adding one at the end are constant work under the shard's lock.
struct SweepRing {
    /// A flow whose state the sweep must look at again, and which of its states.
    struct Ticket {
        let flow: IdpSdkFlowID
        let number: UInt64
    }

    /// A power of two in length, or empty.
    private var storage: [Ticket] = []
    private var head = 0
    private(set) var count = 0

    mutating func append(_ ticket: Ticket) {
        if count == storage.count { grow() }
        storage[(head + count) & (storage.count - 1)] = ticket
        count += 1
    }

    /// Drops every ticket, keeping the storage.
    mutating func removeAll() {
        head = 0
        count = 0
    }

    mutating func popFirst() -> Ticket? {
        guard count > 0 else { return nil }
        let ticket = storage[head]
        head = (head + 1) & (storage.count - 1)
        count -= 1
        return ticket
    }

    private mutating func grow() {
        let capacity = max(16, storage.count * 2)
        var grown: [Ticket] = []
        grown.reserveCapacity(capacity)
        for index in 0..<count { grown.append(storage[(head + index) & (storage.count - 1)]) }
        grown.append(contentsOf: repeatElement(Ticket(flow: IdpSdkFlowID(rawValue: 0), number: 0), count: capacity - count))
        storage = grown
        head = 0
    }
}
