import IdpPrimitives
import IdpWireFormats
import IdpSdk

/// Credentials of many users, by tenant and user id, updatable from any thread while flows read
/// them.
///
/// ```swift
/// let store = CredentialStore()
/// store.set(["username": "alice", "password": "s3cret"], userId: "alice", tenantId: "demo")
/// // a login flow for userId "alice" is answered from that entry
/// store.bind(traceId: trace.traceId, toUser: "bob", tenantId: "demo") // an activation (userId nil)
/// ```
///
/// A flow is matched to its user by `interactionData.userId`; an activation has no user id yet, so
/// it is matched by its traceparent's trace id, bound with ``bind(traceId:toUser:tenantId:)``.
///
/// Threading: the table is split into 16 shards by the top bits of a cheap seeded hash of the user
/// id (trace bindings by trace id), each behind its own `LockedValue`, and each with a version
/// number, on cache lines of its own, that ``set(_:userId:tenantId:)`` and
/// ``remove(userId:tenantId:)`` advance under the shard's lock. Every SDK thread keeps its own
/// answers from the store, by user and asked fields, each with the version it was last known
/// good at. `provideCredentials` hashes the user id once (no SipHash, no key built), reads the
/// shard's version and looks in the calling thread's answers: an answer still good at that
/// version is returned from the thread's own copy, with no lock taken and no memory written that
/// another thread writes. Otherwise it holds the shard's lock for one probe of the shard's
/// open-addressing table and a check that the stored values are exactly the asked fields, and
/// keeps the answer for the thread (a thread makes a copy of its own the second time it gives
/// an answer, so a user answered once costs no copy). A write to a shard sends the threads back
/// to its lock once for each user they answer from it; one whose values did not change keeps the
/// thread's copy. Writers hold one shard for one table write and advance its version: a call that
/// starts after ``set(_:userId:tenantId:)`` or ``remove(userId:tenantId:)`` returns sees the
/// change. An activation (no user id) also takes the shard lock of its trace binding. A thread
/// keeps at most 1,536 answers per store (it starts again empty when it has more), for the last
/// 8 stores or other per-thread users it served; removed and replaced values leave a thread's
/// copies when that thread next answers the user or gives the space to others, or when it ends.
/// This is the recommended provider for many users.
public final class CredentialStore: IdpSdkNonBlockingProvider, Sendable, CustomStringConvertible {
    /// A user of a tenant.
    public struct Key: Hashable, Sendable {
        /// The user's tenant.
        public let tenantId: String
        /// The user's id.
        public let userId: String
        /// A user of a tenant.
        /// - Parameters:
        ///   - tenantId: The user's tenant.
        ///   - userId: The user's id.
        public init(tenantId: String, userId: String) {
            self.tenantId = tenantId
            self.userId = userId
        }

        /// Hashes the user id only: a store rarely serves more than one tenant, so hashing the
        /// tenant too would cost every lookup and spread nothing. Equality still compares both.
        public func hash(into hasher: inout Hasher) { hasher.combine(userId) }
    }

    private struct Shard {
        var users = CredentialStoreTable()
        var traces: [String: Key] = [:]
    }

    private static let shardCount = 16
    /// Owns the shards.
    private let shards: [LockedValue<Shard>]
    /// Each shard's version: advanced (releasing) under the shard's lock by every write to its
    /// users, read (acquiring) by every call before it trusts the thread's answers.
    private let versions = SpacedAtomics(count: CredentialStore.shardCount)
    /// The answers each thread gave from this store.
    private let answers = ThreadConfined<CredentialStoreAnswers>()
    /// The same shards, unretained: a call borrows its shard through
    /// `_withUnsafeGuaranteedRef` instead of retaining and releasing it, which on a shared shard
    /// is an atomic read-modify-write on a cache line every SDK thread touches. Sound because
    /// `shards` keeps each one alive as long as the store, and a call runs inside a method of the
    /// store.
    private let borrowedShards: InlineArray<16, Unmanaged<LockedValue<Shard>>>
    /// Seeds ``CredentialStoreTable/hash(_:seed:)``, so which ids collide differs from store to
    /// store.
    private let seed = UInt64.random(in: .min ... .max)

    /// An empty store.
    public init() {
        let shards = (0..<CredentialStore.shardCount).map { _ in LockedValue(Shard(), label: "CredentialStore.table") }
        self.shards = shards
        borrowedShards = InlineArray { Unmanaged.passUnretained(shards[$0]) }
    }

    /// The store's hash of a user id or trace id: every byte, a few multiplies, no SipHash. Its
    /// top bits pick the shard, its low bits the slot in the shard's table.
    @inline(__always)
    private func hash(_ id: String) -> UInt64 { CredentialStoreTable.hash(id, seed: seed) }

