import Foundation
import IdpPrimitives

/// What a ``DeadlineHeap`` holds: an object that keeps the number of its place in the heap that
/// holds it, so that removing it finds its entry without a table lookup.
protocol DeadlineHeapElement: AnyObject {
    /// Its place in the heap that holds it; -1 while no heap does. Written only by that heap, when
    /// the object enters and when it leaves, under the heap owner's lock.
    var deadlineHeapPlace: Int { get set }
}

/// Payloads by deadline, earliest first: a binary heap of (deadline, place) entries beside the
/// places that hold the payloads. A plain value, so that a shard's timers can be decided on under
/// its lock and tested without one; ``FlowTimerShardStateMachine`` holds it.
///
/// Every operation is bounded: an insert or a removal moves O(log n) entries and writes the index
/// of each moved entry into its place; no entry is hashed, and none is left behind to be swept
/// later, so a removed payload is released at once and no operation walks the heap. A payload
/// keeps its place number itself (``DeadlineHeapElement``); each place remembers where its entry
/// lies in the heap, so a removal finds the entry at once, and moving entries writes only the
/// heap's own memory, never another payload's.
///
/// The heap grows without allocating under its owner's lock: once three quarters full it asks for
/// storage twice its size (``takeSpareRequest()``), which the owner makes after the lock
/// (``makeStorage(capacity:)``) and hands in (``install(_:)``). One that fills before its spare
/// arrives makes the storage itself, under the lock (``storageMadeUnderLock``). It never shrinks.
struct DeadlineHeap<Payload: DeadlineHeapElement> {
    /// One heap entry: a deadline and the place of its payload.
    struct Entry {
        var deadline: Date
        var place: Int
    }

    /// One place: its payload and its entry's index in the heap; a free place holds no payload,
    /// and its `index` is the next free place (-1: none).
    struct Place {
        var payload: Payload?
        var index: Int
    }

    /// The storage of a heap of one capacity: every entry and place slot written when it is made,
    /// so its pages are mapped then, not by later inserts under the lock.
    struct Storage: SlottedStorage {
        fileprivate var entries: ContiguousArray<Entry>
        fileprivate var places: ContiguousArray<Place>

        var slotCount: Int { entries.count }
    }

    /// Slots of a new heap.
    static var initialCapacity: Int { 16 }

    private var storage = DeadlineHeap.makeStorage(capacity: DeadlineHeap.initialCapacity)
    /// The payloads held: entries `0..<count` are the heap.
    private(set) var count = 0
    /// Places ever used; those from here on are fresh.
    private var placesUsed = 0
    /// The first free place below ``placesUsed`` (-1: none).
    private var firstFree = -1
    private var spare = SpareStorage<Storage>()

    init() {}

    /// How many payloads the heap holds before it grows.
    var capacity: Int { storage.slotCount }

    /// How many times the heap grew into storage made under its owner's lock, for want of a
    /// spare.
    var storageMadeUnderLock: Int { spare.madeUnderLock }

    /// Empty storage for `capacity` payloads, every slot written: heavy work for storage of a page
    /// or more (``LockProfiler/noteHeavyWork(_:)``).
    static func makeStorage(capacity: Int) -> Storage {
        if capacity >= 256 { LockProfiler.noteHeavyWork(.largeAllocation) }
        return Storage(
            entries: ContiguousArray(repeating: Entry(deadline: .distantPast, place: -1), count: capacity),
            places: ContiguousArray(repeating: Place(payload: nil, index: -1), count: capacity))
    }

    /// The capacity of the storage to make after the lock, when the heap is three quarters full
    /// and has no spare and asked for none; 0 otherwise. Asks once: ``install(_:)`` hands it in.
    mutating func takeSpareRequest() -> Int {
        spare.request(count: count, capacity: capacity)
    }

    /// Takes `made` (from ``makeStorage(capacity:)``, after the lock) as the spare if the heap can
    /// still grow into it; otherwise leaves it in `made`, for the caller to release after the lock.
    mutating func install(_ made: inout Storage?) {
        spare.install(&made, capacity: capacity)
    }

    /// Adds `payload`, due at `deadline`. Returns `false`, and adds nothing, if a heap holds it
    /// already.
    @discardableResult
    mutating func insert(_ payload: Payload, deadline: Date) -> Bool {
        guard payload.deadlineHeapPlace < 0 else { return false }
        if count == capacity { grow() }
        let place: Int
        if firstFree >= 0 {
            place = firstFree
            firstFree = storage.places[place].index
        } else {
            place = placesUsed
            placesUsed += 1
        }
        storage.places[place] = Place(payload: payload, index: count)
        storage.entries[count] = Entry(deadline: deadline, place: place)
        payload.deadlineHeapPlace = place
        count += 1
        siftUp(count - 1)
        return true
    }

    /// Removes `payload`. Returns whether this heap held it.
    @discardableResult
    mutating func remove(_ payload: Payload) -> Bool {
        let place = payload.deadlineHeapPlace
        guard place >= 0, place < placesUsed, storage.places[place].payload === payload else { return false }
        return take(at: storage.places[place].index) != nil
    }

    /// The earliest deadline.
    var nextDeadline: Date? { count > 0 ? storage.entries[0].deadline : nil }

    /// Removes and returns the payloads of every entry due at `now`, earliest first.
    mutating func popDue(at now: Date) -> [Payload] {
        var due: [Payload] = []
        while count > 0, storage.entries[0].deadline <= now {
            if let payload = take(at: 0) { due.append(payload) }
        }
        return due
    }

    /// Removes the entry at `index` and frees its place; returns its payload.
    private mutating func take(at index: Int) -> Payload? {
        let place = storage.entries[index].place
        let payload = storage.places[place].payload.take()
        storage.places[place].index = firstFree
        firstFree = place
        payload?.deadlineHeapPlace = -1
        count -= 1
        if index != count {
            storage.entries.swapAt(index, count)
            storage.places[storage.entries[index].place].index = index
            if !siftUp(index) { siftDown(index) }
        }
        return payload
    }

    /// Moves into storage twice the size: the spare, or storage made now.
    private mutating func grow() {
        var larger = spare.take(growingFrom: capacity) ?? Self.makeStorage(capacity: 2 * capacity)
        for index in 0..<count { larger.entries[index] = storage.entries[index] }
        for place in 0..<placesUsed { swap(&larger.places[place], &storage.places[place]) }
        storage = larger
    }

    /// Swaps the entries at `a` and `b` and tells their places.
    @inline(__always)
    private mutating func swapEntries(_ a: Int, _ b: Int) {
        storage.entries.swapAt(a, b)
        storage.places[storage.entries[a].place].index = a
        storage.places[storage.entries[b].place].index = b
    }

    /// Returns whether the entry moved.
    @discardableResult
    private mutating func siftUp(_ start: Int) -> Bool {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage.entries[child].deadline < storage.entries[parent].deadline else { break }
            swapEntries(child, parent)
            child = parent
        }
        return child != start
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < count, storage.entries[left].deadline < storage.entries[smallest].deadline { smallest = left }
            if right < count, storage.entries[right].deadline < storage.entries[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            swapEntries(parent, smallest)
            parent = smallest
        }
    }
}

extension DeadlineHeap: Sendable where Payload: Sendable {}
extension DeadlineHeap.Entry: Sendable {}
extension DeadlineHeap.Place: Sendable where Payload: Sendable {}
extension DeadlineHeap.Storage: Sendable where Payload: Sendable {}
