import Foundation
import IdpPrimitives
import IdpWireFormats

/// A session code as a table key: its UTF-8 bytes packed into six words, so a table probe
/// compares and hashes inline bytes instead of following each probed key to its string's
/// storage. Texts of up to 48 bytes map one to one; a longer text, which
/// this server never issues, maps to a key nothing is stored under.
struct GrantKey: Hashable, Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    /// The text's length in bytes, or `UInt8.max` for a text too long to be a grant.
    private var length: UInt8 = 0

    static let capacity = 48

    init(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard bytes.count <= Self.capacity else {
                length = .max
                return
            }
            length = UInt8(bytes.count)
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
        }
    }

    static func == (lhs: GrantKey, rhs: GrantKey) -> Bool {
        lhs.length == rhs.length && lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
            && lhs.words.3 == rhs.words.3 && lhs.words.4 == rhs.words.4 && lhs.words.5 == rhs.words.5
    }

    /// Hashes the first 16 bytes and the length: every session code this server issues is random
    /// there (at least 122 bits once the route is set), so more bytes would spread keys no better,
    /// and a table probe, done under its shard's lock, hashes a third as much. Equality still
    /// compares every byte.
    func hash(into hasher: inout Hasher) {
        hasher.combine(length)
        hasher.combine(words.0)
        hasher.combine(words.1)
    }
}

/// Codes, tokens and token families whose handles route here (``ShardRouting``), each kind in a
/// ``GrantLog``: the order they were issued in, at positions their handles name.
///
/// Each change is a few log operations on values made before the lock. Storing a grant appends it
/// at its log's tail and first drops up to ``prunedPerRequest`` grants of that log that expired a
/// day ago or more, so a shard is pruned by its own traffic, a few entries at a time, and never
/// scanned; what was dropped is handed out of the lock (``Pruned``). The logs' next chunks are
/// made after the lock (``withLockThenUpkeep(_:)``).
struct GrantShard {
    /// Authorization codes, issued and redeemed: a redeemed code is kept until it would have
    /// expired, so reuse is told apart from an unknown code and can revoke what the first use
    /// issued (RFC 6749 §4.1.2). Redeeming changes the code's entry where it lies.
    private(set) var codes = GrantLog<CodeEntry>(.codes)
    /// How many of ``codes`` are redeemed.
    private(set) var redeemedCodeCount = 0
    /// Tokens by lifetime: access and exchanged tokens, refresh tokens, offline tokens.
    private var shortTokens = GrantLog<TokenRecord>(.shortTokens)
    private var refreshTokens = GrantLog<TokenRecord>(.refreshTokens)
    private var offlineTokens = GrantLog<TokenRecord>(.offlineTokens)
    /// Token families: everything one code redemption issued and every rotation and exchange
    /// since. A token is revoked exactly when its family is gone (revoked or ended): revocation
    /// removes one entry, and a family keeps no list of its tokens. Named by position
    /// (``FamilyID``): no client ever presents one.
    private var families = GrantLog<FamilyState>(.codes)
    /// Whether a log asked for a chunk since the shard last handed out its upkeep.
    private(set) var upkeepDue = false

    /// How many of ``codes`` are issued and not redeemed.
    var outstandingCodeCount: Int { codes.count - redeemedCodeCount }

    /// How many tokens are stored.
    var tokenCount: Int { shortTokens.count + refreshTokens.count + offlineTokens.count }

    /// Every stored token's handle: for inspection (statistics, tests), never under a flow's lock.
    var tokenHandles: [GrantHandle] { shortTokens.handles + refreshTokens.handles + offlineTokens.handles }

    /// Stores an issued code, placing `draft`; returns its handle and the expired codes it pruned.
    mutating func addCode(_ code: CodeRecord, as draft: GrantHandle, now: Date) -> (GrantHandle, Pruned<CodeEntry>) {
        let pruned = codes.prune(before: now.addingTimeInterval(-keptAfterExpiry)) { $0.expiresAt }
        redeemedCodeCount -= pruned.count { if case .redeemed = $0 { true } else { false } }
        let handle = codes.append(.issued(code), as: draft, expiresAt: code.expiresAt)
        upkeepDue = upkeepDue || codes.wantsChunk
        return (handle, pruned)
    }

    /// The record of the code `code` while it is issued: read in a section of its own, so that the
    /// request's checks against it (``PresentedCode/verdict(on:)``: comparisons of strings whose
    /// bytes lie outside the log) run after the lock, and the redemption's section decides on
    /// their verdict (``redeem(_:_:checked:familyEndsAt:forgetAt:now:)``).
    func issuedRecord(_ code: GrantHandle) -> CodeRecord? {
        if case .issued(let record)? = codes[code] { return record }
        return nil
    }

