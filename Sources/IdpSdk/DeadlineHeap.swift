import Foundation

/// Deadlines by id, earliest first: a binary heap of (deadline, id) beside a table of the live
/// entries. A plain value, so that a shard's timers can be decided on under its lock and tested
/// without one; ``FlowTimerShardStateMachine`` holds it.
///
/// Removal is lazy: ``remove(_:)`` forgets the entry in the table at once (so its payload is
/// released) and leaves the heap slot, which is dropped when it reaches the top, or when stale
/// slots outnumber live ones and the heap is rebuilt (amortised O(1) per removal). So an ended flow
/// costs 16 bytes of heap until then, never its payload. Each id may be inserted once.
struct DeadlineHeap<Payload> {
    private struct Slot {
        var deadline: Date
        var id: UInt64
    }

    private var heap: [Slot] = []
    private var live: [UInt64: Payload] = [:]

    /// The number of live entries.
    var count: Int { live.count }

    /// The number of heap slots, live and stale: what the heap costs until stale slots are dropped.
    var slots: Int { heap.count }

    mutating func insert(_ payload: Payload, id: UInt64, deadline: Date) {
        live[id] = payload
        heap.append(Slot(deadline: deadline, id: id))
        siftUp(heap.count - 1)
    }

    /// Forgets the entry `id`. Returns whether it was live.
    @discardableResult
    mutating func remove(_ id: UInt64) -> Bool {
        guard live.removeValue(forKey: id) != nil else { return false }
        if heap.count > 64 && heap.count > 2 * live.count { rebuild() }
        return true
    }

    /// The earliest live deadline.
    mutating func nextDeadline() -> Date? {
        dropStaleTop()
        return heap.first?.deadline
    }

    /// Removes and returns the payloads of every entry due at `now`, earliest first.
    mutating func popDue(at now: Date) -> [Payload] {
        var due: [Payload] = []
        while let top = nextDeadline(), top <= now {
            let slot = heap[0]
            removeTop()
            if let payload = live.removeValue(forKey: slot.id) { due.append(payload) }
        }
        return due
    }

    private mutating func dropStaleTop() {
        while let top = heap.first, live[top.id] == nil { removeTop() }
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func rebuild() {
        heap.removeAll { live[$0.id] == nil }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

extension DeadlineHeap: Sendable where Payload: Sendable {}
