import Foundation
import IdpPrimitives
import IdpWireFormats

/// One line of the IDP's audit log. Holds no secrets: no passwords, codes or tokens.
public struct AuditEntry: Sendable, Equatable, CustomStringConvertible {
    /// What happened.
    public enum Event: String, Sendable, Equatable {
        /// An authorize request opened a flow and its first form was served.
        case authorizationRequested
        /// An authorize request was refused (unknown client, bad redirect URI, missing header, …);
        /// the detail says why.
        case authorizationRefused
        /// A form step after the first was served.
        case stepServed
        /// A submitted step's answers were wrong; the same step is served again with the rejection.
        case credentialsRejected
        /// A flow ended with an error redirect (too many attempts, expired session, refused
        /// submission, …).
        case flowFailed
        /// A pending user consumed an activation code and is now active.
        case userActivated
        /// A flow completed and an authorization code was issued.
        case codeIssued
        /// An authorization code was exchanged for tokens.
        case codeRedeemed
        /// A token request was refused (a bad, spent or expired code or token, a wrong verifier, a
        /// lock); the detail says why.
        case tokenRequestRefused
        /// A wrong secret locked the account (it follows that attempt's `credentialsRejected`).
        case accountLocked
        /// An attempt for a locked account, refused without looking at its answers.
        case lockedAttemptRefused
        /// A refresh token or offline token was exchanged for new tokens (rotation).
        case tokensRefreshed
        /// A rotated refresh token was presented again; its whole token family is revoked.
        case refreshTokenReused
        /// An access token was exchanged for a token of another audience (RFC 8693).
        case tokenExchanged
        /// A change-password flow set a new password after the current one was proven.
        case passwordChanged
        /// A forgot-password flow set a new password with a one-time password-reset code.
        case passwordReset
        /// The IDP issued a one-time password-reset code (to be handed to the user out of band).
        case passwordResetCodeIssued
    }

    /// When, by the server's clock: for a decision on a request (a form step, a token grant), the
    /// time that decision was made at, which is the time it was judged by (lock in force, code or
    /// token expired).
    public var time: Date
    /// What happened.
    public var event: Event
    /// The tenant (realm) the request was for.
    public var tenant: String
    /// The client of the request; `nil` when the request could not be tied to one (a form
    /// submission with no live flow).
    public var clientId: String?
    /// The user the event concerns; `nil` when none is known (a refused authorize request without a
    /// login hint, a refused form submission).
    public var userId: String?
    /// The W3C traceparent the request carried, if it was valid.
    public var traceParent: String?
    /// The trace id of ``traceParent``; what tests correlate flows by.
    public var traceId: String? {
        traceParent.flatMap { TraceParent.traceId(of: $0) }
    }
    /// Whether ``traceId`` is `traceId`, without parsing the traceparent of another trace.
    package func isOfTrace(_ traceId: String) -> Bool {
        traceParent.map { TraceParent.traceId(of: $0, is: traceId) } ?? false
    }
    /// A short human-readable detail (step number, reason of a refusal).
    public var detail: String
    /// For a decision on a form step that named an existing user (a step passed, a wrong secret,
    /// a lock, an attempt refused while locked, a flow ended or completed): its number among that
    /// user's decisions, from 1, on every entry of the decision (which then names that user). A
    /// decision's entries are appended together, after its locks are released, so two decisions
    /// on one user made at nearly the same moment can appear in either order, and one made a
    /// moment ago may not be in the log yet (a gap in the numbers);
    /// ``IdpServer/userDecisions(_:tenant:)`` reads them back in the order they were decided.
    package var userDecision: UInt64? = nil

    /// One line: the event, then `tenant=`, `client=`, `user=`, `trace=` (`-` for `nil`) and the
    /// detail.
    public var description: String {
        "\(event.rawValue) tenant=\(tenant) client=\(clientId ?? "-") user=\(userId ?? "-") trace=\(traceId ?? "-") \(detail)"
    }
}

