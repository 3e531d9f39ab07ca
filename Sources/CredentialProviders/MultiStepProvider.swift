import IdpPrimitives
import IdpSdk

/// Follows each flow's steps and re-asks: keeps per-flow state (the step, the attempt at it, the
/// fields answered, the rejections) and hands it to your answer function.
///
/// ```swift
/// // Try the stored password, then the previous one, then give up.
/// let provider = MultiStepProvider.candidates { data in
///     ["username": ["alice"], "password": ["new-secret", "old-secret"]]
/// }
/// ```
///
/// State is created on a flow's first call and released when the SDK reports the flow ended
/// (``flowDidEnd(_:result:)``), so a million flows leave nothing behind. For an SDK that never
/// reports ends, state unseen for `stateLifetime` is evicted as calls come: each call looks at the
/// two longest-unlooked-at flows of its shard, so a shard's stale state goes within as many calls
/// as it holds flows.
///
/// Threading: the per-flow table is split into 32 shards by a hash of the flow id, each behind its
/// own `LockedValue`; a call holds its flow's shard for one lookup and update, then runs `answer`
/// after releasing it, so calls of different flows rarely meet on a lock. Flows never see each
/// other's state. The count of flows with state (and its peak) is one pair of atomics on cache
/// lines of their own, changed when a flow's state is made and when it is released, never by the
/// other calls. It is an `IdpSdkNonBlockingProvider`, so the SDK asks it without a hand-off:
/// `answer` must not block (wrap a blocking source in `AsyncCredentialBridge` instead).
public final class MultiStepProvider: IdpSdkFlowObserving, IdpSdkNonBlockingProvider, Sendable, CustomStringConvertible {
    /// What the provider knows about one flow when it is asked.
    public struct FlowState: Sendable, Equatable {
        /// How many times this flow has called the provider, this call included.
        public var calls = 0
        /// The step being answered, from 1 (a step is a call that asks new fields).
        public var step = 0
        /// The attempt at this step, from 1 (it grows when the IDP rejected the previous answer).
        public var attempt = 0
        /// Rejections seen in this flow so far.
        public var rejections = 0
        /// Every field id this flow has asked before this call.
        public var answeredFields: Set<String> = []
    }

    private struct Entry {
        var state: FlowState
        var lastSeen: ContinuousClock.Instant
        /// Which of the shard's sweep tickets stands for this state: a ticket of a flow whose
        /// state was released and made again names the old state, and is dropped.
        var ticket: UInt64
    }

    private struct Shard {
        var flows: [IdpSdkFlowID: Entry] = [:]
        /// One ticket per flow with state, oldest first: each call looks at the first two, drops
        /// a state unseen for `stateLifetime` and puts a live one back at the end.
        var sweep = SweepRing()
        var nextTicket: UInt64 = 0
    }

    private static let shardCount = 32
    /// Owns the shards.
    private let shards: [LockedValue<Shard>]
    /// The same shards, unretained: a call borrows its shard instead of retaining and releasing
    /// it, which would write the shard object's reference count, a cache line every thread that
    /// serves a flow of the shard writes. Sound because `shards` keeps each one alive as long as
    /// the provider, and a call runs inside a method of the provider.
    private let borrowedShards: InlineArray<32, Unmanaged<LockedValue<Shard>>>
    /// Cell 0: flows with state now; cell 1: the most at once.
    private let flowCount = SpacedAtomics(count: 2)
    private let answer: @Sendable (IdpSdkInteractionData, FlowState) -> IdpSdkProvideCredentialsResult
    private let maximumRejections: Int
    private let stateLifetime: Duration

    /// - Parameters:
    ///   - maximumRejections: How many rejections one flow may see; at the next the provider ends
    ///     the flow with ``CredentialProviderError/Code/answersExhausted`` without asking `answer`.
    ///   - stateLifetime: How long a flow's state is kept without a call when the SDK does not
    ///     report the flow's end.
    ///   - answer: Answers one call, given the flow's state. Runs outside any lock.
    public init(
        maximumRejections: Int = 2,
        stateLifetime: Duration = .seconds(600),
        answer: @escaping @Sendable (IdpSdkInteractionData, FlowState) -> IdpSdkProvideCredentialsResult
    ) {
        self.maximumRejections = maximumRejections
        self.stateLifetime = stateLifetime
        self.answer = answer
        // One profiler site for every shard: registering a label takes the profiler's lock.
        let site = MultiStepProvider.lockSite
        let shards = (0..<MultiStepProvider.shardCount).map { _ in LockedValue(Shard(), site: site) }
        self.shards = shards
        borrowedShards = InlineArray { Unmanaged.passUnretained(shards[$0]) }
    }

    private static let lockSite = LockProfiler.Site(label: "MultiStepProvider.table")

    /// Runs `body` under the lock of `flow`'s shard: the flow id's bits mixed (ids are often
    /// consecutive, or a thread's block), then the top bits.
    @inline(__always)
    private func withShard<Result>(of flow: IdpSdkFlowID, _ body: (inout Shard) -> Result) -> Result {
        let mixed = flow.rawValue &* 0x9E37_79B9_7F4A_7C15
        return borrowedShards[Int(truncatingIfNeeded: mixed &>> 59) & (Self.shardCount - 1)]._withUnsafeGuaranteedRef { $0.withLock(body) }
    }

    /// Counts flows whose state was made (positive) or released (negative), and raises the peak.
    private func countFlows(_ change: Int) {
        let now = flowCount.add(change, at: 0)
        if change > 0 { flowCount.raise(to: now, at: 1) }
    }

