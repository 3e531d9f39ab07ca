import Foundation
import IdpWireFormats

/// A code or token as the server mints it: 32 bytes, sent as 43 characters of URL-safe Base 64,
/// that say where the grant's record lies and carry 200 random bits.
///
/// | bytes | holds |
/// |---|---|
/// | 0 | the route (six high bits, ``ShardRouting``: the first character) and the log (two low bits, ``GrantHandle/Log``) |
/// | 1–6 | the record's position in that log of that shard (48 bits, big-endian) |
/// | 7–31 | random bytes from the system's secure source |
///
/// A record is found where its handle says, and is the handle's only if the handle stored with it
/// is equal in all 32 bytes: a guessed or altered handle finds nothing, as an unknown key would.
/// Positions grow by one per grant and are never reused, so a stale handle never reaches a newer
/// grant.
struct GrantHandle: Equatable, Sendable {
    /// Which of a shard's logs a grant lies in.
    enum Log: UInt8, Sendable, CaseIterable {
        /// Access and exchanged tokens (the short lifetime).
        case shortTokens = 0
        case refreshTokens = 1
        case offlineTokens = 2
        case codes = 3
    }

    /// The 32 bytes, in order.
    private var words: (UInt64, UInt64, UInt64, UInt64)

    /// The bytes of each grant's text.
    static let byteCount = 32

    /// A handle's bytes before it has a log and a position: `route` (`nil`: one drawn at random)
    /// and fresh random bytes. A shard places it (``placed(in:at:)``) when it stores the grant.
    static func draft(route: Int? = nil) -> GrantHandle {
        var handle = GrantHandle.blank
        // All 32 bytes in one draw from the thread's pool, not four.
        withUnsafeMutableBytes(of: &handle.words) { SecureRandom.fill($0) }
        let drawn = Int(handle.byte(0) >> 2)
        handle.setByte(0, UInt8(truncatingIfNeeded: (route ?? drawn) & (ShardRouting.routes - 1)) << 2)
        for index in 1...6 { handle.setByte(index, 0) }
        return handle
    }

    /// A handle with no route and no random bytes, for a grant the server names only inside
    /// itself (``FamilyID``).
    static var blank: GrantHandle { GrantHandle(words: (0, 0, 0, 0)) }

    /// The handle of a grant stored in `log` at `position`: this draft's route and random bytes.
    func placed(in log: Log, at position: UInt64) -> GrantHandle {
        var handle = self
        handle.setByte(0, byte(0) & 0b1111_1100 | log.rawValue)
        for index in 1...6 { handle.setByte(index, UInt8(truncatingIfNeeded: position >> UInt64(8 * (6 - index)))) }
        return handle
    }

    /// The handle `text` spells, or `nil` for text that is not 43 characters of URL-safe Base 64
    /// (which then is found nowhere).
    init?(text: String) {
        guard text.utf8.count == 43 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        // Decoded straight into the handle's words: no array between.
        guard withUnsafeMutableBytes(of: &words, { Base64URL.decode(text, into: $0) }) == Self.byteCount else { return nil }
        self.words = words
    }

    private init(words: (UInt64, UInt64, UInt64, UInt64)) {
        self.words = words
    }

    /// The 43 characters sent for the grant.
    var text: String {
        withUnsafeBytes(of: words) { Base64URL.encode($0) }
    }

    /// Appends ``text``'s bytes to `bytes`, without making the string.
    func appendText(to bytes: inout [UInt8]) {
        withUnsafeBytes(of: words) { Base64URL.append(raw: $0, to: &bytes) }
    }

    /// The route, the shard's index before masking (``ShardRouting``).
    var route: Int { Int(byte(0) >> 2) }

    /// The log the handle names; ``Log/codes`` for any value the server never sets.
    var log: Log { Log(rawValue: byte(0) & 0b11) ?? .codes }

    /// The record's position in its log.
    var position: UInt64 {
        (1...6).reduce(0) { $0 << 8 | UInt64(byte($1)) }
    }

    static func == (lhs: GrantHandle, rhs: GrantHandle) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    private func byte(_ index: Int) -> UInt8 {
        withUnsafeBytes(of: words) { $0[index] }
    }

    private mutating func setByte(_ index: Int, _ value: UInt8) {
        withUnsafeMutableBytes(of: &words) { $0[index] = value }
    }
}

