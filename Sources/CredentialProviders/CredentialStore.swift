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
/// Threading: a big-reader lock. The store keeps one lock per `ThreadStripe` (each mutex on
/// cache lines of its own); `provideCredentials` takes only its thread's stripe lock and reads the
/// one table of users and trace bindings under it. Writers (``set(_:userId:tenantId:)``,
/// ``remove(userId:tenantId:)``, ``bind(traceId:toUser:tenantId:)``,
/// ``unbind(traceId:)``) take every stripe lock, in stripe order, change the table and release
/// them: rare writes cost a lock per stripe, and threads answering at once take different locks.
/// Each stripe also caches the answers it gave, by the user's table slot and the asked field ids,
/// in a dictionary built for that stripe (keys and values of more than 15 UTF-8 bytes copied), so
/// the reference count an answer writes is one only threads of that stripe touch. A
/// ``set(_:userId:tenantId:)`` clears that user's cached answers in every stripe before the writer
/// releases it (a removal, or a set that grows the table, clears every cached answer), so a call
/// that starts after it returns answers the new values; binding traces clears nothing. A stripe
/// caches at most 4,096 answers, direct-mapped by slot: one place per user while the table has at
/// most 4,096 slots (3,072 users), shared by users beyond that. A call hashes the
/// user id once (no SipHash, no key built) and probes the table; a cached answer costs no
/// allocation. This is the recommended provider for many users.
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

    /// The users and trace bindings: read under any one stripe lock, changed only under all.
    private struct Tables {
        var users = CredentialStoreTable()
        var traces: [String: Key] = [:]
    }

    /// One answer a stripe gave: the table slot of the user, the asked field ids, and the answer,
    /// built for this stripe.
    private struct CachedAnswer {
        /// The user's table slot; -1 when empty.
        var slot = -1
        var fieldIds: [String] = []
        var answer: [String: String] = [:]
    }

    /// What one stripe lock guards besides the right to read the tables: the stripe's answers,
    /// direct-mapped by table slot, empty until the stripe's first answer.
    private struct Stripe {
        var cache: [CachedAnswer] = []
    }

    /// The most answers a stripe caches.
    private static let cacheLimit = 4_096

    /// Owns the stripe locks.
    private let stripes: [LockedValue<Stripe>]
    /// The same locks, unretained: a call borrows its stripe through `_withUnsafeGuaranteedRef`
    /// instead of retaining and releasing it. Sound as `nonisolated(unsafe)`: written once in
    /// `init`, freed in `deinit`, only read in between; `stripes` keeps each lock alive as long as
    /// the store, and a call runs inside a method of the store.
    nonisolated(unsafe) private let borrowedStripes: UnsafeMutablePointer<Unmanaged<LockedValue<Stripe>>>
    /// `stripes.count - 1` (the count is a power of two).
    private let stripeMask: Int
    /// The tables. Sound as `nonisolated(unsafe)`: the pointer is set in `init` and freed in
    /// `deinit`; the pointee is read only while the reader holds one stripe lock and changed only
    /// while the writer holds every stripe lock, so each read is ordered after every write by the
    /// lock it holds (and ThreadSanitizer sees that order: it is pthread's), and two writers both
    /// hold the first stripe's lock.
    nonisolated(unsafe) private let tables: UnsafeMutablePointer<Tables>
    /// Seeds ``CredentialStoreTable/hash(_:seed:)``, so which ids collide differs from store to
    /// store.
    private let seed = UInt64.random(in: .min ... .max)

    /// An empty store.
    public init() {
        let stripes = (0..<ThreadStripe.count).map { _ in LockedValue(Stripe(), label: "CredentialStore.stripe", ownCacheLines: true) }
        self.stripes = stripes
        stripeMask = stripes.count - 1
        borrowedStripes = .allocate(capacity: stripes.count)
        borrowedStripes.initialize(from: stripes.map { Unmanaged.passUnretained($0) }, count: stripes.count)
        tables = .allocate(capacity: 1)
        tables.initialize(to: Tables())
    }

    deinit {
        borrowedStripes.deinitialize(count: stripes.count)
        borrowedStripes.deallocate()
        tables.deinitialize(count: 1)
        tables.deallocate()
    }

    /// The store's hash of a user id: every byte, a few multiplies, no SipHash. Its low bits pick
    /// the user's home slot in the table.
    @inline(__always)
    private func hash(_ id: String) -> UInt64 { CredentialStoreTable.hash(id, seed: seed) }

    /// Runs `body` under the calling thread's stripe lock, with the tables to read.
    @inline(__always)
    private func reading<Result>(_ body: (UnsafePointer<Tables>, inout Stripe) -> Result) -> Result {
        let tables = UnsafePointer(self.tables)
        return borrowedStripes[ThreadStripe.current & stripeMask]._withUnsafeGuaranteedRef { lock in
            lock.withLock { stripe in body(tables, &stripe) }
        }
    }

    /// Runs `change` on the tables under every stripe lock, then `clear` on each stripe with
    /// `change`'s result before that stripe's lock is released.
    @discardableResult
    private func writing<Result>(_ change: (inout Tables) -> Result, clear: (Result, inout Stripe) -> Void) -> Result {
        func lock(from index: Int) -> Result {
            guard index < stripes.count else { return change(&tables.pointee) }
            return stripes[index].withLock { stripe in
                let result = lock(from: index + 1)
                clear(result, &stripe)
                return result
            }
        }
        return lock(from: 0)
    }

    /// Forgets the answers a stripe cached for the user in `slot`, or every answer when entries
    /// changed slots.
    private static func forget(_ change: (slot: Int, moved: Bool), in stripe: inout Stripe) {
        if change.moved {
            stripe.cache = []
        } else if !stripe.cache.isEmpty {
            stripe.cache[change.slot & (stripe.cache.count - 1)] = CachedAnswer()
        }
    }

    /// Adds or replaces the user's values (by field id). Calls that start after it returns, on any
    /// thread, answer the new values.
    /// - Parameters:
    ///   - values: The values by field id.
    ///   - userId: The user's id.
    ///   - tenantId: The user's tenant.
    public func set(_ values: [String: String], userId: String, tenantId: String) {
        let hash = hash(userId)
        let entry = CredentialStoreTable.Entry(tenantId: tenantId, userId: userId, values: values)
        writing({ $0.users.set(entry, hash: hash) }, clear: Self.forget)
    }

    /// Removes the user; their next flow ends with ``CredentialProviderError/Code/noCredentials``.
    /// - Parameters:
    ///   - userId: The user's id.
    ///   - tenantId: The user's tenant.
    public func remove(userId: String, tenantId: String) {
        let hash = hash(userId)
        // A removal may move entries of the probe run to other slots: every cached answer goes.
        writing({ $0.users.remove(hash: hash, tenantId: tenantId, userId: userId) }, clear: { removed, stripe in
            if removed { stripe.cache = [] }
        })
    }

    /// Answers flows without a user id (activations) whose traceparent has `traceId` from the
    /// user's entry. Unbind when the flow is over.
    /// - Parameters:
    ///   - traceId: The trace id of the flow's traceparent.
    ///   - userId: The user whose values answer the flow.
    ///   - tenantId: The user's tenant.
    public func bind(traceId: String, toUser userId: String, tenantId: String) {
        // Cached answers are by user, not by trace: they stay.
        writing({ $0.traces[traceId] = Key(tenantId: tenantId, userId: userId) }, clear: { _, _ in })
    }

    /// Forgets a trace binding.
    /// - Parameter traceId: The trace id of the binding.
    public func unbind(traceId: String) {
        writing({ _ = $0.traces.removeValue(forKey: traceId) }, clear: { _, _ in })
    }

    /// The number of users stored.
    public var count: Int { reading { tables, _ in tables.pointee.users.count } }

    /// Answers one step from the stored values of the flow's user: by `userId` for a login, by the
    /// traceparent's bound trace id for an activation. Takes the calling thread's stripe lock;
    /// never blocks beyond it.
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: The values of the asked fields; ``CredentialProviderError/Code/noCredentials``
    ///   when no user is found, ``CredentialProviderError/Code/missingValue`` when an asked field
    ///   has no value.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let ids = interactionData.inputFieldIds
        let answer: Answer
        if let userId = interactionData.userId {
            let hash = hash(userId)
            let tenantId = interactionData.tenantId
            answer = reading { tables, stripe in Self.answer(tables, &stripe, hash: hash, tenantId: tenantId, userId: userId, asking: ids) }
        } else if let traceId = interactionData.traceParent.flatMap({ TraceParent.traceId(of: $0) }) {
            answer = reading { tables, stripe in
                guard let key = tables.pointee.traces[traceId] else { return .noUser }
                return Self.answer(tables, &stripe, hash: CredentialStoreTable.hash(key.userId, seed: seed),
                                   tenantId: key.tenantId, userId: key.userId, asking: ids)
            }
        } else {
            answer = .noUser
        }
        switch answer {
        case .values(let values):
            return .init(credentials: values)
        case .noUser:
            return .init(error: CredentialProviderError.make(.noCredentials, "no credentials for \(userDescription(interactionData))"))
        case .missing(let id):
            return .init(error: CredentialProviderError.make(.missingValue, "no value for field '\(id)' of \(userDescription(interactionData))"))
        }
    }

    /// What a stripe lock is held for; errors are built after releasing it.
    private enum Answer {
        case values([String: String])
        case noUser
        case missing(String)
    }

    /// One probe of the table, then the stripe's cached answer for the user's slot and the asked
    /// ids, or a new answer built from the user's entry and cached.
    @inline(__always)
    private static func answer(_ tables: UnsafePointer<Tables>, _ stripe: inout Stripe, hash: UInt64, tenantId: String, userId: String,
                               asking ids: [String]) -> Answer {
        guard let slot = tables.pointee.users.slot(hash: hash, tenantId: tenantId, userId: userId) else { return .noUser }
        let cached: [String: String]? = stripe.cache.withUnsafeBufferPointer { cache in
            guard !cache.isEmpty else { return nil }
            let index = slot & (cache.count - 1)
            guard cache[index].slot == slot, cache[index].fieldIds == ids else { return nil }
            return cache[index].answer
        }
        if let cached { return .values(cached) }
        let built = tables.pointee.users.withEntry(inSlot: slot) { UnsharedCopy.answer(ids, from: $0.values) }
        switch built {
        case .failure(let missing):
            return .missing(missing.id)
        case .success(let answer):
            let size = min(cacheLimit, tables.pointee.users.capacity)
            if stripe.cache.count != size { stripe.cache = Array(repeating: CachedAnswer(), count: size) }
            stripe.cache[slot & (size - 1)] = CachedAnswer(slot: slot, fieldIds: ids, answer: answer)
            return .values(answer)
        }
    }

    /// Counts, never values.
    public var description: String {
        let counts = reading { tables, _ in (tables.pointee.users.count, tables.pointee.traces.count) }
        return "CredentialStore(users: \(counts.0), trace bindings: \(counts.1))"
    }
}

extension CredentialStore {
    /// The number of answers each stripe caches, for tests.
    var cachedAnswerCounts: [Int] {
        stripes.map { lock in lock.withLock { stripe in stripe.cache.reduce(0) { $0 + ($1.slot >= 0 ? 1 : 0) } } }
    }
}
