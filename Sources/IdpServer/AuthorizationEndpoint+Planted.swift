import Foundation
import IdpPrimitives

// The authorization endpoint's planted bugs (`PlantedBug.idpCountsFailureOnStaleCopy`,
// `idpDrawsFreshValuesUnderLocks`), beside it: one hook per site; a release build compiles each to
// the unplanted behaviour.
extension IdpServer {
    #if DEBUG
    /// In `commit(_:read:)`: what a planted endpoint's commit of `decision` returns
    /// (`idpCountsFailureOnStaleCopy`: a decision made on a stale copy of the user's record is
    /// committed anyway, its lockout counters over the ones committed since, a lost update, its
    /// other changes applied to the current record); `nil`: the real commit.
    func plantedStaleCommit(_ decision: StepDecision, read: StepSnapshot) -> Bool? {
        configuration.plantedBug.isOn(.idpCountsFailureOnStaleCopy) ? commitStaleCopy(decision, read: read) : nil
    }

    /// In `decideUnderLocks`: the snapshot a planted endpoint decides on (`idpDrawsFreshValuesUnderLocks`:
    /// one whose random values are not made yet, so the decision draws them under the locks).
    func plantedSnapshotUnderLocks(_ read: StepSnapshot) -> StepSnapshot {
        configuration.plantedBug.isOn(.idpDrawsFreshValuesUnderLocks) ? read.withUnmadeFreshValues() : read
    }

    /// `commit(_:read:)` with `idpCountsFailureOnStaleCopy`: a stale copy of the
    /// user's record is committed over the current one, losing the lockout counters' updates.
    private func commitStaleCopy(_ decision: StepDecision, read: StepSnapshot) -> Bool {
        let sessionCode = read.sessionCode, sessionKey = GrantKey(sessionCode)
        return state.sessionShard(sessionCode).withLock { sessions in
            guard sessions.session(sessionKey)?.revision == read.session?.revision else { return false }
            guard let key = read.key else {
                sessions.apply(decision.session, code: sessionKey)
                return true
            }
            return state.userShard(key).withLock { users in
                var stale = decision
                if let written = decision.user, let current = users[key], current.revision != read.record?.revision {
                    stale.user = current.withLostUpdate(from: written, read: read.record)
                }
                stale.write(sessionCode: sessionKey, sessions: &sessions, key: key, users: &users)
                return true
            }
        }
    }

    #else
    @inline(__always)
    func plantedStaleCommit(_ decision: StepDecision, read: StepSnapshot) -> Bool? { nil }
    @inline(__always)
    func plantedSnapshotUnderLocks(_ read: StepSnapshot) -> StepSnapshot { read }
    #endif
}

#if DEBUG
extension UserRecord {
    /// This record with `written` (a decision made on the stale copy `read`) committed over it
    /// as `idpCountsFailureOnStaleCopy` commits it: the lockout counters and the
    /// decision number are the stale copy's, lost updates; every other field the decision
    /// changed is applied to this record, so only the counting is wrong.
    func withLostUpdate(from written: UserRecord, read: UserRecord?) -> UserRecord {
        var merged = self
        merged.failedAttempts = written.failedAttempts
        merged.totalFailedAttempts = written.totalFailedAttempts
        merged.lockouts = written.lockouts
        merged.lockedUntil = written.lockedUntil
        merged.permanentlyLocked = written.permanentlyLocked
        merged.decisions = written.decisions
        if written.status != read?.status { merged.status = written.status }
        if written.passwordHash != read?.passwordHash { merged.passwordHash = written.passwordHash }
        merged.activationCodes.apply(changes: written.activationCodes, since: read?.activationCodes ?? [:])
        merged.passwordResetCodes.apply(changes: written.passwordResetCodes, since: read?.passwordResetCodes ?? [:])
        merged.attributes.apply(changes: written.attributes, since: read?.attributes ?? [:])
        merged.astClientIds += written.astClientIds.filter { !(read?.astClientIds.contains($0) ?? false) && !merged.astClientIds.contains($0) }
        return merged
    }
}

extension StepSnapshot {
    /// This snapshot with random values not made yet (`idpDrawsFreshValuesUnderLocks`).
    func withUnmadeFreshValues() -> StepSnapshot {
        StepSnapshot(session: session, key: key, record: record, now: now, fresh: FreshValues(), digests: digests, sessionCode: sessionCode)
    }
}
#endif
