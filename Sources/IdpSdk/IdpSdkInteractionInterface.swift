/// Supplies credentials when a flow's IDP form asks for them.
///
/// ```swift
/// final class IdpHandler: IdpSdkInteractionInterface {
///     func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
///         .init(credentials: ["username": "alice", "password": "s3cret"])
///     }
/// }
/// ```
///
/// - Warning: `provideCredentials` is called on an SDK-owned OS thread, never the caller's thread,
///   the main thread or a Swift concurrency thread, and many flows call one instance at once. It may
///   be called several times per flow: once per form step, and again when the IDP rejects an answer
///   (`interactionData.previousError` then says why). It may block its thread (to wait for a UI
///   prompt, say); that holds only its own thread. Shared state must be synchronized.
public protocol IdpSdkInteractionInterface: Sendable {
    /// Answers one form step: credentials for every id in `interactionData.inputFieldIds`, or an
    /// error, which cancels the flow and comes back unchanged in the `IdpSdkResult`.
    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult
}

/// A provider's answer: credentials by field id, or an error that cancels the flow.
public struct IdpSdkProvideCredentialsResult: Sendable, CustomStringConvertible {
    /// The values by field id, when the provider answered.
    public let credentials: [String: String]?
    /// The error, when the provider cancelled the flow.
    public let error: IdpSdkError?

    /// Answers the step with these values, keyed by field id.
    public init(credentials: [String: String]) {
        self.credentials = credentials
        self.error = nil
    }

    /// Cancels the flow with this error.
    public init(error: IdpSdkError) {
        self.credentials = nil
        self.error = error
    }

    /// Names the fields but never shows their values.
    public var description: String {
        if let error { return "IdpSdkProvideCredentialsResult(error: \(error))" }
        return "IdpSdkProvideCredentialsResult(fields: \((credentials ?? [:]).keys.sorted()))"
    }
}

/// A provider that wants to know when a flow has ended, to release per-flow state or to cancel a
/// wait it is doing for that flow.
///
/// The SDK calls ``flowDidEnd(_:result:)`` once for every flow started with this provider, on an
/// SDK thread, just before that flow's completion handler runs — also when the flow ended while
/// `provideCredentials` was still running (cancellation, timeout): then the two run at once on
/// different threads.
public protocol IdpSdkFlowObserving: IdpSdkInteractionInterface {
    /// The flow `flowId` has ended with `result`.
    func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult)
}