/// Grants of one kind in one shard, in the order they were issued, each at a position that never
/// changes (``GrantHandle``): the table and the expiry queue in one.
///
/// A grant is appended at the tail, next to the one issued before it, so storing one touches the
/// memory the last one touched instead of a random slot of a large table; finding one reads the
/// slot its handle names. Grants of one log share a lifetime, so they expire in the order they were
/// issued: each append first drops up to ``prunedPerRequest`` expired grants at the head (one
/// that outlives a grant behind it holds that one back until it expires itself, which costs memory
/// for a while, never correctness: every read checks expiry itself). A removed grant leaves its
/// slot empty until the head passes it.
///
/// Entries lie in a ``ChunkList``, as an ``ExpiryQueue``'s do: the tail's next chunk is made
/// outside the shard's lock (``wantsChunk``, ``takeUpkeep()``, ``install(_:)``), and a chunk the
/// head has passed is kept as that spare, so once a shard's traffic is steady the log neither
/// allocates nor frees. A tail that fills before a spare arrives makes its own
/// (``chunksMadeUnderLock``).
///
/// Not thread-safe: a value kept inside a shard's lock.
struct GrantLog<Record> {
    struct Entry {
        let handle: GrantHandle
        var record: Record
    }

    typealias Upkeep = ChunkUpkeep<Entry>

    /// Slots per chunk.
    static var chunkCapacity: Int { ChunkList<Entry>.capacity }

    /// The chunks, oldest first; those the head passed hold nothing.
    private var chunks = ChunkList<Entry>()
    /// The position of the first slot of the first chunk.
    private var base: UInt64 = 0
    /// The oldest position still kept; those before it were pruned.
    private(set) var head: UInt64 = 0
    /// The next position.
    private(set) var tail: UInt64 = 0
    /// When the grant at the head expires as ``prune(before:expiresAt:)`` last read it (the
    /// distant future for an empty log): a prune that finds nothing due reads no chunk.
    private var headExpiry = Date.distantFuture
    /// Grants stored and not removed or pruned.
    private(set) var count = 0
    /// Whether the log has no spare chunk and has not asked for one yet: a new log asks at its
    /// first append.
    var wantsChunk: Bool { chunks.wantsChunk }
    /// How many chunks the tail had to make under the lock, for want of a spare.
    var chunksMadeUnderLock: Int { chunks.chunksMadeUnderLock }
    private let log: GrantHandle.Log
    #if DEBUG
    /// The planted bug (``init(_:planting:)``).
    var planted = PlantedBugSwitch()
    #endif

    /// An empty log; its grants' handles name `log`.
    init(_ log: GrantHandle.Log) {
        self.log = log
    }

    /// Stores `record` at the tail, placing `draft` there; returns the grant's handle.
    /// - Parameter expiresAt: When the record expires (read only if the log is empty).
    mutating func append(_ record: Record, as draft: GrantHandle, expiresAt: Date) -> GrantHandle {
        let handle = draft.placed(in: log, at: tail)
        let (chunk, slot) = place(of: tail)
        if chunk == chunks.count { chunks.addChunk() }
        chunks[chunk, slot] = Entry(handle: handle, record: record)
        if head == tail { headExpiry = expiresAt }
        tail += 1
        count += 1
        return handle
    }

    /// The record `handle` names, if it is stored here.
    subscript(handle: GrantHandle) -> Record? {
        guard let (chunk, slot) = locate(handle) else { return nil }
        return chunks[chunk, slot]?.record
    }

    /// The record at `position`, if it is stored: for grants named only inside the server
    /// (a token family), which no client presents.
    subscript(position position: UInt64) -> Record? {
        guard position >= head, position < tail else { return nil }
        let (chunk, slot) = place(of: position)
        return chunks[chunk, slot]?.record
    }

    /// Runs `body` on the record `handle` names (`nil`: none) and keeps what it leaves there: a
    /// record replaces the stored one, `nil` removes it. A record set where there was none is
    /// not stored (grants are only appended).
    mutating func withRecord<Result>(_ handle: GrantHandle, _ body: (inout Record?) -> Result) -> Result {
        guard let (chunk, slot) = locate(handle) else {
            var none: Record?
            return body(&none)
        }
        return withRecord(chunk: chunk, slot: slot, body)
    }