    /// Decides the code `code`, presented for redemption by `presented`, with one lookup: an
    /// issued code the request may redeem is marked redeemed where it lies, and the family its
    /// redemption opens is reserved (ending at `familyEndsAt`), to be opened in a section of its
    /// own (``openFamily(_:_:)``); a redeemed code has the family it opened revoked and is marked.
    /// An expired code is dropped; another refusal leaves the code redeemable.
    /// - Parameters:
    ///   - checked: The verdict on the code's issued record, reached before the lock
    ///     (``issuedRecord(_:)``); used while the code's entry still holds that record, and
    ///     otherwise reached here.
    mutating func redeem(_ code: GrantHandle, _ presented: PresentedCode, checked: CheckedCode?, familyEndsAt: Date, forgetAt: Date,
                         now: Date) -> CodeRedemption {
        /// What the code's entry decided, before the shard's other logs are changed.
        enum Found {
            case unknown, reused(FamilyID), refused(CodeRefusal, CodeRecord), kept(CodeRecord), redeemed(CodeRecord)
        }
        // The family's place, taken only if the code is redeemed: the position the next append
        // gives it, read before the code's entry is changed.
        let family = FamilyID(position: families.tail)
        let found: Found = codes.withRecord(code) { entry in
            switch entry {
            case nil:
                return .unknown
            case .redeemed(var redeemed)?:
                if let earlier = presented.plantedEarlierRead(checked) {
                    entry = .redeemed(RedeemedCode(forgetAt: forgetAt, family: family))
                    return .redeemed(earlier)
                }
                if !redeemed.revokedFamily {
                    redeemed.revokedFamily = true
                    entry = .redeemed(redeemed)
                }
                return .reused(redeemed.family)
            case .issued(let record)?:
                let verdict = checked.flatMap { $0.record === record ? $0.verdict : nil } ?? presented.verdict(on: record)
                switch verdict {
                case .otherTenant:
                    return .unknown
                case .refused(let refusal):
                    if refusal == .expired { entry = nil }
                    return .refused(refusal, record)
                case .redeemable:
                    guard !presented.plantedKeepsCode else { return .kept(record) }
                    entry = .redeemed(RedeemedCode(forgetAt: forgetAt, family: family))
                    return .redeemed(record)
                }
            }
        }
        switch found {
        case .unknown: return .unknown
        case .reused(let family): return .reused(revoked: presented.plantedReuseRevokesNothing ? nil : revokeFamily(family))
        case .refused(let refusal, let record): return .refused(refusal, record)
        case .kept(let record): return .redeemed(record, family: reserveFamily(endingAt: familyEndsAt, now: now))
        case .redeemed(let record):
            redeemedCodeCount += 1
            let reserved = reserveFamily(endingAt: familyEndsAt, now: now)
            assert(reserved.family == family, "a family's place is the log's tail")
            return .redeemed(record, family: reserved)
        }
    }

    /// Appends a reserved family ending at `endsAt`; returns its id and the families it pruned.
    private mutating func reserveFamily(endingAt endsAt: Date, now: Date) -> ReservedFamily {
        let pruned = families.prune(before: now.addingTimeInterval(-keptAfterExpiry)) { $0.expiresAt }
        let handle = families.append(.reserved(expiresAt: endsAt), as: .blank, expiresAt: endsAt)
        upkeepDue = upkeepDue || families.wantsChunk
        return ReservedFamily(family: FamilyID(position: handle.position), pruned: pruned)
    }

    /// Opens `family`, reserved by its code's redemption: its tokens are live from now until it
    /// ends or is revoked. A family revoked in between (its code was presented again) stays
    /// revoked.
    mutating func openFamily(_ family: FamilyID, _ value: TokenFamily) {
        families.withRecord(position: family.position) { state in
            if case .reserved? = state { state = .open(value) }
        }
    }

    /// The open family `family`, if it is neither revoked nor ended.
    func family(_ family: FamilyID) -> TokenFamily? {
        if case .open(let value)? = families[position: family.position] { return value }
        return nil
    }

    /// Whether `token`'s family has been revoked (or has ended, or was never opened): then the
    /// token is revoked too.
    func isRevoked(_ token: TokenRecord) -> Bool {
        family(token.family) == nil
    }

