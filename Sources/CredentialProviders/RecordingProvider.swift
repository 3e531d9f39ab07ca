import Foundation
import IdpPrimitives
import IdpSdk

/// Wraps a provider and keeps a thread-safe log of its calls, for tests: which flow, step and
/// attempt asked which fields, on which thread, and whether it was answered or refused. Values
/// are never logged.
public final class RecordingProvider: IdpSdkFlowObserving, IdpSdkNonBlockingProvider, Sendable, CustomStringConvertible {
    /// One call.
    public struct Call: Sendable, Equatable {
        /// The flow that asked.
        public let flowId: IdpSdkFlowID
        /// The form step, from 1.
        public let step: Int
        /// The attempt at the step, from 1.
        public let attempt: Int
        /// The field ids the step asked for.
        public let fieldIds: [String]
        /// The login's user id; `nil` for an activation.
        public let userId: String?
        /// Whether the IDP had rejected an answer to this step before.
        public let rejectedBefore: Bool
        /// The OS thread (`IdpSdk-N` for an SDK thread).
        public let threadName: String
        /// The error the wrapped provider returned, or `nil` if it answered.
        public let error: IdpSdkError?
    }

    /// The wrapped provider.
    public let base: any IdpSdkInteractionInterface & Sendable
    private let log = LockedValue<[Call]>([])
    private let ended = LockedValue<[IdpSdkFlowID: IdpSdkResult]>([:])

    /// Wraps `base` and records every call to it.
    /// - Parameter base: The wrapped provider.
    public init(_ base: any IdpSdkInteractionInterface & Sendable) {
        self.base = base
    }

    /// As the wrapped provider's (the log's own lock is held for one append).
    public var providesCredentialsWithoutBlocking: Bool {
        (base as? any IdpSdkNonBlockingProvider)?.providesCredentialsWithoutBlocking ?? false
    }

    /// Asks the wrapped provider on the calling thread and logs the call (never the values).
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: The wrapped provider's answer, unchanged.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let result = base.provideCredentials(interactionData)
        let call = Call(flowId: interactionData.flowId, step: interactionData.step, attempt: interactionData.attempt,
                        fieldIds: interactionData.inputFieldIds, userId: interactionData.userId,
                        rejectedBefore: interactionData.previousError != nil, threadName: IdpSdkService.currentThreadName, error: result.error)
        log.withLock { $0.append(call) }
        return result
    }

    /// Passes the end on to the wrapped provider, if it observes flows.
    ///
    /// - Parameter flowId: The flow that ended during a call.
    public func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
        (base as? any IdpSdkFlowObserving)?.flowEndedDuringCall(flowId)
    }

    /// Records the result in ``endedFlows`` and passes the end on to the wrapped provider, if it
    /// observes flows.
    ///
    /// - Parameters:
    ///   - flowId: The flow that ended.
    ///   - result: How it ended.
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        ended.withLock { $0[flowId] = result }
        (base as? any IdpSdkFlowObserving)?.flowDidEnd(flowId, result: result)
    }

    /// Every call so far, in the order they returned.
    public var calls: [Call] { log.withLock { $0 } }

    /// The results of the flows that ended, by flow.
    public var endedFlows: [IdpSdkFlowID: IdpSdkResult] { ended.withLock { $0 } }

    /// The wrapped provider and the number of calls logged.
    public var description: String { "RecordingProvider(\(base), calls: \(log.withLock { $0.count }))" }
}
