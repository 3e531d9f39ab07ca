import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpWireFormats
import IdpSdk

// The calibration's real-world shapes: the mechanisms of concurrency bugs that authentication SDKs
// shipped and later fixed, each ported to a provider (the broken shape) beside the maintainers'
// fix (ported too). Every port reads the time from the kit's clock (`User.clock`) and caches a
// secret for a realistic time, so only the kit's expiry storms reach its refresh path. Each broken
// port keeps its state under locks: its defect is the bug's logic, not a data race.
//
// The ports talk to `RotatingGrantServer`, an in-process authorization server that issues
// single-use (rotating) refresh grants and detects their reuse.

/// An authorization server with refresh-grant rotation and reuse detection, as OAuth 2.0 servers
/// run it (RFC 9700 §4.14.2): each redemption of a refresh grant spends it and returns a new
/// access token and a new grant; redeeming a spent grant again revokes the whole family (every
/// access token and grant descended from the same login), so the user is logged out. A grace
/// period (Okta's "grace period for token rotation") lets a just-spent grant be redeemed again,
/// for the same answer, within that many seconds of the time it was spent.
///
/// Process-wide (``shared``), as the real server is for every instance of an app. Each
/// redemption takes about 1 ms, outside the lock, as a round trip to the server does. Accounts
/// are keyed by user id and password, so every kit run (fresh random passwords) has its own.
final class RotatingGrantServer: Sendable {
    static let shared = RotatingGrantServer()

    /// What a login or a redemption returns: an access token valid until `expires`, and the grant
    /// that renews it.
    struct Session: Sendable, Equatable {
        /// Stable for the life of a login: every session the family renews keeps it.
        let id: Int
        let accessToken: String
        let grant: String
        let expires: Date
    }

    enum Refusal: Error, CustomStringConvertible {
        case grantReused
        case familyRevoked
        case unknownGrant

        var description: String {
            switch self {
            case .grantReused: "refresh grant already used: reuse detected, every session of this login revoked"
            case .familyRevoked: "this login's sessions were revoked after a refresh grant was reused"
            case .unknownGrant: "unknown refresh grant"
            }
        }
    }

    private struct Family {
        var revoked = false
        /// Spent grants, with when they were spent and the session their redemption returned.
        var spent: [String: (at: Date, answer: Session)] = [:]
        var live: Set<String> = []
        var accessTokens: [String: Date] = [:]
    }

    private struct State {
        var families: [Int: Family] = [:]
        var familyOfGrant: [String: Int] = [:]
        var familyOfToken: [String: Int] = [:]
        var next = 0
    }

    private let state = LockedValue(State())

    /// A new login for an account: a session of `lifetime` seconds from `now`.
    func login(now: Date, lifetime: TimeInterval) -> Session {
        state.withLock { state in
            state.next += 1
            let session = Self.session(id: state.next, number: 0, now: now, lifetime: lifetime)
            state.families[state.next] = Family(live: [session.grant], accessTokens: [session.accessToken: session.expires])
            state.familyOfGrant[session.grant] = state.next
            state.familyOfToken[session.accessToken] = state.next
            return session
        }
    }

    /// Redeems a refresh grant: a new session, or a refusal (a spent grant outside the grace
    /// period revokes the family). With `roundTrip` it first sleeps 1 ms, as a request to the
    /// server takes; an async caller sleeps in its task instead.
    func redeem(_ grant: String, now: Date, lifetime: TimeInterval, grace: TimeInterval = 0, roundTrip: Bool = true) -> Result<Session, Refusal> {
        if roundTrip { usleep(1_000) }
        return state.withLock { state in
            guard let id = state.familyOfGrant[grant], var family = state.families[id] else { return .failure(.unknownGrant) }
            defer { state.families[id] = family }
            guard !family.revoked else { return .failure(.familyRevoked) }
            if let spent = family.spent[grant] {
                if now.timeIntervalSince(spent.at) < grace { return .success(spent.answer) }
                family.revoked = true
                return .failure(.grantReused)
            }
            guard family.live.remove(grant) != nil else { return .failure(.unknownGrant) }
            let session = Self.session(id: id, number: family.spent.count + 1, now: now, lifetime: lifetime)
            family.spent[grant] = (now, session)
            family.live.insert(session.grant)
            family.accessTokens[session.accessToken] = session.expires
            state.familyOfGrant[session.grant] = id
            state.familyOfToken[session.accessToken] = id
            return .success(session)
        }
    }

