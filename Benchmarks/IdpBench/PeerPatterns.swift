import CredentialProviders
import Dispatch
import Foundation
import IdpPrimitives
import IdpSdk

// The synchronization patterns well-known SDKs use for the same job: keep credentials or tokens
// in a table that many threads read. Each answers exactly like `CredentialStore` (same table, same
// answer step, `IdpSdkProvideCredentialsResult.answering`), so only the synchronization differs.

typealias CredentialTable = [CredentialStore.Key: [String: String]]

/// Missing user: the same error for every peer.
private func unknownUser(_ call: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
    .init(error: CredentialProviderError.make(.noCredentials, "no credentials for user '\(call.userId ?? "-")'"))
}

private func key(_ call: IdpSdkInteractionData) -> CredentialStore.Key {
    CredentialStore.Key(tenantId: call.tenantId, userId: call.userId ?? "")
}

/// A serial `DispatchQueue` guards the table and readers `sync` onto it: the approach of
/// Auth0.swift's credentials manager and GTMAppAuth's keychain store.
final class DispatchQueueStore: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `table` is only read or written inside blocks run on `queue`, a serial queue.
    private let queue = DispatchQueue(label: "idp-bench.DispatchQueueStore")
    private var table: CredentialTable

    init(_ table: CredentialTable) { self.table = table }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let key = key(interactionData)
        guard let values = queue.sync(execute: { table[key] }) else { return unknownUser(interactionData) }
        return .answering(interactionData, from: values)
    }
}

/// An `NSLock` around the table: AppAuth's `@synchronized` pattern.
final class NSLockStore: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `table` is only read or written between `lock.lock()` and `lock.unlock()`.
    private let lock = NSLock()
    private var table: CredentialTable

    init(_ table: CredentialTable) { self.table = table }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let key = key(interactionData)
        lock.lock()
        let values = table[key]
        lock.unlock()
        guard let values else { return unknownUser(interactionData) }
        return .answering(interactionData, from: values)
    }
}

/// The table lives in an actor; the synchronous call starts a `Task` that awaits the actor and
/// blocks on a semaphore until it answers: okta-mobile-swift's `withIsolationSync`.
final class ActorBridgeStore: IdpSdkInteractionInterface, Sendable {
    private actor Table {
        let table: CredentialTable
        init(_ table: CredentialTable) { self.table = table }
        func values(_ key: CredentialStore.Key) -> [String: String]? { table[key] }
    }

    private let table: Table

    init(_ table: CredentialTable) { self.table = Table(table) }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let key = key(interactionData)
        let answer = LockedValue<[String: String]?>(nil)
        let done = DispatchSemaphore(value: 0)
        let table = self.table
        Task {
            let values = await table.values(key)
            answer.withLock { $0 = values }
            done.signal()
        }
        done.wait()
        guard let values = answer.withLock({ $0 }) else { return unknownUser(interactionData) }
        return .answering(interactionData, from: values)
    }
}
