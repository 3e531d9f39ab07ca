import IdpPrimitives

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
        let roles = ProviderRoles.of(provider)
        observer = roles.observing?.observer(provider)
        neverBlocks = roles.nonBlocking?.neverBlocks(provider) ?? false
    }
}

/// Which of the SDK's optional protocols a provider's type adopts (``IdpSdkFlowObserving``,
/// ``IdpSdkNonBlockingProvider``), found by a cast once per type on each thread that starts flows,
/// and kept as views that reach a provider of that type without a cast to a protocol: such a cast
/// looks the conformance up in the runtime's tables, hashing, and writing a reader count that
/// every thread writes.
struct ProviderRoles {
    /// How to see a provider of this type as an observer; `nil` when the type does not observe.
    let observing: (any ObserverView)?
    /// How to read whether a provider of this type never blocks; `nil` when the type does not say.
    let nonBlocking: (any NonBlockingView)?

    /// The roles of `provider`'s type, as its casts find them.
    init(casting provider: any IdpSdkInteractionInterface) {
        observing = (provider as? any IdpSdkFlowObserving).map { Self.view(of: $0) }
        nonBlocking = (provider as? any IdpSdkNonBlockingProvider).map { Self.view(of: $0) }
    }

    private static func view<Observer: IdpSdkFlowObserving>(of _: Observer) -> any ObserverView { ObserverViewOf<Observer>() }

    private static func view<NonBlocking: IdpSdkNonBlockingProvider>(of _: NonBlocking) -> any NonBlockingView { NonBlockingViewOf<NonBlocking>() }

    /// The roles of `provider`'s type: from the calling thread's cache, cast once for a type it has
    /// not seen.
    static func of(_ provider: any IdpSdkInteractionInterface) -> ProviderRoles {
        ProviderRoleCache.caches.withValue(orMake: { ProviderRoleCache() }) { $0.roles(of: provider) }
    }
}

/// Sees a provider of one type as an ``IdpSdkFlowObserving``.
protocol ObserverView: AnyObject {
    func observer<Provider: IdpSdkInteractionInterface>(_ provider: Provider) -> (any IdpSdkFlowObserving)?
}

/// Reads ``IdpSdkNonBlockingProvider/providesCredentialsWithoutBlocking`` of a provider of one type.
protocol NonBlockingView: AnyObject {
    func neverBlocks<Provider: IdpSdkInteractionInterface>(_ provider: Provider) -> Bool
}

/// The view of the observing type `Observer`. A provider of another type (which the cache, keyed
/// by type, never hands it) is cast as ``ProviderRoles`` would cast it.
final class ObserverViewOf<Observer: IdpSdkFlowObserving>: ObserverView {
    func observer<Provider: IdpSdkInteractionInterface>(_ provider: Provider) -> (any IdpSdkFlowObserving)? {
        // `type(of:)` is the dynamic type (a subclass's, for an instance held as its superclass),
        // the one the cache is keyed by: the downcast then cannot fail and needs no conformance.
        guard type(of: provider) == Observer.self else { return provider as? any IdpSdkFlowObserving }
        return provider as! Observer
    }
}

/// The view of the non-blocking type `NonBlocking`; a provider of another type is cast.
final class NonBlockingViewOf<NonBlocking: IdpSdkNonBlockingProvider>: NonBlockingView {
    func neverBlocks<Provider: IdpSdkInteractionInterface>(_ provider: Provider) -> Bool {
        guard type(of: provider) == NonBlocking.self else {
            return (provider as? any IdpSdkNonBlockingProvider)?.providesCredentialsWithoutBlocking ?? false
        }
        return (provider as! NonBlocking).providesCredentialsWithoutBlocking
    }
}

/// One thread's roles of the provider types it started flows with lately, most recent first. Kept
/// in thread-specific storage: only its own thread ever reaches it. A type's metadata lives as long
/// as the process, so its identity is a key that cannot be reused by another type.
final class ProviderRoleCache {
    /// Types remembered per thread; an app passes one or two.
    static let capacity = 4

    private var entries: [(type: ObjectIdentifier, roles: ProviderRoles)] = []

    static let caches = ThreadSpecific<ProviderRoleCache>()

    /// The roles of `provider`'s dynamic type.
    func roles(of provider: any IdpSdkInteractionInterface) -> ProviderRoles {
        let type = ObjectIdentifier(Swift.type(of: provider))
        if !entries.isEmpty, entries[0].type == type { return entries[0].roles }
        for index in 1..<max(1, entries.count) where entries[index].type == type {
            let found = entries.remove(at: index)
            entries.insert(found, at: 0)
            return found.roles
        }
        let roles = ProviderRoles(casting: provider)
        entries.insert((type, roles), at: 0)
        if entries.count > Self.capacity { entries.removeLast() }
        return roles
    }
}

@available(*, unavailable, message: "a thread's provider roles belong to its thread")
extension ProviderRoleCache: Sendable {}