    /// Whether an access token is one the server issued, unexpired at `now` and not revoked.
    func accepts(_ accessToken: String, now: Date) -> Bool {
        state.withLock { state in
            guard let id = state.familyOfToken[accessToken], let family = state.families[id], !family.revoked,
                  let expires = family.accessTokens[accessToken] else { return false }
            return expires > now
        }
    }

    private static func session(id: Int, number: Int, now: Date, lifetime: TimeInterval) -> Session {
        Session(id: id, accessToken: "at-\(id)-\(number)-" + SecureRandom.token(byteCount: 6),
                grant: "rt-\(id)-\(number)-" + SecureRandom.token(byteCount: 6), expires: now.addingTimeInterval(lifetime))
    }
}

/// What every port answers: the user's values while its session's access token is accepted (at
/// `now`, the time the port decided on the session; the kit's clock read again if `nil`), its own
/// error otherwise; for a user without credentials, the no-credentials error.
func answer(_ data: IdpSdkInteractionData, for user: ProviderConformanceKit.User,
            with session: Result<RotatingGrantServer.Session, RotatingGrantServer.Refusal>, at now: Date? = nil) -> IdpSdkProvideCredentialsResult {
    guard !user.credentials.isEmpty else {
        return .init(error: CredentialProviderError.make(.noCredentials, "no credentials for \(user.userId)"))
    }
    switch session {
    case .success(let session) where RotatingGrantServer.shared.accepts(session.accessToken, now: now ?? user.clock.now()):
        return StaticCredentials(user.credentials).provideCredentials(data)
    case .success:
        return .init(error: IdpSdkError("Port", 1, "the server refused the session's access token"))
    case .failure(let refusal):
        return .init(error: IdpSdkError("Port", 2, refusal.description))
    }
}

/// The account a port's process-wide state is kept under: unique per kit run.
func account(_ user: ProviderConformanceKit.User) -> String {
    user.userId + "/" + (user.credentials["password"] ?? "")
}

// MARK: Auth0.swift: renewals across instances (one lock per instance, one keychain per process)

/// The keychain of the Auth0 ports: one per process, shared by every instance, by account.
private let auth0Keychain = LockedValue<[String: RotatingGrantServer.Session]>([:])

/// The session an Auth0 port starts from: the keychain's, or a new login stored there (the app
/// logged in before; the kit's factory makes instances one after another, so this never races).
private func auth0StoredSession(_ user: ProviderConformanceKit.User) -> RotatingGrantServer.Session? {
    guard !user.credentials.isEmpty else { return nil }
    let key = account(user)
    if let stored = auth0Keychain.withLock({ $0[key] }) { return stored }
    let session = RotatingGrantServer.shared.login(now: user.clock.now(), lifetime: 3600)
    auth0Keychain.withLock { $0[key] = session }
    return session
}

/// Check expiry at `now`, redeem the rotating grant, store: the renewal both Auth0 ports run, each
/// under its own lock.
private func auth0Renew(_ user: ProviderConformanceKit.User, at now: Date) -> Result<RotatingGrantServer.Session, RotatingGrantServer.Refusal> {
    let key = account(user)
    guard let stored = auth0Keychain.withLock({ $0[key] }) else { return .failure(.unknownGrant) }
    guard stored.expires <= now else { return .success(stored) }
    let renewed = RotatingGrantServer.shared.redeem(stored.grant, now: now, lifetime: 3600)
    if case .success(let session) = renewed { auth0Keychain.withLock { $0[key] = session } }
    return renewed
}

/// BROKEN ON PURPOSE, after auth0/Auth0.swift's `CredentialsManager` between PR #548 and PR #1048:
/// #548 serialised renewals with a serial queue per `CredentialsManager` instance, but the
/// keychain the credentials live in is one per process. Two instances (two screens, each creating
/// its own manager) whose access token expired each check the keychain, each redeem the same
/// rotating refresh token, and the second redemption is refused as a reuse, which revokes the
/// login (the manager's documentation said as much: "these methods are thread-safe, [but] the
/// Credentials Manager cannot synchronize them across instances"). Port: a lock per provider
/// instance around check-expiry → redeem → store, over a process-wide keychain; the access token
/// lasts an hour of the kit's clock.
final class Auth0PerInstanceLockProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User
    /// The serial queue of one `CredentialsManager`: one per instance.
    private let renewals = NSLock()

    init(user: ProviderConformanceKit.User) {
        self.user = user
        _ = auth0StoredSession(user)
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        guard !user.credentials.isEmpty else { return answer(interactionData, for: user, with: .failure(.unknownGrant)) }
        renewals.lock()
        let now = user.clock.now()
        let session = auth0Renew(user, at: now)
        renewals.unlock()
        return answer(interactionData, for: user, with: session, at: now)
    }
}

