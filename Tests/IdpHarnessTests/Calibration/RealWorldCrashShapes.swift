import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk

// Ports of a concurrency bug a real authentication SDK shipped, and of its fix, as credential
// providers: the mechanism written again from the bug report and the fix, not the SDK's code.

/// BROKEN ON PURPOSE: a session whose access token expires, refreshed by a coalesced refresh
/// guarded by a concurrent `DispatchQueue` used with `sync` as if it were a mutex.
///
/// Ports okta-mobile-swift #170 ("Crashing using `await Credential.refreshIfNeeded()`": several
/// concurrent callers crash the app, "trying to resume to a continuation more than once").
/// `OAuth2Client.refresh(_:completion:)` coalesced concurrent refreshes of a token into one
/// request, keeping the waiting callers' completions in the token's `refreshAction`, and decided
/// whether a refresh was already in flight inside `refreshQueue.sync { … }`, where
/// `refreshQueue` was created with `attributes: .concurrent`. Blocks that `sync` submits to a
/// concurrent queue run at the same time, so the queue excluded nothing: two callers could both
/// find no refresh in flight and each start one, the second replacing the first one's
/// `refreshAction` before the first had captured it, so both refreshes finished the same action
/// and resumed its callers' `CheckedContinuation`s twice (a fatal error), while the other
/// action's callers were never resumed; callers appending to one action at once could tear its
/// array of completions. The finish ran under `sync(flags: .barrier)`, which did exclude the
/// others, so only the decision was unguarded.
///
/// Here the async `validToken()` wraps the completion-based refresh in
/// `withCheckedThrowingContinuation`, as `refreshIfNeeded()` did, and the provider reaches it from
/// the SDK's synchronous callback through `AsyncCredentialBridge`. The token lives 1 ms, so the
/// refresh path runs all through a run. The `@unchecked Sendable` is the defect under test.
final class ConcurrentQueueRefreshSession: @unchecked Sendable {
    struct Token: Sendable {
        let value: String
        let expires: ContinuousClock.Instant
    }

    /// The waiting callers' completions, finished together when the one refresh ends.
    final class CoalescedResult: @unchecked Sendable {
        private var completions: [(Result<Token, any Error>) -> Void] = []

        func add(_ completion: @escaping (Result<Token, any Error>) -> Void) {
            completions.append(completion)
        }

        func finish(_ result: Result<Token, any Error>) {
            for completion in completions { completion(result) }
        }
    }

    private let lifetime: Duration
    private var token: Token?
    private var refreshAction: CoalescedResult?
    private let refreshQueue = DispatchQueue(label: "ConcurrentQueueRefreshSession.refresh", qos: .userInitiated, attributes: .concurrent)

    init(lifetime: Duration = .milliseconds(1)) {
        self.lifetime = lifetime
    }

    /// A token that has not expired, refreshing it first when it has.
    func validToken() async throws -> Token {
        if let token = refreshQueue.sync(execute: { token }), token.expires > .now { return token }
        return try await withCheckedThrowingContinuation { continuation in
            refresh { continuation.resume(with: $0) }
        }
    }

    /// Refreshes the token, or joins the refresh in flight.
    func refresh(completion: @escaping (Result<Token, any Error>) -> Void) {
        refreshQueue.sync {
            guard refreshAction == nil else {
                refreshAction?.add(completion)
                return
            }
            refreshAction = CoalescedResult()
            refreshAction?.add(completion)
            performRefresh()
        }
    }

    private func performRefresh() {
        guard let action = refreshAction else { return }
        // The token request: answered on another thread a moment later.
        DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(200)) { [self] in
            let fresh = Token(value: UUID().uuidString, expires: .now + lifetime)
            refreshQueue.sync(flags: .barrier) {
                token = fresh
                action.finish(.success(fresh))
                refreshAction = nil
            }
        }
    }
}

/// The fix of okta-mobile-swift #170, ported: a real lock instead of the concurrent queue.
///
/// The maintainers replaced `refreshQueue.sync` around the coalescing decision with a lock
/// (commit cd53baa, "Use a proper lock to gate access to concurrent operations (like refresh or
/// openIdConfiguration) instead of relying on a queue"), so one caller at a time decides whether a
/// refresh is in flight and exactly one refresh starts. Here the same lock (the house
/// `LockedValue`) also guards the finish, which takes the waiting completions and clears the
/// refresh in flight; the completions run after the lock is released, each once.
final class LockedRefreshSession: Sendable {
    typealias Token = ConcurrentQueueRefreshSession.Token

    private struct State {
        var token: Token?
        /// The completions waiting for the refresh in flight; `nil` when none is.
        var waiting: [@Sendable (Result<Token, any Error>) -> Void]?
    }

    private let lifetime: Duration
    private let state = LockedValue(State())

    init(lifetime: Duration = .milliseconds(1)) {
        self.lifetime = lifetime
    }

    /// A token that has not expired, refreshing it first when it has.
    func validToken() async throws -> Token {
        if let token = state.withLock({ $0.token }), token.expires > .now { return token }
        return try await withCheckedThrowingContinuation { continuation in
            refresh { continuation.resume(with: $0) }
        }
    }

    /// Refreshes the token, or joins the refresh in flight.
    func refresh(completion: @escaping @Sendable (Result<Token, any Error>) -> Void) {
        let starts = state.withLock { state -> Bool in
            guard state.waiting == nil else {
                state.waiting?.append(completion)
                return false
            }
            state.waiting = [completion]
            return true
        }
        guard starts else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(200)) { [self] in
            let fresh = Token(value: UUID().uuidString, expires: .now + lifetime)
            let waiting = state.withLock { state in
                state.token = fresh
                defer { state.waiting = nil }
                return state.waiting ?? []
            }
            for completion in waiting { completion(.success(fresh)) }
        }
    }
}

/// A provider that answers a user's stored values once the session holds a valid token, through
/// `AsyncCredentialBridge`: the shape of an app that must refresh its SDK session before it can
/// read the credentials it keeps.
enum SessionRefreshingProvider {
    /// The provider over `validToken` (one session shared by every user of the provider).
    static func make(_ users: [ProviderConformanceKit.User], validToken: @escaping @Sendable () async throws -> Void) -> any IdpSdkInteractionInterface {
        let table = Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) })
        return AsyncCredentialBridge(timeout: .seconds(2)) { data in
            try await validToken()
            guard let values = table[data.userId ?? ""], !values.isEmpty else {
                throw CredentialProviderError.make(.noCredentials, "no credentials for \(data.userId ?? "nobody")")
            }
            return values.filter { data.inputFieldIds.contains($0.key) }
        }
    }

    /// Over ``ConcurrentQueueRefreshSession``: broken.
    static func concurrentQueue(_ users: [ProviderConformanceKit.User]) -> any IdpSdkInteractionInterface {
        let session = ConcurrentQueueRefreshSession()
        return make(users) { _ = try await session.validToken() }
    }

    /// Over ``LockedRefreshSession``: fixed.
    static func locked(_ users: [ProviderConformanceKit.User]) -> any IdpSdkInteractionInterface {
        let session = LockedRefreshSession()
        return make(users) { _ = try await session.validToken() }
    }
}
