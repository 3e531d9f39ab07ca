import Foundation
import IdpPrimitives
import IdpWireFormats

/// Keys in the order they were entered, each with when it expires: what a shard prunes from, a
/// few entries per request, instead of scanning its tables under its lock. Entries lie in a
/// ``ChunkList``: a queue grows by one chunk at a time and never copies its entries, and a chunk
/// emptied at the head is kept to be filled at the tail, so once a shard's traffic is steady the
/// queue neither allocates nor frees.
///
/// No chunk is made under the shard's lock: the first is made with the queue, and at its first
/// append and whenever the tail starts a chunk with no spare left, the queue asks for one
/// (``wantsChunk``, ``takeUpkeep()``), which its owner makes after the lock (writing, and so
/// mapping, every page of it) and hands in (``install(_:)``) long before the 256 slots of the tail
/// chunk fill. A tail that fills first makes its own (``chunksMadeUnderLock``).
///
/// Entries of one queue expire in the order they were entered when they share one lifetime (a
/// session shard's do); one that outlives an entry behind it holds that entry
/// back until it expires itself, which costs memory for a while, never correctness: every read
/// checks expiry itself.
struct ExpiryQueue<Key> {
    typealias Entry = (key: Key, expiresAt: Date)
    typealias Upkeep = ChunkUpkeep<Entry>

    /// Slots per chunk.
    static var chunkCapacity: Int { ChunkList<Entry>.capacity }
    /// The chunks, 18 KiB of 72-byte slots each; the head chunk is the first not emptied.
    private var chunks = ChunkList<Entry>()
    /// The oldest entry's slot in the head chunk.
    private var offset = 0
    /// The next free slot in the last chunk.
    private var tailOffset = 0
    private(set) var count = 0
    /// When the oldest entry expires (the distant future when the queue is empty): kept here, in
    /// the queue's own words, so that a prune that finds nothing expired reads no chunk.
    private var oldestExpiry = Date.distantFuture

    /// Whether the queue has no spare chunk and has not asked for one yet: a new queue asks at its
    /// first append.
    var wantsChunk: Bool { chunks.wantsChunk }
    /// How many chunks the tail had to make under the lock, for want of a spare.
    var chunksMadeUnderLock: Int { chunks.chunksMadeUnderLock }

    /// Enters `key`, which expires at `expiresAt`; returns ``wantsChunk``, for the owner to note
    /// that it has upkeep to hand out.
    @discardableResult
    mutating func append(_ key: Key, expiresAt: Date) -> Bool {
        if tailOffset == Self.chunkCapacity {
            chunks.addChunk()
            tailOffset = 0
        }
        chunks[chunks.count - 1, tailOffset] = (key, expiresAt)
        tailOffset += 1
        if count == 0 { oldestExpiry = expiresAt }
        count += 1
        return wantsChunk
    }

    /// Takes out up to `limit` of the oldest entries that expired by `now`, passing each key to
    /// `body`.
    mutating func popExpired(now: Date, limit: Int, _ body: (Key) -> Void) {
        var popped = 0
        while popped < limit, oldestExpiry <= now, let entry = chunks[chunks.emptied, offset].take() {
            offset += 1
            count -= 1
            popped += 1
            if offset == Self.chunkCapacity {
                _ = chunks.dropHeadChunk()
                offset = 0
            }
            oldestExpiry = count > 0 ? chunks[chunks.emptied, offset]?.expiresAt ?? .distantFuture : .distantFuture
            body(entry.key)
        }
    }

    /// Hands out the queue's request for a chunk, if any, to be made after the lock.
    mutating func takeUpkeep() -> Upkeep { chunks.takeUpkeep() }

    /// Takes the chunk `upkeep` made as the spare, if the queue still has none; a chunk not taken
    /// stays in `upkeep`, for its holder to release after the lock.
    mutating func install(_ upkeep: inout Upkeep) { chunks.install(&upkeep) }
}

/// A table an ``ExpiryQueue`` prunes.
protocol PrunedTable<Key, Value> {
    associatedtype Key: Hashable
    associatedtype Value
    subscript(key: Key) -> Value? { get }
    mutating func removeValue(forKey key: Key) -> Value?
}

extension IncrementalTable: PrunedTable {}

extension ExpiryQueue where Key: Hashable {
    /// Drops from `table` up to two of this queue's keys that expired by `before`
    /// (``prunedPerRequest``), each only if its entry in `table` expired by then too (`expiresAt`):
    /// a key entered again with a later expiry stays. Table and queue are changed in place; the
    /// entries dropped are returned, for the caller to release after its lock.
    @discardableResult
    mutating func prune<Table: PrunedTable>(_ table: inout Table, before: Date, expiresAt: (Table.Value) -> Date) -> Pruned<Table.Value>
    where Table.Key == Key {
        var pruned = Pruned<Table.Value>()
        popExpired(now: before, limit: prunedPerRequest) { key in
            if let value = table[key], expiresAt(value) <= before { pruned.keep(table.removeValue(forKey: key)) }
        }
        return pruned
    }
}

extension ExpiryQueue: Sendable where Key: Sendable {}

/// The entries one prune dropped (at most ``prunedPerRequest``), moved out of their table so that
/// whoever holds this releases them, and frees what they own, after the lock is released.
struct Pruned<Value> {
    private var first: Value?
    private var second: Value?

    mutating func keep(_ value: Value?) {
        if first == nil { first = value } else { second = value }
    }

    /// How many of the dropped entries satisfy `predicate`.
    func count(where predicate: (Value) -> Bool) -> Int {
        (first.map(predicate) == true ? 1 : 0) + (second.map(predicate) == true ? 1 : 0)
    }
}

/// How many expired entries a queue drops each time a key is entered into it: more than the one
/// entered, so a queue drains, and few enough that the lock is held for nanoseconds.
let prunedPerRequest = 2

/// How long an expired code, token or session is kept before it is pruned: a day, so that one
/// presented late is told as expired, not as unknown.
let keptAfterExpiry: TimeInterval = 24 * 3600