    /// ``withRecord(_:_:)`` for the record at `position`.
    mutating func withRecord<Result>(position: UInt64, _ body: (inout Record?) -> Result) -> Result {
        let (chunk, slot) = place(of: position)
        guard position >= head, position < tail, chunks[chunk, slot] != nil else {
            var none: Record?
            return body(&none)
        }
        return withRecord(chunk: chunk, slot: slot, body)
    }

    private mutating func withRecord<Result>(chunk: Int, slot: Int, _ body: (inout Record?) -> Result) -> Result {
        // Moved out of its slot and back, never copied.
        let entry = chunks[chunk, slot].take()!
        var record: Record? = entry.record
        defer {
            if let record = record.take() {
                chunks[chunk, slot] = Entry(handle: entry.handle, record: record)
            } else {
                count -= 1
                // A removed grant at the head is passed by the next prune.
                if (chunk, slot) == place(of: head) { headExpiry = .distantPast }
            }
        }
        return body(&record)
    }

    /// Removes the record `handle` names; returns it, for the caller to release after the lock.
    mutating func remove(_ handle: GrantHandle) -> Record? {
        withRecord(handle) { $0.take() }
    }

    /// Drops up to ``prunedPerRequest`` grants at the head that expired by `before` or were
    /// removed; returns the records dropped, for the caller to release after its lock.
    mutating func prune(before: Date, expiresAt: (Record) -> Date) -> Pruned<Record> {
        var pruned = Pruned<Record>()
        var passed = 0
        let prunesUnexpired = plantedPrunesUnexpired
        while passed < prunedPerRequest, head < tail, headExpiry <= before || prunesUnexpired {
            let (chunk, slot) = place(of: head)
            if let entry = chunks[chunk, slot] {
                guard expiresAt(entry.record) <= before || prunesUnexpired else {
                    headExpiry = expiresAt(entry.record)
                    break
                }
                pruned.keep(chunks[chunk, slot].take()?.record)
                count -= 1
            }
            head += 1
            passed += 1
            if head & UInt64(Self.chunkCapacity - 1) == 0 {
                // The head left a chunk; the positions shift when the list drops chunks' places.
                base &+= UInt64(chunks.dropHeadChunk()) << ChunkList<Entry>.shift
            }
            headExpiry = head < tail ? nextHeadExpiry(expiresAt) : .distantFuture
        }
        return pruned
    }

    /// When the grant now at the head expires; a removed one is due at once.
    private func nextHeadExpiry(_ expiresAt: (Record) -> Date) -> Date {
        let (chunk, slot) = place(of: head)
        return chunks[chunk, slot].map { expiresAt($0.record) } ?? .distantPast
    }

    /// Every stored grant's handle, oldest first: for inspection (statistics, tests), never
    /// under a flow's lock.
    var handles: [GrantHandle] {
        (head..<tail).compactMap { position in
            let (chunk, slot) = place(of: position)
            return chunks[chunk, slot]?.handle
        }
    }

    /// Hands out the log's request for a chunk, if any, to be made after the lock.
    mutating func takeUpkeep() -> Upkeep { chunks.takeUpkeep() }

    /// Takes the chunk `upkeep` made as the spare, if the log still has none; a chunk not taken
    /// stays in `upkeep`, for its holder to release after the lock.
    mutating func install(_ upkeep: inout Upkeep) { chunks.install(&upkeep) }

    /// The slot of `handle`'s record, if the handle is this log's and the grant is stored.
    private func locate(_ handle: GrantHandle) -> (Int, Int)? {
        let position = handle.position
        guard handle.log == log, position >= head, position < tail else { return nil }
        let (chunk, slot) = place(of: position)
        guard let stored = chunks[chunk, slot]?.handle, stored == handle || plantedAcceptsAnyHandle else { return nil }
        return (chunk, slot)
    }

    /// The chunk index and slot of `position` (at least `base`).
    @inline(__always)
    private func place(of position: UInt64) -> (chunk: Int, slot: Int) {
        let offset = position &- base
        return (Int(truncatingIfNeeded: offset >> ChunkList<Entry>.shift), Int(truncatingIfNeeded: offset & UInt64(Self.chunkCapacity - 1)))
    }
}

extension GrantLog: Sendable where Record: Sendable {}
extension GrantLog.Entry: Sendable where Record: Sendable {}
