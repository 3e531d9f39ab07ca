import IdpSdk

/// Answers by awaiting an `async` closure — a UI prompt on the main actor, say — while the SDK
/// thread waits.
///
/// ```swift
/// let provider = AsyncCredentialBridge(timeout: .seconds(120)) { data in
///     try await LoginPrompt.shared.ask(for: data.inputFieldIds)   // @MainActor UI
/// }
/// ```
///
/// Outcomes, each distinct: the closure's answer; its thrown `IdpSdkError`, unchanged; any other
/// thrown error as ``CredentialProviderError/Code/answerFailed``; no answer within `timeout` as
/// ``CredentialProviderError/Code/timedOut`` (the closure's task is cancelled); the flow ending
/// while it waits (the caller cancelled, the flow timed out) as
/// ``CredentialProviderError/Code/cancelled``.
///
/// Threading: blocks the SDK thread it is called on — which holds only that thread — and runs the
/// closure in a new unstructured task. Called from inside a Swift task or on the main thread it
/// refuses with ``CredentialProviderError/Code/calledWhereBlockingIsUnsafe`` instead of blocking.
/// Cost: a task, a semaphore and two short lock holds per call, plus the closure's own time.
public final class AsyncCredentialBridge: IdpSdkFlowObserving, Sendable, CustomStringConvertible {
    private let timeout: Duration
    private let operation: @Sendable (IdpSdkInteractionData) async throws -> [String: String]
    private let waits = WaitRegistry()

    /// A bridge that answers from `answer`.
    /// - Parameters:
    ///   - timeout: How long a call waits for `answer` before it ends its flow with ``CredentialProviderError/Code/timedOut``.
    ///   - answer: Returns the values by field id for a step; runs in a new unstructured task.
    public init(timeout: Duration, answer: @escaping @Sendable (IdpSdkInteractionData) async throws -> [String: String]) {
        self.timeout = timeout
        self.operation = answer
    }

    /// Answers one step by running the closure in a new task and blocking the calling SDK thread
    /// until it answers, throws, times out or the flow ends.
    ///
    /// Refuses with ``CredentialProviderError/Code/calledWhereBlockingIsUnsafe`` inside a Swift
    /// task or on the main thread.
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: The closure's values, or an error that ends the flow (see the type's outcomes).
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let operation = self.operation
        return waits.answer(interactionData, timeout: timeout, who: "AsyncCredentialBridge") {
            try await operation(interactionData)
        }
    }

    /// Ends the wait of the flow: its answer would be discarded anyway.
    public func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
        waits.cancel(flowId)
    }

    /// Does nothing: a bridge keeps no state between a flow's calls.
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {}

    /// Ends every wait in progress with ``CredentialProviderError/Code/cancelled``.
    public func cancelAll() { waits.cancelAll() }

    /// Calls waiting for an answer now.
    public var waiting: Int { waits.count }

    /// The timeout and the number of calls waiting now.
    public var description: String { "AsyncCredentialBridge(timeout: \(timeout), waiting: \(waiting))" }
}
