import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk

// The kit's calibration: providers broken on purpose, each a classic mistake. Every one of them
// must be caught in every run (RaceCalibrationTests). Their `@unchecked Sendable` is the defect
// under test, not a claim of safety.

/// BROKEN ON PURPOSE: fills a plain dictionary lazily, on the first call, without a lock (the
/// shape a new user tried first). The first calls of several threads race on `loaded` and `cache`.
/// (Filling it key by key on each user's first call races the same way but also corrupts the
/// dictionary and crashes the process; the kit reports that too, see the crash note.)
final class LazyDictionaryProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    private let source: [String: [String: String]]
    private var cache: [String: [String: String]] = [:]
    private var loaded = false

    init(_ users: [ProviderConformanceKit.User]) {
        source = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if !loaded {
            cache = source
            loaded = true
        }
        return StaticCredentials(cache[interactionData.userId ?? ""] ?? [:]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: answers correctly but counts its calls in a plain `Int`.
final class UnsynchronizedCounterProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    private let users: [String: [String: String]]
    private(set) var calls = 0

    init(_ users: [ProviderConformanceKit.User]) {
        self.users = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        calls += 1
        return StaticCredentials(users[interactionData.userId ?? ""] ?? [:]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: parks "the current user" in one shared slot, then answers for whoever is in
/// it: two flows at once get each other's credentials (cross-talk).
final class SharedSlotProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    private let users: [[String: String]]
    private let index: [String: Int]
    private var current = 0

    init(_ users: [ProviderConformanceKit.User]) {
        self.users = users.map(\.credentials)
        index = Dictionary(uniqueKeysWithValues: users.enumerated().map { ($0.element.userId, $0.offset) })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        current = index[interactionData.userId ?? ""] ?? 0
        return StaticCredentials(users[current]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: takes two locks in one order for one-step clients and in the other order
/// for two-step clients, and holds the first while it writes an audit record (0.1 ms): a deadlock
/// waiting to happen, and the hammer's threads, released together, make it happen (a stale round).
final class LockOrderInversionProvider: IdpSdkInteractionInterface, Sendable {
    private let users: [String: [String: String]]
    private let sessions = LockedValue(0)
    private let audit = LockedValue(0)

    init(_ users: [ProviderConformanceKit.User]) {
        self.users = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if interactionData.clientId == "KssIdpLogin" {
            sessions.withLock { sessions in
                usleep(100)
                audit.withLock { audit in sessions += 1; audit += 1 }
            }
        } else {
            audit.withLock { audit in
                usleep(100)
                sessions.withLock { sessions in sessions += 1; audit += 1 }
            }
        }
        return StaticCredentials(users[interactionData.userId ?? ""] ?? [:]).provideCredentials(interactionData)
    }
}

/// BROKEN ON PURPOSE: bridges a callback lookup into the synchronous call with one semaphore per
/// provider, and the lookup completes twice. The extra signal lets a later call return before its
/// own answer arrived, with whatever answer the shared slot holds then: an earlier call's. Calls
/// are serialized and the slot is locked, so ThreadSanitizer has nothing to report; the kit's
/// answer check catches it.
///
/// The second completion comes after a refresh of 100 µs, as a cached-then-refreshed lookup's
/// would. With both completions back to back, whether a call read a stale slot depended on which
/// thread ran first (its own lookup could land between its wait and its read), and on a loaded
/// machine one run of 20 once saw no stale answer. With the refresh, call n + 1 returns while the
/// serial lookup queue is still on call n (woken by call n's second completion or a leftover
/// signal), so unless it is held up for longer than the refresh it answers call n's values:
/// another user's whenever the two users differ, which the hammer's alternating users make
/// happen in every round.
final class DoubleCompletionProvider: IdpSdkInteractionInterface, Sendable {
    private let users: [String: [String: String]]
    private let serial = LockedValue(0)
    private let slot = LockedValue<[String: String]?>(nil)
    private let answered = DispatchSemaphore(value: 0)
    private let lookups = DispatchQueue(label: "DoubleCompletionProvider.lookups")

    init(_ users: [ProviderConformanceKit.User]) {
        self.users = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        serial.withLock { _ in
            lookup(interactionData.userId ?? "") { values in
                self.slot.withLock { $0 = values }
                self.answered.signal()
            }
            answered.wait()
        }
        return StaticCredentials(slot.withLock { $0 } ?? [:]).provideCredentials(interactionData)
    }

    /// The callback API: completes once with the cached values, then again once "refreshed".
    private func lookup(_ user: String, completion: @escaping @Sendable ([String: String]) -> Void) {
        let values = users[user] ?? [:]
        lookups.async {
            completion(values)
            usleep(100)
            completion(values)
        }
    }
}
