import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk
import Synchronization

// Correct providers, one per way of synchronizing, for the kit's calibration: each fills a
// dictionary lazily on a user's first call (the broken provider's shape) but under its lock, and
// must pass every run.

/// Lazily filled, under the house lock.
final class LockedValueProvider: IdpSdkInteractionInterface, Sendable {
    private let source: [String: [String: String]]
    private let cache = LockedValue<[String: [String: String]]>([:])

    init(_ users: [ProviderConformanceKit.User]) { source = table(users) }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let user = interactionData.userId ?? ""
        let values = cache.withLock { cache in
            fill(&cache, user: user, from: source)
        }
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

/// Lazily filled, under Foundation's `NSLock`.
final class NSLockProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `cache` is touched only between lock() and unlock() of `lock`.
    private let source: [String: [String: String]]
    private let lock = NSLock()
    private var cache: [String: [String: String]] = [:]

    init(_ users: [ProviderConformanceKit.User]) { source = table(users) }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let user = interactionData.userId ?? ""
        lock.lock()
        let values = fill(&cache, user: user, from: source)
        lock.unlock()
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

/// Lazily filled, under a plain pthread mutex.
final class PthreadMutexProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `cache` is touched only between pthread_mutex_lock and pthread_mutex_unlock of `mutex`.
    private let source: [String: [String: String]]
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var cache: [String: [String: String]] = [:]

    init(_ users: [ProviderConformanceKit.User]) {
        source = table(users)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let user = interactionData.userId ?? ""
        pthread_mutex_lock(mutex)
        let values = fill(&cache, user: user, from: source)
        pthread_mutex_unlock(mutex)
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

/// Lazily filled, under `Synchronization.Mutex`.
final class MutexProvider: IdpSdkInteractionInterface, Sendable {
    private let source: [String: [String: String]]
    private let cache = Mutex<[String: [String: String]]>([:])

    init(_ users: [ProviderConformanceKit.User]) { source = table(users) }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let user = interactionData.userId ?? ""
        let values = cache.withLock { cache in
            fill(&cache, user: user, from: source)
        }
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

/// Lazily filled inside an actor, reached through `AsyncCredentialBridge`.
actor LazyCredentialActor {
    private let source: [String: [String: String]]
    private var cache: [String: [String: String]] = [:]

    init(_ users: [ProviderConformanceKit.User]) { source = table(users) }

    func values(for user: String) throws -> [String: String] {
        if cache[user] == nil { cache[user] = source[user] ?? [:] }
        guard let values = cache[user], !values.isEmpty else {
            throw CredentialProviderError.make(.noCredentials, "no credentials for \(user)")
        }
        return values
    }

    static func provider(_ users: [ProviderConformanceKit.User]) -> AsyncCredentialBridge {
        let actor = LazyCredentialActor(users)
        return AsyncCredentialBridge(timeout: .seconds(60)) { data in
            try await actor.values(for: data.userId ?? "").filter { data.inputFieldIds.contains($0.key) }
        }
    }
}

/// The lazy fill every provider here does under its lock: the user's values, copied into the
/// cache on the user's first call.
private func fill(_ cache: inout [String: [String: String]], user: String, from source: [String: [String: String]]) -> [String: String] {
    if cache[user] == nil { cache[user] = source[user] ?? [:] }
    return cache[user] ?? [:]
}

private func table(_ users: [ProviderConformanceKit.User]) -> [String: [String: String]] {
    Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
}