    @inline(__always)
    private static func shard(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash &>> 60) & (shardCount - 1) }

    @inline(__always)
    private func withShard<Result>(_ hash: UInt64, _ body: (inout Shard) -> Result) -> Result {
        borrowedShards[Self.shard(hash)]._withUnsafeGuaranteedRef { $0.withLock(body) }
    }

    /// Adds or replaces the user's values (by field id). A call that starts after this returns, on
    /// any thread, answers the new values.
    /// - Parameters:
    ///   - values: The values by field id.
    ///   - userId: The user's id.
    ///   - tenantId: The user's tenant.
    public func set(_ values: [String: String], userId: String, tenantId: String) {
        let hash = hash(userId)
        let shard = Self.shard(hash)
        var entry = CredentialStoreTable.Entry(tenantId: tenantId, userId: userId, values: values)
        withShard(hash) { table in
            // The version advances after the table changes, under the lock: a reader that sees
            // the new version sees the new values.
            entry.stamp = versions.load(at: shard) &+ 1
            table.users.set(entry, hash: hash)
            versions.addReleasing(1, at: shard)
        }
    }

    /// Removes the user; a flow of theirs that calls after this returns ends with
    /// ``CredentialProviderError/Code/noCredentials``.
    /// - Parameters:
    ///   - userId: The user's id.
    ///   - tenantId: The user's tenant.
    public func remove(userId: String, tenantId: String) {
        let hash = hash(userId)
        let shard = Self.shard(hash)
        withShard(hash) { table in
            if table.users.remove(hash: hash, tenantId: tenantId, userId: userId) { versions.addReleasing(1, at: shard) }
        }
    }

    /// Answers flows without a user id (activations) whose traceparent has `traceId` from the
    /// user's entry. Unbind when the flow is over.
    public func bind(traceId: String, toUser userId: String, tenantId: String) {
        withShard(hash(traceId)) { $0.traces[traceId] = Key(tenantId: tenantId, userId: userId) }
    }

    /// Forgets a trace binding.
    public func unbind(traceId: String) {
        withShard(hash(traceId)) { _ = $0.traces.removeValue(forKey: traceId) }
    }

    /// The number of users stored.
    public var count: Int { shards.reduce(0) { sum, shard in sum + shard.withLock { $0.users.count } } }

    /// Answers one step from the stored values of the flow's user: by `userId` for a login, by the
    /// traceparent's bound trace id for an activation. An answer the calling thread gave before
    /// and that is still the store's comes from the thread's own copy, without a lock; otherwise
    /// the call takes one shard lock. Never blocks beyond it.
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: The values of the asked fields; ``CredentialProviderError/Code/noCredentials``
    ///   when no user is found, ``CredentialProviderError/Code/missingValue`` when an asked field
    ///   has no value.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let tenantId: String, userId: String
        if let id = interactionData.userId {
            (tenantId, userId) = (interactionData.tenantId, id)
        } else if let traceId = interactionData.traceParent.flatMap({ TraceParent.traceId(of: $0) }),
                  let key = withShard(hash(traceId), { $0.traces[traceId] }) {
            (tenantId, userId) = (key.tenantId, key.userId)
        } else {
            return noCredentials(interactionData)
        }
        let hash = hash(userId)
        let shard = Self.shard(hash)
        let ids = interactionData.inputFieldIds
        return answers.withCurrent(orMake: { CredentialStoreAnswers() }) { answers in
            let version = versions.loadAcquiring(at: shard)
            let slot = answers.index(hash: hash, tenantId: tenantId, userId: userId, asking: ids)
            if let slot, let answer = answers.answer(in: slot, at: version) { return .init(credentials: answer) }
            // One shard lock for one probe and the answer check; the version read under it is
            // the one the values belong to (writers advance it under the same lock).
            let (found, current) = withShard(hash) { table in
                (table.users.values(hash: hash, tenantId: tenantId, userId: userId, asking: ids), versions.load(at: shard))
            }
            guard let found else {
                if let slot { answers.forget(slot) }
                return noCredentials(interactionData)
            }
            if let slot, answers.slots[slot].stamp == found.stamp { return .init(credentials: answers.revalidate(slot, at: current)) }
            // The usual case: the stored values are exactly the asked fields, checked under the lock.
            let result = found.exact ? .init(credentials: found.values) : IdpSdkProvideCredentialsResult.answering(interactionData, from: found.values)
            // Kept in the slot it had, or at its second answer on this thread.
            if let answer = result.credentials, slot != nil || answers.admits(hash: hash, asking: ids) {
                answers.keep(answer, stamp: found.stamp, version: current, in: slot, hash: hash, tenantId: tenantId, userId: userId, asking: ids)
            }
            return result
        }
    }

    /// How many answers the calling thread keeps from this store.
    var answersKeptOnThisThread: Int { answers.withCurrent(orMake: { CredentialStoreAnswers() }) { $0.count } }

    private func noCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        .init(error: CredentialProviderError.make(.noCredentials, "no credentials for \(userDescription(interactionData))"))
    }

    /// Counts, never values.
    public var description: String {
        let counts = shards.reduce((0, 0)) { sum, shard in
            let counts = shard.withLock { ($0.users.count, $0.traces.count) }
            return (sum.0 + counts.0, sum.1 + counts.1)
        }
        return "CredentialStore(users: \(counts.0), trace bindings: \(counts.1))"
    }
}