    /// A provider that answers attempt *n* of a step with the *n*-th candidate of each field (a
    /// field with fewer candidates keeps its last one), and ends the flow with
    /// ``CredentialProviderError/Code/answersExhausted`` once every candidate of the step's
    /// longest list was rejected.
    /// - Parameters:
    ///   - candidates: The candidate values by field id for the flow, or `nil` if the provider
    ///     has none for its user (the flow ends with ``CredentialProviderError/Code/noCredentials``).
    ///   - maximumRejections: How many rejections one flow may see, as for
    ///     ``init(maximumRejections:stateLifetime:answer:)``.
    public static func candidates(
        maximumRejections: Int = 2,
        _ candidates: @escaping @Sendable (IdpSdkInteractionData) -> [String: [String]]?
    ) -> MultiStepProvider {
        MultiStepProvider(maximumRejections: maximumRejections) { data, state in
            guard let table = candidates(data) else {
                return .init(error: CredentialProviderError.make(.noCredentials, "no credentials for \(userDescription(data))"))
            }
            var lists: [(id: String, values: [String])] = []
            for id in data.inputFieldIds {
                guard let values = table[id], !values.isEmpty else {
                    return .init(error: CredentialProviderError.make(.missingValue, "no value for field '\(id)' of \(userDescription(data))"))
                }
                lists.append((id, values))
            }
            if let longest = lists.max(by: { $0.values.count < $1.values.count }), state.attempt > longest.values.count {
                return .init(error: CredentialProviderError.make(.answersExhausted, "all \(longest.values.count) candidates for field '\(longest.id)' were rejected"))
            }
            var credentials: [String: String] = [:]
            for (id, values) in lists { credentials[id] = values[min(state.attempt, values.count) - 1] }
            return .init(credentials: credentials)
        }
    }

    /// Updates the flow's state under the table's lock, then calls `answer` with it after releasing
    /// the lock, on the calling thread.
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: What `answer` returns, or ``CredentialProviderError/Code/answersExhausted`` once
    ///   the flow has seen more than `maximumRejections` rejections.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = ContinuousClock.now
        let lifetime = stateLifetime
        let limit = maximumRejections
        let (state, made, released) = withShard(of: interactionData.flowId) { shard -> (FlowState?, Bool, Int) in
            let flowId = interactionData.flowId
            var entry: Entry
            let made: Bool
            if let found = shard.flows[flowId] {
                (entry, made) = (found, false)
            } else {
                shard.nextTicket &+= 1
                (entry, made) = (Entry(state: FlowState(), lastSeen: now, ticket: shard.nextTicket), true)
                shard.sweep.append(SweepRing.Ticket(flow: flowId, number: shard.nextTicket))
            }
            var asksNewFields = false
            let askedIds = interactionData.inputFieldIds
            for index in 0..<askedIds.count where !entry.state.answeredFields.contains(askedIds[index]) {
                asksNewFields = true
                break
            }
            if interactionData.previousError != nil {
                entry.state.rejections += 1
                entry.state.attempt += 1
            } else if asksNewFields || entry.state.step == 0 {
                entry.state.step += 1
                entry.state.attempt = 1
            } else {
                entry.state.attempt += 1
            }
            entry.state.calls += 1
            entry.lastSeen = now
            var asked: FlowState?
            var released = 0
            if entry.state.rejections <= limit {
                asked = entry.state
                // Only a call that asks a field for the first time changes the set (and copies
                // it, `asked` holding the old one).
                if asksNewFields { entry.state.answeredFields.formUnion(askedIds) }
                shard.flows[flowId] = entry
            } else if !made {
                shard.flows[flowId] = nil
                released = 1
            }
            released += Self.sweep(&shard, now: now, lifetime: lifetime)
            return (asked, made && asked != nil, released)
        }
        if made { countFlows(1) }
        if released > 0 { countFlows(-released) }
        guard let state else {
            return .init(error: CredentialProviderError.make(.answersExhausted, "the IDP rejected \(limit + 1) answers in this flow; giving up"))
        }
        return answer(interactionData, state)
    }

    /// Looks at the first two of `shard`'s sweep tickets: drops a ticket whose state was released,
    /// releases a state unseen for `lifetime`, and puts a live one's ticket back at the end.
    /// Returns how many states it released. Constant work under the shard's lock, whatever the
    /// shard holds.
    private static func sweep(_ shard: inout Shard, now: ContinuousClock.Instant, lifetime: Duration) -> Int {
        var released = 0
        for _ in 0..<2 {
            guard let ticket = shard.sweep.popFirst() else { break }
            guard let entry = shard.flows[ticket.flow], entry.ticket == ticket.number else { continue }
            if now - entry.lastSeen >= lifetime {
                shard.flows[ticket.flow] = nil
                released += 1
            } else {
                shard.sweep.append(ticket)
            }
        }
        return released
    }

    /// Releases the flow's state.
    ///
    /// - Parameters:
    ///   - flowId: The flow that ended.
    ///   - result: How it ended; not read.
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        if withShard(of: flowId, { $0.flows.removeValue(forKey: flowId) }) != nil { countFlows(-1) }
    }

    /// Flows with state held now, and the most held at once.
    public var trackedFlows: (current: Int, peak: Int) { (flowCount.load(at: 0), flowCount.load(at: 1)) }

    /// The number of flows with state now and the peak.
    public var description: String {
        let tracked = trackedFlows
        return "MultiStepProvider(flows: \(tracked.current), peak: \(tracked.peak))"
    }
}
