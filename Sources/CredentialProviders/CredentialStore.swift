import IdpPrimitives
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
/// Threading: the table is split into 16 shards by a cheap hash of the user id (trace bindings by
/// trace id), each behind its own ``LockedValue``, so SDK threads answering different users rarely
/// meet on one lock. `provideCredentials` holds a shard's lock for one hash lookup and copies out a
/// reference to the user's values (no deep copy), then builds the answer after releasing it (an
/// activation takes the trace shard, then the user shard, never both at once). Writers hold one
/// shard for one dictionary write. This is the provider the README recommends for many users.
public final class CredentialStore: IdpSdkNonBlockingProvider, Sendable, CustomStringConvertible {
    /// A user of a tenant.
    public struct Key: Hashable, Sendable {
        public let tenantId: String
        public let userId: String
        public init(tenantId: String, userId: String) {
            self.tenantId = tenantId
            self.userId = userId
        }

        /// Hashes the user id only: a store rarely serves more than one tenant, so hashing the
        /// tenant too would cost every lookup and spread nothing. Equality still compares both.
        public func hash(into hasher: inout Hasher) { hasher.combine(userId) }
    }

    private struct Shard {
        var users: [Key: [String: String]] = [:]
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

    public init() {
        let shards = (0..<CredentialStore.shardCount).map { _ in LockedValue(Shard(), label: "CredentialStore.table") }
        self.shards = shards
        borrowedShards = InlineArray { Unmanaged.passUnretained(shards[$0]) }
    }

    /// The shard of a user id or trace id, from its length and its first and last eight UTF-8
    /// bytes (so ids that share a prefix, like "user-17", or a suffix, like "@corp.com", still
    /// spread): two loads and a multiply, a few nanoseconds.
    @inline(__always)
    private func withShard<Result>(_ id: String, _ body: (inout Shard) -> Result) -> Result {
        borrowedShards[shardIndex(id)]._withUnsafeGuaranteedRef { $0.withLock(body) }
    }

    private func shard(_ id: String) -> LockedValue<Shard> { shards[shardIndex(id)] }

    @inline(__always)
    private func shardIndex(_ id: String) -> Int {
        let hash = id.utf8.withContiguousStorageIfAvailable { bytes -> UInt64 in
            let raw = UnsafeRawBufferPointer(bytes)
            var head: UInt64 = 0, tail: UInt64 = 0
            if raw.count >= 8 {
                head = raw.loadUnaligned(as: UInt64.self)
                tail = raw.loadUnaligned(fromByteOffset: raw.count - 8, as: UInt64.self)
            } else {
                for byte in raw { head = head << 8 | UInt64(byte) }
            }
            return (head ^ (tail &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(raw.count)) &* 0xFF51_AFD7_ED55_8CCD
        } ?? UInt64(truncatingIfNeeded: id.hashValue)   // a bridged string without UTF-8 storage
        // The top bits of the product mix every input bit.
        return Int(truncatingIfNeeded: hash >> 60) & (Self.shardCount - 1)
    }

    /// Adds or replaces the user's values (by field id).
    public func set(_ values: [String: String], userId: String, tenantId: String) {
        shard(userId).withLock { $0.users[Key(tenantId: tenantId, userId: userId)] = values }
    }

    /// Removes the user; their next flow ends with ``CredentialProviderError/Code/noCredentials``.
    public func remove(userId: String, tenantId: String) {
        shard(userId).withLock { _ = $0.users.removeValue(forKey: Key(tenantId: tenantId, userId: userId)) }
    }

    /// Answers flows without a user id (activations) whose traceparent has `traceId` from the
    /// user's entry. Unbind when the flow is over.
    public func bind(traceId: String, toUser userId: String, tenantId: String) {
        shard(traceId).withLock { $0.traces[traceId] = Key(tenantId: tenantId, userId: userId) }
    }

    /// Forgets a trace binding.
    public func unbind(traceId: String) {
        shard(traceId).withLock { _ = $0.traces.removeValue(forKey: traceId) }
    }

    /// The number of users stored.
    public var count: Int { shards.reduce(0) { sum, shard in sum + shard.withLock { $0.users.count } } }

    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let key: Key?
        if let userId = interactionData.userId {
            key = Key(tenantId: interactionData.tenantId, userId: userId)
        } else if let traceId = interactionData.traceParent.flatMap({ TraceParent.traceId(of: $0) }) {
            key = withShard(traceId) { $0.traces[traceId] }
        } else {
            key = nil
        }
        guard let key, let values = withShard(key.userId, { $0.users[key] }) else {
            return .init(error: CredentialProviderError.make(.noCredentials, "no credentials for \(userDescription(interactionData))"))
        }
        return .answering(interactionData, from: values)
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
