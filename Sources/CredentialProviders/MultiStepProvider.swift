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
/// reports ends, state older than `stateLifetime` is evicted when new flows arrive.
///
/// Threading: one `LockedValue` guards the per-flow table; a call holds it for one lookup and
/// update, then runs `answer` after releasing it. Flows never see each other's state. It is an
/// `IdpSdkNonBlockingProvider`, so the SDK asks it without a hand-off: `answer` must not block
/// (wrap a blocking source in `AsyncCredentialBridge` instead).
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
    }

    private struct Table {
        var flows: [IdpSdkFlowID: Entry] = [:]
        var peak = 0
        var callsSinceSweep = 0
    }

    private let table = LockedValue(Table(), label: "MultiStepProvider.table")
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
        let state: FlowState? = table.withLock { table in
            var entry = table.flows[interactionData.flowId] ?? Entry(state: FlowState(), lastSeen: now)
            let asksNewFields = !interactionData.inputFieldIds.allSatisfy(entry.state.answeredFields.contains)
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
            guard entry.state.rejections <= limit else {
                table.flows[interactionData.flowId] = nil
                return nil
            }
            let asked = entry.state
            entry.state.answeredFields.formUnion(interactionData.inputFieldIds)
            table.flows[interactionData.flowId] = entry
            table.peak = max(table.peak, table.flows.count)
            table.callsSinceSweep += 1
            if table.callsSinceSweep >= 4096 {
                table.callsSinceSweep = 0
                table.flows = table.flows.filter { now - $0.value.lastSeen < lifetime }
            }
            return asked
        }
        guard let state else {
            return .init(error: CredentialProviderError.make(.answersExhausted, "the IDP rejected \(limit + 1) answers in this flow; giving up"))
        }
        return answer(interactionData, state)
    }

    /// Releases the flow's state.
    ///
    /// - Parameters:
    ///   - flowId: The flow that ended.
    ///   - result: How it ended; not read.
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        table.withLock { _ = $0.flows.removeValue(forKey: flowId) }
    }

    /// Flows with state held now, and the most held at once.
    public var trackedFlows: (current: Int, peak: Int) { table.withLock { ($0.flows.count, $0.peak) } }

    /// The number of flows with state now and the peak.
    public var description: String {
        let tracked = trackedFlows
        return "MultiStepProvider(flows: \(tracked.current), peak: \(tracked.peak))"
    }
}
