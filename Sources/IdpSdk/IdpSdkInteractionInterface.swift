/// Supplies credentials when a flow's IDP form asks for them.
///
/// ```swift
/// class IdpHandler: NSObject {}
///
/// extension IdpHandler: IdpSdkInteractionInterface {
///     func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
///         .init(credentials: ["username": "alice", "password": "s3cret"])
///     }
/// }
/// ```
///
/// Like the vendor's Objective-C protocol, this one does not refine `Sendable`, so the documents'
/// plain `class IdpHandler: NSObject` conforms as printed. Thread safety is the implementer's duty,
/// as the documents say; `IdpHarness`'s conformance kit is how to check it. The providers of
/// `CredentialProviders` are all `Sendable`.
///
/// - Warning: `provideCredentials` is called on an SDK-owned OS thread, never the caller's thread,
///   the main thread or a Swift concurrency thread, and many flows call one instance at once. It may
///   be called several times per flow: once per form step, and again when the IDP rejects an answer
///   (`interactionData.previousError` then says why). It may block its thread (to wait for a UI
///   prompt, say); that holds only its own thread. Shared state must be synchronized.
public protocol IdpSdkInteractionInterface {
    /// Answers one form step: credentials for every id in `interactionData.inputFieldIds`, or an
    /// error, which cancels the flow and comes back unchanged in the `IdpSdkResult`.
    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult
}

/// A provider's answer: credentials by field id, or an error that cancels the flow.
public struct IdpSdkProvideCredentialsResult: Sendable, CustomStringConvertible {
    /// One word: the dictionary, or the error in a box of its own. An error is a few strings and
    /// an optional lockout, so keeping it inline made every answer about 70 bytes, returned
    /// through memory and copied with outlined value-witness calls on each provider call, though
    /// almost every answer is credentials.
    private enum Storage: Sendable {
        case credentials([String: String])
        case error(ErrorBox)
    }

    private final class ErrorBox: Sendable {
        let error: IdpSdkError
        init(_ error: IdpSdkError) { self.error = error }
    }

    private let storage: Storage

    /// The values by field id, when the provider answered.
    public var credentials: [String: String]? {
        if case .credentials(let values) = storage { return values }
        return nil
    }

    /// The error, when the provider cancelled the flow.
    public var error: IdpSdkError? {
        if case .error(let box) = storage { return box.error }
        return nil
    }

    /// Answers the step with these values, keyed by field id.
    public init(credentials: [String: String]) {
        storage = .credentials(credentials)
    }

    /// Cancels the flow with this error.
    public init(error: IdpSdkError) {
        storage = .error(ErrorBox(error))
    }

    /// Names the fields but never shows their values.
    public var description: String {
        if let error { return "IdpSdkProvideCredentialsResult(error: \(error))" }
        return "IdpSdkProvideCredentialsResult(fields: \((credentials ?? [:]).keys.sorted()))"
    }
}

/// A provider that wants to know when a flow has ended: to release per-flow state, or to stop a
/// wait it is doing for that flow.
///
/// Both methods run on SDK threads.
/// - ``flowEndedDuringCall(_:)``: the flow ended (cancelled, timed out, …) while a
///   `provideCredentials` call of it is still running; whatever that call returns is discarded.
///   A provider that blocks should stop waiting.
/// - ``flowDidEnd(_:result:)``: once per flow started with this provider, after the flow's last
///   `provideCredentials` call has returned; no call of that flow starts after it. Usually it runs
///   just before the completion handler; when the flow ended during a call, it runs when that call
///   returns, possibly after the completion handler.
public protocol IdpSdkFlowObserving: IdpSdkInteractionInterface {
    /// The flow `flowId` ended while a `provideCredentials` call of it is running.
    func flowEndedDuringCall(_ flowId: IdpSdkFlowID)
    /// The flow `flowId` has ended with `result` and none of its calls is running.
    func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult)
}

extension IdpSdkFlowObserving {
    public func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {}
}
