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
/// Threading: one ``LockedValue`` guards the table; `provideCredentials` holds it for one or two
/// hash lookups and copies out a reference to the user's values (no deep copy), then builds the
/// answer after releasing it. Writers hold it for one dictionary write.
public final class CredentialStore: IdpSdkInteractionInterface, CustomStringConvertible {
    /// A user of a tenant.
    public struct Key: Hashable, Sendable {
        public let tenantId: String
        public let userId: String
        public init(tenantId: String, userId: String) {
            self.tenantId = tenantId
            self.userId = userId
        }
    }

    private struct Table {
        var users: [Key: [String: String]] = [:]
        var traces: [String: Key] = [:]
    }

    private let table = LockedValue(Table(), label: "CredentialStore.table")

    public init() {}

    /// Adds or replaces the user's values (by field id).
    public func set(_ values: [String: String], userId: String, tenantId: String) {
        table.withLock { $0.users[Key(tenantId: tenantId, userId: userId)] = values }
    }

    /// Removes the user; their next flow ends with ``CredentialProviderError/Code/noCredentials``.
    public func remove(userId: String, tenantId: String) {
        table.withLock { _ = $0.users.removeValue(forKey: Key(tenantId: tenantId, userId: userId)) }
    }

    /// Answers flows without a user id (activations) whose traceparent has `traceId` from the
    /// user's entry. Unbind when the flow is over.
    public func bind(traceId: String, toUser userId: String, tenantId: String) {
        table.withLock { $0.traces[traceId] = Key(tenantId: tenantId, userId: userId) }
    }

    /// Forgets a trace binding.
    public func unbind(traceId: String) {
        table.withLock { _ = $0.traces.removeValue(forKey: traceId) }
    }

    /// The number of users stored.
    public var count: Int { table.withLock { $0.users.count } }

    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let traceId = interactionData.userId == nil ? interactionData.traceParent.flatMap { TraceParent.traceId(of: $0) } : nil
        let values: [String: String]? = table.withLock { table in
            if let userId = interactionData.userId {
                return table.users[Key(tenantId: interactionData.tenantId, userId: userId)]
            }
            guard let traceId, let key = table.traces[traceId] else { return nil }
            return table.users[key]
        }
        guard let values else {
            return .init(error: CredentialProviderError.make(.noCredentials, "no credentials for \(userDescription(interactionData))"))
        }
        return .answering(interactionData, from: values)
    }

    /// Counts, never values.
    public var description: String {
        let counts = table.withLock { ($0.users.count, $0.traces.count) }
        return "CredentialStore(users: \(counts.0), trace bindings: \(counts.1))"
    }
}
