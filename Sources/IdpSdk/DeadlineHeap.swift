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
/// Entries and places lie in chunks of ``chunkCapacity`` slots, so the heap grows a chunk at a
/// time, copying nothing, and holds at most about one chunk more than it needs. It grows without
/// allocating under its owner's lock: when its last chunk is three quarters full it asks for the
/// next (``takeSpareRequest()``), which the owner makes after the lock (``makeChunk(slots:)``)
/// and hands in (``install(_:)``). One that fills before its spare arrives makes the chunk itself,
/// under the lock (``chunksMadeUnderLock``). It never shrinks.
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

    /// One chunk of a heap's storage: its entry and place slots, every one written when it is
    /// made, so its pages are mapped then, not by later inserts under the lock.
    struct Chunk {
        fileprivate var entries: ContiguousArray<Entry>
        fileprivate var places: ContiguousArray<Place>

        /// How many slots it has.
        var slotCount: Int { entries.count }
    }

    /// Slots per chunk: 4 KiB of entries and 4 KiB of places.
    static var chunkCapacity: Int { 256 }
    /// log2 of ``chunkCapacity``.
    private static var chunkShift: Int { 8 }

    /// The chunks: entry and place `i` lie in chunk `i >> chunkShift`, slot `i & (chunkCapacity - 1)`.
    private var chunks = [DeadlineHeap.makeChunk(slots: DeadlineHeap.chunkCapacity)]
    /// The payloads held: entries `0..<count` are the heap.
    private(set) var count = 0
    /// Places ever used; those from here on are fresh.
    private var placesUsed = 0
    /// The first free place below ``placesUsed`` (-1: none).
    private var firstFree = -1
    private var spare = GrowthSpare<Chunk>()

    init() {}

    /// How many payloads the heap holds before it grows.
    var capacity: Int { chunks.count << Self.chunkShift }

    /// How many times the heap grew by a chunk made under its owner's lock, for want of a spare.
    var chunksMadeUnderLock: Int { spare.madeUnderLock }

    /// An empty chunk of `slots` slots, every slot written: heavy work for a chunk of a page or
    /// more (``LockProfiler/noteHeavyWork(_:)``).
    static func makeChunk(slots: Int) -> Chunk {
        if slots >= 256 { LockProfiler.noteHeavyWork(.largeAllocation) }
        return Chunk(
            entries: ContiguousArray(repeating: Entry(deadline: .distantPast, place: -1), count: slots),
            places: ContiguousArray(repeating: Place(payload: nil, index: -1), count: slots))
    }

    /// The slots of the chunk to make after the lock (``chunkCapacity``), when the last chunk is
    /// three quarters full and the heap has no spare and asked for none; `nil` otherwise. Asks
    /// once: ``install(_:)`` hands it in.
    mutating func takeSpareRequest() -> Int? {
        spare.request(Self.chunkCapacity, due: count >= capacity - Self.chunkCapacity / 4)
    }

    /// Takes `made` (from ``makeChunk(slots:)``, after the lock) as the spare if the heap has
    /// none and it is a chunk; otherwise leaves it in `made`, for the caller to release after the
    /// lock.
    mutating func install(_ made: inout Chunk?) {
        spare.install(&made) { $0.slotCount == Self.chunkCapacity }
    }

    @inline(__always)
    private func entry(_ index: Int) -> Entry { chunks[index >> Self.chunkShift].entries[index & (Self.chunkCapacity - 1)] }

    @inline(__always)
    private mutating func setEntry(_ index: Int, _ entry: Entry) {
        chunks[index >> Self.chunkShift].entries[index & (Self.chunkCapacity - 1)] = entry
    }

    /// Place `place`, read and written in place.
    private subscript(place place: Int) -> Place {
        @inline(__always) get { chunks[place >> Self.chunkShift].places[place & (Self.chunkCapacity - 1)] }
        @inline(__always) _modify { yield &chunks[place >> Self.chunkShift].places[place & (Self.chunkCapacity - 1)] }
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
            firstFree = self[place: place].index
        } else {
            place = placesUsed
            placesUsed += 1
        }
        self[place: place] = Place(payload: payload, index: count)
        setEntry(count, Entry(deadline: deadline, place: place))
        payload.deadlineHeapPlace = place
        count += 1
        siftUp(count - 1)
        return true
    }

    /// Removes `payload`. Returns whether this heap held it.
    @discardableResult
    mutating func remove(_ payload: Payload) -> Bool {
        let place = payload.deadlineHeapPlace
        guard place >= 0, place < placesUsed, self[place: place].payload === payload else { return false }
        return take(at: self[place: place].index) != nil
    }

    /// The earliest deadline.
    var nextDeadline: Date? { count > 0 ? entry(0).deadline : nil }

    /// Removes and returns the payloads of every entry due at `now`, earliest first.
    mutating func popDue(at now: Date) -> [Payload] {
        var due: [Payload] = []
        while count > 0, entry(0).deadline <= now {
            if let payload = take(at: 0) { due.append(payload) }
        }
        return due
    }

    /// Removes the entry at `index` and frees its place; returns its payload.
    private mutating func take(at index: Int) -> Payload? {
        let place = entry(index).place
        let payload = self[place: place].payload.take()
        self[place: place].index = firstFree
        firstFree = place
        payload?.deadlineHeapPlace = -1
        count -= 1
        if index != count {
            move(entry(count), to: index)
            if !siftUp(index) { siftDown(index) }
        }
        return payload
    }

    /// Adds a chunk: the spare, or one made now.
    private mutating func grow() {
        // The chunk list itself (16 bytes a chunk) doubles now and then; past 128 chunks that is
        // heavy work too.
        if chunks.count == chunks.capacity && chunks.count >= 128 { LockProfiler.noteHeavyWork(.largeAllocation) }
        chunks.append(spare.take { $0.slotCount == Self.chunkCapacity } ?? Self.makeChunk(slots: Self.chunkCapacity))
    }

    /// Writes `entry` at `index` and tells its place.
    @inline(__always)
    private mutating func move(_ entry: Entry, to index: Int) {
        setEntry(index, entry)
        self[place: entry.place].index = index
    }

    /// Returns whether the entry moved.
    @discardableResult
    private mutating func siftUp(_ start: Int) -> Bool {
        let moving = entry(start)
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            let above = entry(parent)
            guard moving.deadline < above.deadline else { break }
            move(above, to: child)
            child = parent
        }
        guard child != start else { return false }
        move(moving, to: child)
        return true
    }

    private mutating func siftDown(_ start: Int) {
        let moving = entry(start)
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            guard left < count else { break }
            var smaller = left, smallerEntry = entry(left)
            if right < count {
                let rightEntry = entry(right)
                if rightEntry.deadline < smallerEntry.deadline { (smaller, smallerEntry) = (right, rightEntry) }
            }
            guard smallerEntry.deadline < moving.deadline else { break }
            move(smallerEntry, to: parent)
            parent = smaller
        }
        if parent != start { move(moving, to: parent) }
    }
}

extension DeadlineHeap: Sendable where Payload: Sendable {}
extension DeadlineHeap.Entry: Sendable {}
extension DeadlineHeap.Place: Sendable where Payload: Sendable {}
extension DeadlineHeap.Chunk: Sendable where Payload: Sendable {}