/// The fix of auth0/Auth0.swift PR #1048 ("Make credential renewal resilient to concurrency
/// conditions"): one process-wide barrier that every `CredentialsManager` instance, and the
/// Authentication client, renew through, so renewals of any instances run one at a time; the
/// second instance finds the renewed credentials in the keychain.
final class Auth0ProcessBarrierProvider: IdpSdkInteractionInterface, Sendable {
    /// The barrier: one per process.
    private static let renewals = NSLock()
    let user: ProviderConformanceKit.User

    init(user: ProviderConformanceKit.User) {
        self.user = user
        _ = auth0StoredSession(user)
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        guard !user.credentials.isEmpty else { return answer(interactionData, for: user, with: .failure(.unknownGrant)) }
        Self.renewals.lock()
        let now = user.clock.now()
        let session = auth0Renew(user, at: now)
        Self.renewals.unlock()
        return answer(interactionData, for: user, with: session, at: now)
    }
}

// MARK: Auth0.swift: renewals of one instance

/// BROKEN ON PURPOSE (unless `serialisesRenewals`), after auth0/Auth0.swift issue #457 ("Queue
/// token refreshes"): callers of `credentialsManager.credentials` while the access token is
/// expired each fire a renewal, and with refresh-token rotation only the first succeeds (the
/// method's documentation warned: "might result in more than one renew request being fired, and
/// only the first one will succeed"); the issue adds that callers on one thread, serially, hit it
/// too, since the renewal is asynchronous. Port: each caller reads the instance's stored session
/// and, if its hour on the kit's clock has passed, redeems its grant and stores the result, with
/// nothing to make a second caller wait for the first; the second redemption is a reuse, and the
/// login is revoked.
///
/// `serialisesRenewals` is the fix of auth0/Auth0.swift PR #548: renewals of one
/// `CredentialsManager` run on its serial queue, check → renew → store as one step, so a caller
/// that finds the token expired after another renewed it reads the renewed one. Correct for one
/// instance over its own storage (each instance logs in on its own here);
/// `Auth0PerInstanceLockProvider` shows it is not across instances sharing one keychain.
final class Auth0InstanceRenewalProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User
    let serialisesRenewals: Bool
    /// The instance's credentials storage.
    private let stored: LockedValue<RotatingGrantServer.Session?>
    /// The instance's serial queue, when it has one.
    private let renewals = NSLock()

    init(user: ProviderConformanceKit.User, serialisesRenewals: Bool = false) {
        self.user = user
        self.serialisesRenewals = serialisesRenewals
        stored = LockedValue(user.credentials.isEmpty ? nil : RotatingGrantServer.shared.login(now: user.clock.now(), lifetime: 3600))
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if serialisesRenewals { renewals.lock() }
        defer { if serialisesRenewals { renewals.unlock() } }
        guard let session = stored.withLock({ $0 }) else { return answer(interactionData, for: user, with: .failure(.unknownGrant)) }
        let now = user.clock.now()
        guard session.expires <= now else { return answer(interactionData, for: user, with: .success(session), at: now) }
        let renewed = RotatingGrantServer.shared.redeem(session.grant, now: now, lifetime: 3600)
        if case .success(let new) = renewed { stored.withLock { $0 = new } }
        return answer(interactionData, for: user, with: renewed, at: now)
    }
}

// MARK: okta-mobile-swift: a refreshed token that is never stored

/// The token storage of the Okta ports (the keychain): one per process, by account.
private let oktaStorage = LockedValue<[String: RotatingGrantServer.Session]>([:])

/// Okta's refresh-token rotation keeps a spent grant good for a grace period (30 s by default),
/// so concurrent refreshes of one token all succeed; a grant spent longer ago is a reuse.
private let oktaGrace: TimeInterval = 30

