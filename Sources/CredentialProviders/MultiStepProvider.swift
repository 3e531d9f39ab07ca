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
/// other's state. Each shard counts its own flows with state (and the most it held at once) under
/// its lock, so no line is written by every flow. It is an `IdpSdkNonBlockingProvider`, so the
/// SDK asks it without a hand-off: `answer` must not block (wrap a blocking source in
/// `AsyncCredentialBridge` instead).
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

    /// A flow's state as the shard keeps it: ``FlowState`` with the fields asked so far as a list,
    /// which on the first call is the call's own list of ids (no set made per flow), and grows only
    /// when a later call asks a new field.
    private struct Entry {
        var calls = 0
        var step = 0
        var attempt = 0
        var rejections = 0
        /// Every field id asked so far, in the order first asked.
        var answered: [String] = []
        var lastSeen: ContinuousClock.Instant
        /// Which of the shard's sweep tickets stands for this state: a ticket of a flow whose
        /// state was released and made again names the old state, and is dropped.
        var ticket: UInt64

        /// Counts one call that asks `askedIds`: a rejection, a new step (a field not asked
        /// before), or another attempt at the step.
        /// - Returns: What `answer` sees, or `nil` when the flow has seen more than `limit`
        ///   rejections (the state is then to be released).
        mutating func advance(asking askedIds: [String], rejected: Bool, now: ContinuousClock.Instant, limit: Int) -> Asked? {
            var newFields = 0
            for index in 0..<askedIds.count where !MultiStepProvider.contains(answered, askedIds[index]) { newFields += 1 }
            if rejected {
                rejections += 1
                attempt += 1
            } else if newFields > 0 || step == 0 {
                step += 1
                attempt = 1
            } else {
                attempt += 1
            }
            calls += 1
            lastSeen = now
            guard rejections <= limit else { return nil }
            let asked = Asked(calls: calls, step: step, attempt: attempt, rejections: rejections, answered: answered, ticket: ticket)
            // Only a call that asks a field for the first time changes the list: the first call's
            // list is the call's own, shared, not copied.
            if newFields == askedIds.count && answered.isEmpty {
                answered = askedIds
            } else if newFields > 0 {
                answered.reserveCapacity(answered.count + newFields)
                for index in 0..<askedIds.count where !MultiStepProvider.contains(answered, askedIds[index]) { answered.append(askedIds[index]) }
            }
            return asked
        }
    }

    /// What one call hands `answer`: the flow's counts after the call, and the fields it asked
    /// before it (made into a set after the lock).
    private struct Asked {
        let calls: Int
        let step: Int
        let attempt: Int
        let rejections: Int
        let answered: [String]
        /// The state's sweep ticket.
        let ticket: UInt64
    }

    private struct Shard {
        var flows: [IdpSdkFlowID: Entry] = [:]
        /// One ticket per flow with state, oldest first: each call looks at the first two, drops
        /// a state unseen for `stateLifetime` and puts a live one back at the end.
        var sweep = SweepRing()
        var nextTicket: UInt64 = 0
        /// Flows with state in this shard, and the most at once.
        var count = 0
        var peak = 0

        /// Releases a flow's state; `false` when it had none.
        mutating func remove(_ flow: IdpSdkFlowID) -> Bool {
            guard flows.removeValue(forKey: flow) != nil else { return false }
            count -= 1
            return true
        }
    }

    private static let shardCount = 32
    /// Owns the shards.
    private let shards: [LockedValue<Shard>]
    /// The same shards, unretained: a call borrows its shard instead of retaining and releasing
    /// it, which would write the shard object's reference count, a cache line every thread that
    /// serves a flow of the shard writes. Sound because `shards` keeps each one alive as long as
    /// the provider, and a call runs inside a method of the provider.
    private let borrowedShards: InlineArray<32, Unmanaged<LockedValue<Shard>>>
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
            let ids = data.inputFieldIds
            var lists: [(id: String, values: [String])] = []
            lists.reserveCapacity(ids.count)
            for id in ids {
                guard let values = table[id], !values.isEmpty else {
                    return .init(error: CredentialProviderError.make(.missingValue, "no value for field '\(id)' of \(userDescription(data))"))
                }
                lists.append((id, values))
            }
            if let longest = lists.max(by: { $0.values.count < $1.values.count }), state.attempt > longest.values.count {
                return .init(error: CredentialProviderError.make(.answersExhausted, "all \(longest.values.count) candidates for field '\(longest.id)' were rejected"))
            }
            var credentials = [String: String](minimumCapacity: lists.count)
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
        let flowId = interactionData.flowId
        let askedIds = interactionData.inputFieldIds
        // The state `answer` sees, with the fields asked before this call as a list: its set is
        // made after the lock.
        let rejected = interactionData.previousError != nil
        let asked = withShard(of: flowId) { shard -> Asked? in
            // One hashed access: the state is found, or made, and advanced where it lies.
            var made = false
            let ticket = shard.nextTicket &+ 1
            let asked = shard.flows[flowId, default: { made = true; return Entry(lastSeen: now, ticket: ticket) }()]
                .advance(asking: askedIds, rejected: rejected, now: now, limit: limit)
            if made {
                if asked != nil {
                    shard.nextTicket = ticket
                    shard.sweep.append(SweepRing.Ticket(flow: flowId, number: ticket))
                    shard.count += 1
                    shard.peak = max(shard.peak, shard.count)
                } else {
                    shard.flows[flowId] = nil
                }
            } else if asked == nil {
                _ = shard.remove(flowId)
            }
            Self.sweep(&shard, now: now, lifetime: lifetime, calling: flowId, callingTicket: asked?.ticket)
            return asked
        }
        guard let asked else {
            return .init(error: CredentialProviderError.make(.answersExhausted, "the IDP rejected \(limit + 1) answers in this flow; giving up"))
        }
        let state = FlowState(calls: asked.calls, step: asked.step, attempt: asked.attempt, rejections: asked.rejections,
                              answeredFields: Set(asked.answered))
        return answer(interactionData, state)
    }

    /// Whether `ids` holds `id`: the lists are a form's few fields, so a walk is cheaper than a hash.
    fileprivate static func contains(_ ids: [String], _ id: String) -> Bool {
        for index in 0..<ids.count where ids[index] == id { return true }
        return false
    }

    /// Looks at the first two of `shard`'s sweep tickets (the one, if it holds one): drops a ticket
    /// whose state was released, releases a state unseen for `lifetime`, and puts a live one's
    /// ticket back at the end. Constant work under the shard's lock, whatever the shard holds.
    /// - Parameters:
    ///   - calling: The flow of the call that sweeps, seen `now`: its ticket is judged without
    ///     looking its state up.
    ///   - callingTicket: The ticket of `calling`'s state, `nil` if it has none.
    private static func sweep(_ shard: inout Shard, now: ContinuousClock.Instant, lifetime: Duration, calling: IdpSdkFlowID, callingTicket: UInt64?) {
        for _ in 0..<min(2, shard.sweep.count) {
            guard let ticket = shard.sweep.popFirst() else { break }
            let lastSeen: ContinuousClock.Instant
            if ticket.flow == calling {
                guard ticket.number == callingTicket else { continue }
                lastSeen = now
            } else {
                guard let entry = shard.flows[ticket.flow], entry.ticket == ticket.number else { continue }
                lastSeen = entry.lastSeen
            }
            if now - lastSeen >= lifetime {
                _ = shard.remove(ticket.flow)
            } else {
                shard.sweep.append(ticket)
            }
        }
    }

    /// Releases the flow's state.
    ///
    /// - Parameters:
    ///   - flowId: The flow that ended.
    ///   - result: How it ended; not read.
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        // The state is released after the lock, when the removed value goes out of scope.
        _ = withShard(of: flowId) { shard -> Entry? in
            guard let removed = shard.flows.removeValue(forKey: flowId) else { return nil }
            shard.count -= 1
            // With no state left, every ticket is of a released state.
            if shard.count == 0 { shard.sweep.removeAll() }
            return removed
        }
    }

    /// Flows with state held now, and the most held at once as each shard counts it.
    ///
    /// `current` is exact once calls stop. `peak` adds up each shard's own most at once: never
    /// less than the most flows held at once, and equal to it while no state has been released;
    /// after releases it may be more (shards reach their peaks at different moments), up to the
    /// number of shards, 32, times the true peak. A single global peak would be one memory line
    /// that every flow's start and end writes.
    public var trackedFlows: (current: Int, peak: Int) {
        var current = 0, peak = 0
        for shard in shards {
            let (count, most) = shard.withLock { ($0.count, $0.peak) }
            current += count
            peak += most
        }
        return (current, peak)
    }

    /// The number of flows with state now and the peak.
    public var description: String {
        let tracked = trackedFlows
        return "MultiStepProvider(flows: \(tracked.current), peak: \(tracked.peak))"
    }
}