    /// Revokes every token of `family`: what reuse of a rotated refresh token does (OAuth 2.0
    /// Security BCP §4.14.2). Returns the family, for the caller to release after the lock.
    @discardableResult
    mutating func revokeFamily(_ family: FamilyID) -> TokenFamily? {
        let removed = families.withRecord(position: family.position) { $0.take() }
        if case .open(let value)? = removed { return value }
        return nil
    }

    /// The token `token` names, if it is stored.
    func token(_ token: GrantHandle) -> TokenRecord? {
        switch token.log {
        case .shortTokens: shortTokens[token]
        case .refreshTokens: refreshTokens[token]
        case .offlineTokens: offlineTokens[token]
        case .codes: nil
        }
    }

    /// Marks the refresh or offline token `token` rotated: presenting it again is reuse.
    mutating func markRotated(_ token: GrantHandle) {
        switch token.log {
        case .refreshTokens: refreshTokens.withRecord(token) { $0?.rotated = true }
        case .offlineTokens: offlineTokens.withRecord(token) { $0?.rotated = true }
        case .shortTokens, .codes: break
        }
    }

    /// Stores `record`, placing `draft` in the log of its kind; returns the token's handle and the
    /// expired tokens of its kind it pruned.
    mutating func add(_ record: TokenRecord, as draft: GrantHandle, now: Date) -> (GrantHandle, Pruned<TokenRecord>) {
        let before = now.addingTimeInterval(-keptAfterExpiry)
        // The log is changed in place: a copy of a log would copy its chunks' list.
        let result: (GrantHandle, Pruned<TokenRecord>)
        switch record.kind {
        case .access, .exchanged:
            let pruned = shortTokens.prune(before: before) { $0.expiresAt }
            result = (shortTokens.append(record, as: draft, expiresAt: record.expiresAt), pruned)
            upkeepDue = upkeepDue || shortTokens.wantsChunk
        case .refresh:
            let pruned = refreshTokens.prune(before: before) { $0.expiresAt }
            result = (refreshTokens.append(record, as: draft, expiresAt: record.expiresAt), pruned)
            upkeepDue = upkeepDue || refreshTokens.wantsChunk
        case .offline:
            let pruned = offlineTokens.prune(before: before) { $0.expiresAt }
            result = (offlineTokens.append(record, as: draft, expiresAt: record.expiresAt), pruned)
            upkeepDue = upkeepDue || offlineTokens.wantsChunk
        }
        return result
    }
}

/// A family reserved by a code's redemption (``GrantShard/redeem(_:_:checked:familyEndsAt:forgetAt:now:)``).
struct ReservedFamily {
    let family: FamilyID
    /// The expired families reserving it pruned, released after the lock.
    let pruned: Pruned<FamilyState>
}

extension GrantShard: UpkeptShard {
    /// The upkeep of the shard's logs: their requests for chunks.
    struct Upkeep: ShardUpkeep {
        var codes = GrantLog<CodeEntry>.Upkeep(), shortTokens = GrantLog<TokenRecord>.Upkeep(), refreshTokens = GrantLog<TokenRecord>.Upkeep()
        var offlineTokens = GrantLog<TokenRecord>.Upkeep(), families = GrantLog<FamilyState>.Upkeep()

        mutating func makeSpares() -> Bool {
            let made = [codes.makeSpares(), shortTokens.makeSpares(), refreshTokens.makeSpares(), offlineTokens.makeSpares(), families.makeSpares()]
            return made.contains(true)
        }
    }

    /// How many chunks the shard's logs made under its lock, for want of a spare.
    var chunksMadeUnderLock: Int {
        codes.chunksMadeUnderLock + shortTokens.chunksMadeUnderLock + refreshTokens.chunksMadeUnderLock + offlineTokens.chunksMadeUnderLock
            + families.chunksMadeUnderLock
    }

    mutating func takeUpkeep() -> Upkeep {
        upkeepDue = false
        return Upkeep(codes: codes.takeUpkeep(), shortTokens: shortTokens.takeUpkeep(), refreshTokens: refreshTokens.takeUpkeep(),
                      offlineTokens: offlineTokens.takeUpkeep(), families: families.takeUpkeep())
    }

    mutating func install(_ upkeep: inout Upkeep) {
        codes.install(&upkeep.codes)
        shortTokens.install(&upkeep.shortTokens)
        refreshTokens.install(&upkeep.refreshTokens)
        offlineTokens.install(&upkeep.offlineTokens)
        families.install(&upkeep.families)
    }
}