/// A fixed-capacity ring: the newest `capacity` elements are kept. Its storage is made a chunk
/// of ``chunkCapacity`` slots at a time as it fills, each written in full when made (so its pages
/// are mapped then, not one by one by later appends): an append never copies the elements already
/// kept, and a log that is never filled takes only the memory its entries need.
///
/// No chunk is made under its owner's lock: the first is made with the ring, and while the ring
/// will need another chunk and has none in hand, it asks for it (``wantsChunk``,
/// ``takeUpkeep()``, a ``GrowthSpare``); the owner makes it after the lock (``ChunkUpkeep``) and hands it in
/// (``install(_:)``). An append that would need a chunk before the one asked for arrives does not
/// make it under the lock: its owner checks ``fits(_:)`` first, makes the chunk after the lock
/// and tries again. Only a batch larger than a chunk makes its own (``chunksMadeUnderLock``).
struct AuditRing<Element> {
    typealias Upkeep = ChunkUpkeep<Element>
    typealias Chunk = Upkeep.Chunk
    private var chunks: [Chunk] = []
    /// The slot the next element goes to; once the ring is full, its oldest element's.
    private var next = 0
    private(set) var count = 0
    let capacity: Int
    private(set) var dropped = 0
    /// The next chunk, made after the lock.
    private var spare = GrowthSpare<Chunk>()

    /// Slots per chunk (a power of two).
    static var chunkCapacity: Int { 256 }

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        guard self.capacity > 0 else { return }
        chunks.append(Upkeep.makeChunk(slots: nextChunkSlots))
    }

    /// How many chunks were made under the lock, for want of a spare.
    var chunksMadeUnderLock: Int { spare.madeUnderLock }

    /// Whether the chunks made hold fewer slots than the ring's capacity.
    private var isPartlyMade: Bool { chunks.count * Self.chunkCapacity < capacity }

    /// Whether the ring will need another chunk and has none in hand or asked for.
    var wantsChunk: Bool { spare.isWanted && isPartlyMade }

    /// The slots of the chunk after those made, while the chunks hold fewer than `capacity` slots.
    private var nextChunkSlots: Int {
        min(Self.chunkCapacity, capacity - chunks.count * Self.chunkCapacity)
    }

    /// Appends `element`, dropping the oldest one if the ring is full.
    mutating func append(_ element: Element) {
        guard capacity > 0 else {
            dropped += 1
            return
        }
        if count < capacity {
            if next == chunks.count * Self.chunkCapacity { addChunk() }
            count += 1
        } else {
            dropped += 1
        }
        chunks[next / Self.chunkCapacity][next % Self.chunkCapacity] = element
        next = (next + 1) % capacity
    }

    /// Whether `more` elements fit without a chunk made under the lock: in the slots of the chunks
    /// made and the spare, or over the oldest elements once the ring is full. A batch larger than
    /// a chunk always fits (it makes what it needs).
    func fits(_ more: Int) -> Bool {
        guard capacity > 0, more <= Self.chunkCapacity else { return true }
        let made = min(chunks.count * Self.chunkCapacity, capacity) + (spare.kept?.count ?? 0)
        return min(more, capacity - count) <= made - count
    }

    /// The slots of the chunk an append that does not fit (``fits(_:)``) needs made after the
    /// lock: the next chunk's, while the ring has no spare and is not fully made; else 0.
    var chunkSlotsToMake: Int {
        spare.kept == nil && isPartlyMade ? nextChunkSlots : 0
    }

    /// Hands out the ring's request for a chunk, if any, to be made after the lock.
    mutating func takeUpkeep() -> Upkeep {
        Upkeep(slots: spare.request(nextChunkSlots, due: isPartlyMade) ?? 0)
    }

    /// Takes the chunk `upkeep` made as the next chunk, if the ring still needs one of its size;
    /// a chunk not taken stays in `upkeep`, for its holder to release after the lock.
    mutating func install(_ upkeep: inout Upkeep) {
        let slots = nextChunkSlots, partlyMade = isPartlyMade
        spare.install(&upkeep.chunk) { partlyMade && $0.count == slots }
    }

    private mutating func addChunk() {
        let slots = nextChunkSlots
        chunks.append(spare.take { $0.count == slots } ?? Upkeep.makeChunk(slots: slots))
    }

    /// The kept elements that `isIncluded` accepts, oldest first, copying no others.
    func elements(where isIncluded: (Element) -> Bool) -> [Element] {
        var found: [Element] = []
        let oldest = count == capacity ? next : 0
        for offset in 0..<count {
            let slot = (oldest + offset) % capacity
            if let element = chunks[slot / Self.chunkCapacity][slot % Self.chunkCapacity], isIncluded(element) { found.append(element) }
        }
        return found
    }
}

extension AuditRing: Sendable where Element: Sendable {}
