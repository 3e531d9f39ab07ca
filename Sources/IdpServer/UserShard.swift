import Foundation
import IdpPrimitives
import IdpWireFormats

/// A user's place in the server: tenant and user id, hashed once when the key is made, so that a
/// lookup under a shard's lock hashes one word instead of two strings.
struct UserKey: Hashable {
    let tenant: String
    let user: String
    /// The hash of tenant and user id.
    let hash: Int

    init(tenant: String, user: String) {
        self.tenant = tenant
        self.user = user
        var hasher = Hasher()
        hasher.combine(tenant)
        hasher.combine(user)
        hash = hasher.finalize()
    }

    static func == (lhs: UserKey, rhs: UserKey) -> Bool {
        lhs.hash == rhs.hash && lhs.tenant == rhs.tenant && lhs.user == rhs.user
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}

/// User records by tenant and id: plain values, changed in place under the shard's lock (a
/// write goes to one entry; nothing is copied on the way). Every change makes a new
/// ``UserRecord/revision``, so a step decided on a copy of a record (`StepDecision`) can tell, when
/// it commits, whether the record is still the one it read. The records grow with the users
/// added, so they are an ``IncrementalTable``.
struct UserShard {
    private var records = IncrementalTable<UserKey, UserRecord>()

    subscript(key: UserKey) -> UserRecord? { records[key] }

    /// Stores `record` under `key`, as the next revision of what is there.
    mutating func store(_ record: UserRecord, for key: UserKey) {
        records.withValue(forKey: key) { stored in
            var record = record
            record.revision = (stored?.revision ?? 0) &+ 1
            stored = record
        }
    }

    /// What ``commit(_:for:ifRevision:)`` did.
    enum Commit {
        /// The record under the key is no longer the revision the caller read: nothing changed.
        case stale
        /// The record is stored (or, with none to store, the one there is still current);
        /// `replaced`: the record it replaced, for the caller to release after the lock.
        case committed(replaced: UserRecord?)
    }

    /// Stores `record` under `key`, as the next revision, if the record there is still at
    /// `revision` (`nil`: there is none); with no `record`, only checks that. One lookup; the
    /// revision is read in place, and the record stored is swapped in, so nothing is copied.
    mutating func commit(_ record: UserRecord?, for key: UserKey, ifRevision revision: UInt64?) -> Commit {
        records.withValue(forKey: key) { stored in
            guard stored?.revision == revision else { return .stale }
            guard var record else { return .committed(replaced: nil) }
            record.revision = (revision ?? 0) &+ 1
            guard stored != nil else {
                stored = record
                return .committed(replaced: nil)
            }
            swap(&record, &stored!)
            return .committed(replaced: record)
        }
    }

    /// Changes the record under `key` in place, as its next revision; `nil` if there is none.
    mutating func update<Result, Failure: Error>(_ key: UserKey, _ change: (inout UserRecord) throws(Failure) -> Result) throws(Failure) -> Result? {
        try records.withValue(forKey: key) { (stored) throws(Failure) -> Result? in
            guard stored != nil else { return nil }
            stored!.revision &+= 1
            return try change(&stored!)
        }
    }
}

extension UserShard: UpkeptShard {
    var upkeepDue: Bool { records.upkeepDue }
    mutating func takeUpkeep() -> TableUpkeep<UserKey, UserRecord> { records.takeUpkeep() }
    mutating func install(_ upkeep: inout TableUpkeep<UserKey, UserRecord>) { records.install(&upkeep) }
}
