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
/// id (trace bindings by trace id), each behind its own `LockedValue`, so SDK threads answering
/// different users rarely meet on one lock. `provideCredentials` hashes the user id once (no
/// SipHash, no key built), holds the shard's lock for one probe of the shard's open-addressing
/// table and a check that the stored values are exactly the asked fields, and copies out a
/// reference to the values (no deep copy); any other answer is built after releasing it (an
/// activation takes the trace shard, then the user shard, never both at once). Writers hold one
/// shard for one table write. This is the recommended provider for many users.
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
    private func withShard<Result>(_ hash: UInt64, _ body: (inout Shard) -> Result) -> Result {
        borrowedShards[Int(truncatingIfNeeded: hash &>> 60) & (Self.shardCount - 1)]._withUnsafeGuaranteedRef { $0.withLock(body) }
    }

    /// Adds or replaces the user's values (by field id).
    public func set(_ values: [String: String], userId: String, tenantId: String) {
        let hash = hash(userId)
        let entry = CredentialStoreTable.Entry(tenantId: tenantId, userId: userId, values: values)
        withShard(hash) { $0.users.set(entry, hash: hash) }
    }

    /// Removes the user; their next flow ends with ``CredentialProviderError/Code/noCredentials``.
    public func remove(userId: String, tenantId: String) {
        let hash = hash(userId)
        _ = withShard(hash) { $0.users.remove(hash: hash, tenantId: tenantId, userId: userId) }
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
    /// traceparent's bound trace id for an activation. Takes one shard lock; never blocks beyond
    /// it.
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: The values of the asked fields; ``CredentialProviderError/Code/noCredentials``
    ///   when no user is found, ``CredentialProviderError/Code/missingValue`` when an asked field
    ///   has no value.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let found: (values: [String: String], exact: Bool)?
        if let userId = interactionData.userId {
            found = values(tenantId: interactionData.tenantId, userId: userId, asking: interactionData.inputFieldIds)
        } else if let traceId = interactionData.traceParent.flatMap({ TraceParent.traceId(of: $0) }),
                  let key = withShard(hash(traceId), { $0.traces[traceId] }) {
            found = values(tenantId: key.tenantId, userId: key.userId, asking: interactionData.inputFieldIds)
        } else {
            found = nil
        }
        guard let found else {
            return .init(error: CredentialProviderError.make(.noCredentials, "no credentials for \(userDescription(interactionData))"))
        }
        // The usual case: the stored values are exactly the asked fields, checked under the lock.
        return found.exact ? .init(credentials: found.values) : .answering(interactionData, from: found.values)
    }

    /// One shard lock for one probe and the answer check; the answer is built after it.
    @inline(__always)
    private func values(tenantId: String, userId: String, asking ids: [String]) -> (values: [String: String], exact: Bool)? {
        let hash = hash(userId)
        return withShard(hash) { $0.users.values(hash: hash, tenantId: tenantId, userId: userId, asking: ids) }
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
