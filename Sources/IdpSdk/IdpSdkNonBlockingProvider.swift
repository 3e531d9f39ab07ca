/// A provider whose `provideCredentials` returns without waiting: no UI prompt, no semaphore, no
/// blocking bridge into async code; a lookup under a short lock at most.
///
/// ```swift
/// struct TableProvider: IdpSdkNonBlockingProvider, Sendable {
///     let values: [String: String]
///     func provideCredentials(_ data: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
///         .init(credentials: values.filter { data.inputFieldIds.contains($0.key) })
///     }
/// }
/// ```
///
/// The SDK then asks it on the SDK thread that read the IDP's answer, without a hand-off to another
/// SDK thread; a provider that may block (or does not say) is always asked on a thread of its own
/// from the SDK's pool, so its wait holds nothing else up. Either way the call runs on an
/// SDK-owned OS thread, never the caller's thread, the main thread or a Swift concurrency thread.
///
/// - Warning: Adopt it only if no call ever blocks: a blocked call would hold up the thread that
///   delivers the IDP's answers to this flow. A wrapper whose blocking depends on what it wraps
///   answers ``providesCredentialsWithoutBlocking`` from its base.
public protocol IdpSdkNonBlockingProvider: IdpSdkInteractionInterface {
    /// Whether `provideCredentials` never blocks; `true` unless a conformer says otherwise.
    var providesCredentialsWithoutBlocking: Bool { get }
}

extension IdpSdkNonBlockingProvider {
    public var providesCredentialsWithoutBlocking: Bool { true }
}