/// BROKEN ON PURPOSE, after okta/okta-mobile-swift PR #109 ("Fix a race condition that sometimes
/// prevents tokens from being stored after a refresh"): a refreshed token reached the `Credential`
/// by two paths, the refresh's completion (which set `self.token`) and a delegate callback
/// (`oauth(client:didRefresh:replacedWith:)`), and the callback kept the new token only
/// `guard token == self.token`, a comparison of whole token values; when the completion had
/// already replaced `self.token`, the comparison failed and the refreshed token was not stored.
/// The fix compares the tokens' ids. Port: each instance works from a token in memory loaded from
/// process-wide storage; after a refresh the completion path replaces the token in memory, and the
/// store path writes storage only if the token it refreshed still equals, by whole value, the
/// one in memory, which here it never does. The instance itself goes on right; the next instance
/// to load the token (the kit's next round, as an app relaunched or another screen) gets the one
/// whose grant was spent, and once the grace period has passed its refresh is a reuse, and the
/// login is revoked. Tokens last an hour of the kit's clock.
final class OktaUnstoredRefreshProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User
    /// Whether the store path compares token ids (the fix) or whole tokens.
    let comparesIds: Bool
    private let token: LockedValue<RotatingGrantServer.Session?>

    init(user: ProviderConformanceKit.User, comparesIds: Bool = false) {
        self.user = user
        self.comparesIds = comparesIds
        guard !user.credentials.isEmpty else {
            token = LockedValue(nil)
            return
        }
        let key = account(user)
        let stored = oktaStorage.withLock { $0[key] } ?? {
            let session = RotatingGrantServer.shared.login(now: user.clock.now(), lifetime: 3600)
            oktaStorage.withLock { $0[key] = session }
            return session
        }()
        token = LockedValue(stored)
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        guard let refreshing = token.withLock({ $0 }) else { return answer(interactionData, for: user, with: .failure(.unknownGrant)) }
        let now = user.clock.now()
        guard refreshing.expires <= now else { return answer(interactionData, for: user, with: .success(refreshing), at: now) }
        let refreshed = RotatingGrantServer.shared.redeem(refreshing.grant, now: now, lifetime: 3600, grace: oktaGrace)
        if case .success(let new) = refreshed {
            // The completion path: the token in memory.
            token.withLock { $0 = new }
            // The store path, after it: storage only while the refreshed token is the current one.
            let current = token.withLock { $0 }
            let stillCurrent = comparesIds ? current?.id == refreshing.id : current == refreshing
            if stillCurrent { oktaStorage.withLock { $0[account(user)] = new } }
        }
        return answer(interactionData, for: user, with: refreshed, at: now)
    }
}

// MARK: Alamofire: a synchronous refresh under the interceptor's lock

/// BROKEN ON PURPOSE, after Alamofire/Alamofire PR #3322 ("Fix Double Lock in
/// AuthenticationInterceptor"): the interceptor held its lock while it called the authenticator's
/// `refresh`, and an authenticator whose refresh completed synchronously (on the calling thread)
/// ran the completion, which takes the same lock, inside it: a double lock, a crash or a deadlock
/// the first time a credential needed refreshing. The fix hops off the lock (onto the
/// interceptor's queue) before calling `refresh`. Port: a non-recursive mutex held while the
/// provider checks its credential's expiry (half an hour on the kit's clock) and refreshes it with
/// a refresher whose completion runs synchronously and takes the mutex again: the first call after
/// the expiry deadlocks on itself, and every other call waits for it.
final class InterceptorDoubleLockProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound apart from the defect: `credential` is touched only with `mutex` held.
    let user: ProviderConformanceKit.User
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var credential: RotatingGrantServer.Session?

    init(user: ProviderConformanceKit.User) {
        self.user = user
        mutex.initialize(to: pthread_mutex_t())
        // A plain mutex, as `os_unfair_lock` is: locking it twice on one thread never returns.
        precondition(pthread_mutex_init(mutex, nil) == 0)
        credential = user.credentials.isEmpty ? nil : RotatingGrantServer.shared.login(now: user.clock.now(), lifetime: 1800)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        pthread_mutex_lock(mutex)
        if let stale = credential, stale.expires <= user.clock.now() {
            refresh(stale) { refreshed in
                pthread_mutex_lock(self.mutex)
                self.credential = try? refreshed.get()
                pthread_mutex_unlock(self.mutex)
            }
        }
        let session = credential
        pthread_mutex_unlock(mutex)
        return answer(interactionData, for: user, with: session.map { .success($0) } ?? .failure(.unknownGrant))
    }

    /// The authenticator: completes synchronously, on the calling thread.
    private func refresh(_ credential: RotatingGrantServer.Session,
                         completion: (Result<RotatingGrantServer.Session, RotatingGrantServer.Refusal>) -> Void) {
        completion(RotatingGrantServer.shared.redeem(credential.grant, now: user.clock.now(), lifetime: 1800))
    }
}

/// The fix of Alamofire/Alamofire PR #3322, with the interceptor's queueing of requests that
/// arrive during a refresh: under the lock, a caller that finds the credential expired either
/// becomes the refresher or queues to wait for it; the refresher calls the authenticator after
/// releasing the lock, stores the result under it, and wakes the queued callers after releasing
/// it again.
final class InterceptorHoppingProvider: IdpSdkInteractionInterface, Sendable {
    private struct State {
        var credential: RotatingGrantServer.Session?
        var refreshing = false
        var waiting: [DispatchSemaphore] = []
    }

