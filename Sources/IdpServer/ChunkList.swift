import IdpPrimitives

/// A request for one chunk of empty slots, made after its owner's lock: what an ``ExpiryQueue``,
/// a ``GrantLog`` or an ``AuditRing`` asks for when its tail will need a chunk and it has no
/// spare (its `takeUpkeep()`), and hands in under the lock again (its `install(_:)`).
struct ChunkUpkeep<Element>: ShardUpkeep {
    typealias Chunk = ContiguousArray<Element?>
    /// The slots of the chunk asked for; 0 for none.
    let slots: Int
    /// The chunk, made by ``makeSpares()``; taken by the owner that installs it.
    var chunk: Chunk?

    /// A request for a chunk of `slots` slots, or (0) none.
    init(slots: Int = 0) { self.slots = slots }

    /// An empty chunk of `slots` slots, every one written (so its pages are mapped when it is
    /// made, not one by one by later appends).
    static func makeChunk(slots: Int) -> Chunk {
        LockProfiler.noteHeavyWork(.largeAllocation)
        return Chunk(repeating: nil, count: slots)
    }

    /// Makes the chunk asked for, if any (outside the lock); returns whether it made one.
    mutating func makeSpares() -> Bool {
        guard slots > 0, chunk == nil else { return false }
        chunk = Self.makeChunk(slots: slots)
        return true
    }
}

extension ChunkUpkeep: Sendable where Element: Sendable {}

/// The chunks of a store that fills at the tail and empties at the head (an ``ExpiryQueue``, a
/// ``GrantLog``): chunks of ``capacity`` slots, oldest first, the first ``emptied`` of them passed
/// by the head. The store reads and writes slots in place (``subscript(_:_:)``); this list adds a
/// chunk at the tail, keeps one passed by the head as the spare, and asks for a spare to be made
/// after the lock when it has none (``wantsChunk``, ``takeUpkeep()``, ``install(_:)``), so once a
/// shard's traffic is steady it neither allocates nor frees. A tail that needs a chunk before a
/// spare arrives makes its own (``chunksMadeUnderLock``).
///
/// Not thread-safe: a value kept inside a shard's lock.
struct ChunkList<Element> {
    typealias Upkeep = ChunkUpkeep<Element>
    typealias Chunk = Upkeep.Chunk

    /// Slots per chunk: written in full when the chunk is made, once per 256 entries.
    static var capacity: Int { 256 }
    /// log2 of ``capacity``.
    static var shift: UInt64 { 8 }

    private var chunks: [Chunk] = [ChunkList.makeChunk()]
    /// Chunks at the front that the head has passed; they hold nothing.
    private(set) var emptied = 0
    /// A chunk to fill once the tail chunk is full: an emptied one, or one made after the lock.
    private var spare = GrowthSpare<Chunk>()

    /// Whether the list has no spare chunk and has not asked for one: a new list asks at its
    /// store's first append.
    var wantsChunk: Bool { spare.isWanted }
    /// How many chunks the tail had to make under the lock, for want of a spare.
    var chunksMadeUnderLock: Int { spare.madeUnderLock }

    /// An empty chunk, every slot written.
    static func makeChunk() -> Chunk { Upkeep.makeChunk(slots: capacity) }

    /// The chunks, emptied ones included.
    var count: Int { chunks.count }

    /// Slot `slot` of chunk `chunk`, read and written in place.
    subscript(chunk: Int, slot: Int) -> Element? {
        @inline(__always) get { chunks[chunk][slot] }
        @inline(__always) _modify { yield &chunks[chunk][slot] }
    }

    /// Adds a chunk at the tail: the spare, or one made now (under the lock).
    mutating func addChunk() {
        chunks.append(spare.take { _ in true } ?? Self.makeChunk())
    }

    /// Marks the oldest chunk not yet emptied as passed by the head (it must hold nothing), keeps
    /// it as the spare if there is none, and now and then drops the emptied chunks' places (a move
    /// of a few hundred words at most). Returns how many chunks were dropped from the front (0
    /// most times), for the store to shift its indices.
    mutating func dropHeadChunk() -> Int {
        var passed = Chunk()
        swap(&passed, &chunks[emptied])
        _ = spare.keep(passed)
        emptied += 1
        guard emptied >= 64, 2 * emptied >= chunks.count else { return 0 }
        let dropped = emptied
        chunks.removeFirst(dropped)
        emptied = 0
        return dropped
    }

    /// Hands out the list's request for a chunk, if any, to be made after the lock.
    mutating func takeUpkeep() -> Upkeep {
        Upkeep(slots: spare.request(Self.capacity, due: true) ?? 0)
    }

    /// Takes the chunk `upkeep` made as the spare, if the list still has none; a chunk not taken
    /// stays in `upkeep`, for its holder to release after the lock.
    mutating func install(_ upkeep: inout Upkeep) {
        spare.install(&upkeep.chunk) { _ in true }
    }
}

extension ChunkList: Sendable where Element: Sendable {}
