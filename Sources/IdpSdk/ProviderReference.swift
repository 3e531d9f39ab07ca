/// The user's provider, carried to the SDK threads that call it.
///
/// Why `@unchecked Sendable` is sound here: ``IdpSdkInteractionInterface`` does not refine
/// `Sendable` (the documents' `class IdpHandler: NSObject` must conform as printed, as it does to
/// the vendor's Objective-C protocol), yet the SDK must call it from its own threads — that is the
/// documented contract: "provideCredentials is called from a separate thread. Your implementation
/// must be thread-safe". This box adds no state of its own: it holds one immutable reference, so
/// the only accesses that can race are the provider's own, which its contract makes the
/// implementer's duty (and which the conformance kit checks). Nothing else in the SDK reaches the
/// provider.
struct ProviderReference: @unchecked Sendable {
    let provider: any IdpSdkInteractionInterface
    /// The provider as an observer, looked up once per flow.
    let observer: (any IdpSdkFlowObserving)?
    /// Whether the provider says it never blocks (``IdpSdkNonBlockingProvider``), looked up once
    /// per flow: then it may be asked without a hand-off.
    let neverBlocks: Bool

    init(_ provider: any IdpSdkInteractionInterface) {
        self.provider = provider
        self.observer = provider as? any IdpSdkFlowObserving
        self.neverBlocks = (provider as? any IdpSdkNonBlockingProvider)?.providesCredentialsWithoutBlocking ?? false
    }
}
