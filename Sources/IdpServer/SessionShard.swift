import Foundation
import IdpPrimitives
import IdpWireFormats

/// Login flows in progress, by session code (a ``GrantKey``: a probe compares and hashes the
/// code's bytes inline, and a removal that moves its neighbours rehashes theirs without following
/// a pointer), in an ``IncrementalTable``: a shard that outgrows its table moves a few sessions
/// per change into a larger one made after the lock, instead of rehashing every session, into
/// memory first touched, under it.
struct SessionShard {
    private var sessions = IncrementalTable<GrantKey, AuthSession>()
    private var expiries = ExpiryQueue<GrantKey>()
    /// Whether the expiry queue asked for a chunk.
    private var expiriesWantChunk = false

    /// The session `code`, if it is open.
    func session(_ code: GrantKey) -> AuthSession? { sessions[code] }

    /// How many sessions are open (or expired and not yet pruned).
    var count: Int { sessions.count }

    /// Opens a session; returns the sessions it pruned (a few that expired a day ago or more).
    mutating func open(_ session: AuthSession, code: GrantKey, now: Date) -> Pruned<AuthSession> {
        let pruned = expiries.prune(&sessions, before: now.addingTimeInterval(-keptAfterExpiry)) { $0.expiresAt }
        let expiresAt = session.expiresAt
        sessions.updateValue(session, forKey: code)
        expiriesWantChunk = expiries.append(code, expiresAt: expiresAt) || expiriesWantChunk
        return pruned
    }

    /// Writes what a step decided (``StepDecision/SessionWrite``) to the session `code` if it is
    /// still at `revision` and `alongside` (the rest of the commit, run while the session is
    /// checked and not yet written) agrees: a stored session is the next revision. One lookup;
    /// the session is moved out of its slot and back, never copied. Returns whether it committed,
    /// and the session it replaced or removed, for the caller to release after the lock.
    mutating func commit(_ write: StepDecision.SessionWrite, code: GrantKey, ifRevision revision: UInt64,
                         alongside: () -> Bool) -> (committed: Bool, replaced: AuthSession?) {
        sessions.withValue(forKey: code) { session in
            guard session?.revision == revision, alongside() else { return (false, nil) }
            return (true, Self.write(write, to: &session))
        }
    }

    /// Writes what a step decided for the session `code` (``StepDecision/SessionWrite``): a
    /// stored session is the next revision. Returns the session it replaced or removed.
    @discardableResult
    mutating func apply(_ write: StepDecision.SessionWrite, code: GrantKey) -> AuthSession? {
        if case .none = write { return nil }
        return sessions.withValue(forKey: code) { Self.write(write, to: &$0) }
    }

    /// `write` applied to `session`; returns what it replaced or removed.
    private static func write(_ write: StepDecision.SessionWrite, to session: inout AuthSession?) -> AuthSession? {
        switch write {
        case .none:
            return nil
        case .store(var stored):
            stored.revision = (session?.revision ?? 0) &+ 1
            let replaced = session.take()
            session = consume stored
            return replaced
        case .remove:
            return session.take()
        }
    }
}

extension SessionShard: UpkeptShard {
    /// The expiry queue's chunk and the table's spare, made after the lock; the table's drained
    /// storage, released with it.
    struct Upkeep: ShardUpkeep {
        var expiries = ExpiryQueue<GrantKey>.Upkeep()
        var table = TableUpkeep<GrantKey, AuthSession>()

        mutating func makeSpares() -> Bool {
            let madeChunk = expiries.makeSpares()
            return table.makeSpares() || madeChunk
        }
    }

    var upkeepDue: Bool { expiriesWantChunk || sessions.upkeepDue }

    /// How many chunks the expiry queue made under the lock, for want of a spare.
    var chunksMadeUnderLock: Int { expiries.chunksMadeUnderLock }

    /// How many tables the session table made under the lock, for want of a spare.
    var tablesMadeUnderLock: Int { sessions.tablesMadeUnderLock }

    mutating func takeUpkeep() -> Upkeep {
        expiriesWantChunk = false
        return Upkeep(expiries: expiries.takeUpkeep(), table: sessions.takeUpkeep())
    }

    mutating func install(_ upkeep: inout Upkeep) {
        expiries.install(&upkeep.expiries)
        sessions.install(&upkeep.table)
    }
}