    private enum Decision {
        case use(RotatingGrantServer.Session?)
        case refresh(RotatingGrantServer.Session)
        case wait(DispatchSemaphore)
    }

    let user: ProviderConformanceKit.User
    private let state: LockedValue<State>

    init(user: ProviderConformanceKit.User) {
        self.user = user
        state = LockedValue(State(credential: user.credentials.isEmpty ? nil : RotatingGrantServer.shared.login(now: user.clock.now(), lifetime: 1800)))
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = user.clock.now()
        let decision = state.withLock { state -> Decision in
            guard let credential = state.credential, credential.expires <= now else { return .use(state.credential) }
            if state.refreshing {
                let wake = DispatchSemaphore(value: 0)
                state.waiting.append(wake)
                return .wait(wake)
            }
            state.refreshing = true
            return .refresh(credential)
        }
        switch decision {
        case .use(let session):
            return answer(interactionData, for: user, with: session.map { .success($0) } ?? .failure(.unknownGrant), at: now)
        case .wait(let wake):
            wake.wait()
        case .refresh(let credential):
            let refreshed = RotatingGrantServer.shared.redeem(credential.grant, now: now, lifetime: 1800)
            let waiting = state.withLock { state -> [DispatchSemaphore] in
                state.credential = try? refreshed.get()
                state.refreshing = false
                defer { state.waiting = [] }
                return state.waiting
            }
            for wake in waiting { wake.signal() }
        }
        let session = state.withLock { $0.credential }
        return answer(interactionData, for: user, with: session.map { .success($0) } ?? .failure(.grantReused), at: now)
    }
}

// MARK: TPInAppReceipt: a refresh in flight drops the next caller's completion

/// The refresh session of the TPInAppReceipt ports, one per process as `InAppReceipt`'s static
/// `refreshSession` is: `nil` when no refresh is in flight, else the completions to call when it
/// ends.
private let receiptRefreshSession = LockedValue<[@Sendable (Date) -> Void]?>(nil)

/// Starts a receipt refresh that ends about 1 ms later on another thread, as the store's request
/// does, unless one is in flight; `keepsEveryCaller`: a caller arriving during the refresh has
/// its completion called at the end too (the fix) instead of dropped.
private func refreshReceipt(clock: any IdpClock, keepsEveryCaller: Bool, completion: @escaping @Sendable (Date) -> Void) {
    let starts = receiptRefreshSession.withLock { session -> Bool in
        guard session == nil else {
            if keepsEveryCaller { session?.append(completion) }
            return false
        }
        session = [completion]
        return true
    }
    guard starts else { return }
    DispatchQueue.global().async {
        usleep(1_000)
        // The session ends before its completions run, so a completion that refreshes again
        // starts a new one.
        let completions = receiptRefreshSession.withLock { session in
            defer { session = nil }
            return session ?? []
        }
        let renewed = clock.now().addingTimeInterval(60)
        for completion in completions { completion(renewed) }
    }
}

/// BROKEN ON PURPOSE, after tikhop/TPInAppReceipt issue #93 ("Refresh completion handler is not
/// called if refreshSession is exist"): `InAppReceipt.refresh(completion:)` began with
/// `if refreshSession != nil { return }`, so a caller that asked for a refresh while one was in
/// flight never had its completion called; the fix calls every caller's completion when the
/// refresh ends. Port: the provider answers only with a validated receipt, which it caches for a
/// minute of the kit's clock; once it has expired, each caller starts a refresh (one per process)
/// and waits for its completion. Callers that arrive while the refresh is in flight wait forever.
final class ReceiptDroppedCompletionProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User
    let keepsEveryCaller: Bool
    private let receiptExpires: LockedValue<Date>

    init(user: ProviderConformanceKit.User, keepsEveryCaller: Bool = false) {
        self.user = user
        self.keepsEveryCaller = keepsEveryCaller
        receiptExpires = LockedValue(user.clock.now().addingTimeInterval(60))
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if receiptExpires.withLock({ $0 }) <= user.clock.now() {
            let refreshed = DispatchSemaphore(value: 0)
            let expires = receiptExpires
            refreshReceipt(clock: user.clock, keepsEveryCaller: keepsEveryCaller) { renewed in
                expires.withLock { $0 = max($0, renewed) }
                refreshed.signal()
            }
            refreshed.wait()
        }
        guard !user.credentials.isEmpty else {
            return .init(error: CredentialProviderError.make(.noCredentials, "no credentials for \(user.userId)"))
        }
        return StaticCredentials(user.credentials).provideCredentials(interactionData)
    }
}
