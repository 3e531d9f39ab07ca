import Foundation
import IdpPrimitives
import IdpSdk

/// Wraps a provider and keeps a thread-safe log of its calls, for tests: which flow, step and
/// attempt asked which fields, on which thread, and whether it was answered or refused. Values
/// are never logged.
///
/// Threading: each OS thread logs into a log of its own (behind a lock only readers of the log
/// ever contend for), with the monotonic clock's reading; ``calls`` merges the threads' logs in
/// clock order when it is read. So calls on many threads at once write no memory another
/// thread writes, and the order users read is rebuilt where they read it.
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
    /// Whether `base` observes flows: found once, so that a flow's end costs no cast when it does not.
    private let baseObservesFlows: Bool
    /// Every thread's log, for readers; a thread adds its own at its first call or flow end.
    private let logs = LockedValue<[LockedValue<ThreadLog>]>([])
    /// The calling thread's log, found without a lock.
    private let threadLogs = ThreadConfined<LockedValue<ThreadLog>>()

    /// What one thread logged.
    private struct ThreadLog {
        /// The calls, each with the monotonic clock's reading when it was logged.
        var calls: [(time: UInt64, call: Call)] = []
        var ended: [IdpSdkFlowID: IdpSdkResult] = [:]
    }

    /// Wraps `base` and records every call to it.
    /// - Parameter base: The wrapped provider.
    public init(_ base: any IdpSdkInteractionInterface & Sendable) {
        self.base = base
        baseObservesFlows = base is any IdpSdkFlowObserving
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
        let time = DispatchTime.now().uptimeNanoseconds
        withThreadLog { $0.calls.append((time, call)) }
        return result
    }

    /// Runs `change` on the calling thread's log, made and listed at the thread's first use.
    private func withThreadLog(_ change: (inout ThreadLog) -> Void) {
        threadLogs.withCurrent(orMake: {
            let log = LockedValue(ThreadLog())
            logs.withLock { $0.append(log) }
            return log
        }) { $0.withLock(change) }
    }

    /// Every thread's log, each read under its own lock.
    private var threadLogCopies: [ThreadLog] { logs.withLock { $0 }.map { $0.withLock { $0 } } }

    /// Passes the end on to the wrapped provider, if it observes flows.
    ///
    /// - Parameter flowId: The flow that ended during a call.
    public func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
        guard baseObservesFlows else { return }
        (base as? any IdpSdkFlowObserving)?.flowEndedDuringCall(flowId)
    }

    /// Records the result in ``endedFlows`` and passes the end on to the wrapped provider, if it
    /// observes flows.
    ///
    /// - Parameters:
    ///   - flowId: The flow that ended.
    ///   - result: How it ended.
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        withThreadLog { $0.ended[flowId] = result }
        guard baseObservesFlows else { return }
        (base as? any IdpSdkFlowObserving)?.flowDidEnd(flowId, result: result)
    }

    /// Every call so far, in the order they returned: the threads' logs merged by the monotonic
    /// clock's reading when each call was logged (calls of one thread in their order).
    public var calls: [Call] {
        // Stable: calls of one thread with equal readings keep their order.
        threadLogCopies.flatMap(\.calls).enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element.call)
    }

    /// The results of the flows that ended, by flow.
    public var endedFlows: [IdpSdkFlowID: IdpSdkResult] {
        threadLogCopies.reduce(into: [:]) { all, log in all.merge(log.ended) { _, later in later } }
    }

    /// The wrapped provider and the number of calls logged.
    public var description: String { "RecordingProvider(\(base), calls: \(threadLogCopies.reduce(0) { $0 + $1.calls.count }))" }
}
