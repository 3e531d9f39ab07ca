import Foundation
import IdpPrimitives
import IdpSdk

/// Answers from a cached token and, when it has expired, refreshes it **once** for every caller
/// that needs it at that time: the provider most apps write, with the ordering bugs taken out.
///
/// ```swift
/// let provider = TokenCacheProvider<Session>(
///     refresh: { previous in                       // async; one call per expiry, however many callers
///         let session = try await authServer.refresh(previous?.token.refreshToken)
///         return CachedToken(session, expires: session.expiresAt)
///     },
///     credentials: { session, _ in ["username": session.user, "password": session.accessToken] })
/// ```
///
/// **One refresh.** A caller that finds the token missing or expired (by `clock`) starts a
/// refresh; every caller that comes while it runs waits for that one, and all get its outcome. A
/// refresh grant that may be spent once is spent once.
///
/// **Waiting.** `provideCredentials` runs on the SDK's OS threads: a caller that must wait blocks
/// its thread, up to `refreshTimeout`, then answers ``CredentialProviderError/Code/timedOut``
/// (the refresh goes on for the others); a flow that ends meanwhile ends its wait at once
/// (``CredentialProviderError/Code/cancelled``), as the SDK tells it through
/// ``flowEndedDuringCall(_:)``. Called from inside a Swift task or on the main thread,
/// where blocking could deadlock, it answers from a valid token and otherwise refuses with
/// ``CredentialProviderError/Code/calledWhereBlockingIsUnsafe``, starting nothing. App code in
/// a task calls ``token()`` instead, which suspends and never blocks a thread of the cooperative
/// pool. An async `refresh` runs in a task of its own; a synchronous one
/// (``init(clock:initial:refreshTimeout:refreshSynchronously:credentials:)``) runs on the SDK
/// thread that found the token expired, or on a thread of its own when ``token()`` starts it.
///
/// **Failure.** A refresh that throws gives its error, unchanged, to every caller waiting for it
/// (``token()`` rethrows it; `provideCredentials` answers it when it is an `IdpSdkError` and
/// ``CredentialProviderError/Code/answerFailed`` naming it otherwise). Nothing failed is kept: the
/// cache keeps the expired token, and the next caller refreshes again from it.
///
/// **Logout.** ``clear()`` forgets the token; a refresh in flight then is cut off: what it
/// returns is never stored, and its waiters answer ``CredentialProviderError/Code/cleared``.
/// ``store(_:)`` puts a token in (after a login); a refresh in flight then is superseded and its
/// waiters get the stored token.
///
/// The lock is held only to decide (use, wait, or refresh) and to record the outcome; the refresh,
/// `credentials` and the waking of waiters run after it. A call that finds a valid token takes no
/// lock: each thread answers from a view of its own, made again when the cache has changed since;
/// a view keeps the token it was made from until its thread next calls the cache (or has made
/// views of 64 others). Test it with the conformance kit by
/// reading the time from the kit's clock: `TokenCacheProvider(clock: user.clock, …)`.
public final class TokenCacheProvider<Token: Sendable>: IdpSdkFlowObserving, Sendable, CustomStringConvertible {
    /// How a refresh runs.
    private enum Refresh: Sendable {
        case async(@Sendable (CachedToken<Token>?) async throws -> CachedToken<Token>)
        case blocking(@Sendable (CachedToken<Token>?) throws -> CachedToken<Token>)
    }

    /// What a waiting caller gets.
    enum Outcome: Sendable {
        case token(CachedToken<Token>)
        case failed(any Error)
        case cleared
        case timedOut
        case cancelled
        /// Woken without an outcome: ask again.
        case lookAgain
    }

    typealias Waiter = FlightWaiter<Outcome>

    private let clock: any IdpClock
    let refreshTimeout: Duration
    private let refresh: Refresh
    private let credentials: @Sendable (Token, IdpSdkInteractionData) throws -> [String: String]
    let machine: LockedValue<TokenCacheMachine<Token, Waiter>>
    #if DEBUG
    /// The planted bug: the one of the task that made the cache.
    let planted = PlantedBugSwitch.inTask
    #endif
    private let reading = TokenCacheReading()
    /// The SDK threads waiting for a refresh, by flow: a flow that ends ends its wait.
    private let waitingFlows = WaitRegistry<Outcome>(cancelled: .cancelled)

    /// A cache whose refresh is async: it runs in a task of its own, never on the waiting threads.
    /// - Parameters:
    ///   - clock: Where the time comes from: the system clock in the app, `user.clock` under the
    ///     conformance kit.
    ///   - initial: The token the app has already (from a login), or `nil`: the first caller
    ///     refreshes.
    ///   - refreshTimeout: How long a `provideCredentials` caller waits for a refresh.
    ///   - refresh: Makes a new token from the previous one (`nil` when there was none); called
    ///     once per expiry, never twice at once.
    ///   - credentials: The answer's values from a token, for the fields the step asks
    ///     (`interactionData.inputFieldIds`); an `IdpSdkError` it throws is the answer as is.
    public convenience init(clock: any IdpClock = SystemClock(), initial: CachedToken<Token>? = nil, refreshTimeout: Duration = .seconds(30),
                            refresh: @escaping @Sendable (CachedToken<Token>?) async throws -> CachedToken<Token>,
                            credentials: @escaping @Sendable (Token, IdpSdkInteractionData) throws -> [String: String]) {
        self.init(clock: clock, initial: initial, refreshTimeout: refreshTimeout, refresh: .async(refresh), credentials: credentials)
    }

    /// A cache whose refresh is synchronous: it runs on the SDK thread that found the token
    /// expired (the others wait), or on a thread of its own when ``token()`` starts it.
    /// - Parameters:
    ///   - clock: Where the time comes from.
    ///   - initial: The token the app has already, or `nil`.
    ///   - refreshTimeout: How long a caller that did not start the refresh waits for it.
    ///   - refreshSynchronously: Makes a new token from the previous one; it may block its thread.
    ///   - credentials: The answer's values from a token.
    public convenience init(clock: any IdpClock = SystemClock(), initial: CachedToken<Token>? = nil, refreshTimeout: Duration = .seconds(30),
                            refreshSynchronously: @escaping @Sendable (CachedToken<Token>?) throws -> CachedToken<Token>,
                            credentials: @escaping @Sendable (Token, IdpSdkInteractionData) throws -> [String: String]) {
        self.init(clock: clock, initial: initial, refreshTimeout: refreshTimeout, refresh: .blocking(refreshSynchronously), credentials: credentials)
    }

    private init(clock: any IdpClock, initial: CachedToken<Token>?, refreshTimeout: Duration, refresh: Refresh,
                 credentials: @escaping @Sendable (Token, IdpSdkInteractionData) throws -> [String: String]) {
        self.clock = clock
        self.refreshTimeout = refreshTimeout
        self.refresh = refresh
        self.credentials = credentials
        machine = LockedValue(TokenCacheMachine(initial))
    }

    /// The step's values from the cached token; see the type's overview for when it waits.
    /// - Parameter interactionData: The step the SDK asks for.
    /// - Returns: The values, or the refresh's error, or why there is no token.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = clock.now()
        if let answered = reading.answer(at: now, interactionData, current: { heldForReading() }) { return answered }
        return waitingAnswer(at: now, interactionData)
    }

    /// The answer when this thread's view holds no valid token: the token, or the refresh's outcome.
    @inline(never)
    private func waitingAnswer(at now: Date, _ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if let kept = plantedKeptFailure() { return answer(.failed(kept), interactionData) }
        guard !BlockingWait.blockingIsUnsafeHere else { return BlockingWait.refusal("TokenCacheProvider") }
        let flowId = interactionData.flowId
        defer { waitingFlows.unregister(flowId) }
        while true {
            let waiter = Waiter()
            waitingFlows.register(waiter, for: flowId)
            let outcome: Outcome
            if let own = plantedOwnRefresh() {
                outcome = own
            } else {
                switch ask(at: now, waiter) {
                case .use(let cached):
                    return answer(.token(cached), interactionData)
                case .wait:
                    outcome = waiter.wait(timeout: refreshTimeout, timedOut: .timedOut)
                case .refresh(let flight, let previous):
                    runRefresh(from: previous, onThisThread: true) { self.land(flight, $0) }
                    outcome = waiter.wait(timeout: refreshTimeout, timedOut: .timedOut)
                }
            }
            if case .lookAgain = outcome { continue }
            return answer(outcome, interactionData)
        }
    }

    /// The token, refreshed first when it is missing or expired (once for every caller waiting
    /// then), for app code in a task: it suspends while it waits and never blocks a thread.
    /// - Returns: A token that had not expired when the call began or that the refresh returned.
    /// - Throws: What the refresh threw, unchanged; `CancellationError` when the task is
    ///   cancelled while it waits (the refresh goes on for the others);
    ///   ``CredentialProviderError/Code/cleared`` (an `IdpSdkError`) when ``clear()`` cut the
    ///   refresh off.
    public func token() async throws -> Token {
        let now = clock.now()
        if let kept = plantedKeptFailure() { throw kept }
        while true {
            let waiter = Waiter()
            let outcome: Outcome
            if let own = plantedOwnRefresh() {
                outcome = own
            } else {
                switch ask(at: now, waiter) {
                case .use(let cached):
                    return cached.token
                case .wait:
                    outcome = await waiter.value(cancelled: .cancelled)
                case .refresh(let flight, let previous):
                    runRefresh(from: previous, onThisThread: false) { self.land(flight, $0) }
                    outcome = await waiter.value(cancelled: .cancelled)
                }
            }
            switch outcome {
            case .token(let cached): return cached.token
            case .failed(let error): throw error
            case .cancelled: throw CancellationError()
            case .lookAgain: continue
            case .cleared, .timedOut: throw Self.error(outcome)
            }
        }
    }

    /// Ends the wait of the flow's SDK thread, if it waits for a refresh: it answers
    /// ``CredentialProviderError/Code/cancelled``, and the refresh goes on for the others. The
    /// SDK calls this when a flow ends (a cancel, a timeout) while its provider call runs.
    /// - Parameter flowId: The flow that ended.
    public func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
        waitingFlows.cancel(flowId)
    }

    /// Nothing to do: a flow that ends after its call keeps nothing here.
    /// - Parameters:
    ///   - flowId: The flow that ended.
    ///   - result: How it ended.
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {}

    /// Puts `token` in the cache (after a login). A refresh in flight is superseded: its waiters
    /// get `token`, and what it returns is not stored.
    /// - Parameter token: The new token.
    public func store(_ token: CachedToken<Token>) {
        let waiters = changing { $0.store(token) }
        for waiter in waiters { waiter.settle(.token(token)) }
    }

    /// Forgets the token (a logout). A refresh in flight is cut off: what it returns is never
    /// stored, and its waiters answer ``CredentialProviderError/Code/cleared``.
    public func clear() {
        let waiters = changing { $0.clear() }
        for waiter in waiters { waiter.settle(.cleared) }
    }

    /// Whether a refresh is in flight.
    public var isRefreshing: Bool { machine.withLock { $0.refreshing } }

    /// How many callers wait for the refresh in flight (0 when none is).
    public var waitingForRefresh: Int { machine.withLock { $0.waiting } }

    /// Names the state, never the token.
    public var description: String {
        let state = machine.withLock { machine -> String in
            switch machine.state {
            case .empty: "empty"
            case .holding(let cached): "holding a token until \(cached.expires)"
            case .refreshing(_, _, let waiters): "refreshing, \(waiters.count) waiting"
            }
        }
        return "TokenCacheProvider(\(state))"
    }

    /// The held token's expiry, its answer and the generation, read under the lock, for a
    /// thread's view.
    private func heldForReading() -> (generation: Int, expires: Date, answer: TokenCacheReading.Answer?) {
        let (held, generation) = machine.withLock { ($0.held, reading.generation) }
        guard let held else { return (generation, .distantPast, nil) }
        let credentials = self.credentials, token = held.token
        return (generation, held.expires, { @Sendable data in Self.answer { try credentials(token, data) } })
    }

    /// What the caller does next, asked under the lock.
    private func ask(at now: Date, _ waiter: Waiter) -> TokenCacheMachine<Token, Waiter>.Step {
        changing { $0.ask(at: now, waiter: waiter) }
    }

    /// Runs `body` on the machine under the lock and advances the generation, so every thread's
    /// view is brought up to date at its next call.
    func changing<Result>(_ body: (inout TokenCacheMachine<Token, Waiter>) -> Result) -> Result {
        machine.withLock { machine in
            defer { reading.changed() }
            return body(&machine)
        }
    }

    /// Records the end of refresh `flight` and then wakes its waiters.
    private func land(_ flight: UInt64, _ outcome: Outcome) {
        let refreshed: CachedToken<Token>? = if case .token(let token) = outcome { token } else { nil }
        if plantedLanding(flight, outcome, refreshed: refreshed) { return }
        let waiters = changing { $0.land(flight, refreshed: refreshed) }
        for waiter in waiters { waiter.settle(outcome) }
    }

    /// Runs the refresh from `previous` and hands its outcome to `deliver`: an async refresh in a
    /// task of its own; a synchronous one on the calling thread when `onThisThread` (an SDK
    /// thread), else on a thread of its own.
    func runRefresh(from previous: CachedToken<Token>?, onThisThread: Bool, _ deliver: @escaping @Sendable (Outcome) -> Void) {
        switch refresh {
        case .async(let body):
            Task {
                do { deliver(.token(try await body(previous))) } catch { deliver(.failed(error)) }
            }
        case .blocking(let body):
            let run: @Sendable () -> Void = {
                do { deliver(.token(try body(previous))) } catch { deliver(.failed(error)) }
            }
            if onThisThread { run() } else { Thread.detachNewThread(run) }
        }
    }

    /// The answer `credentials` gives: its values, or what it threw.
    private static func answer(_ credentials: () throws -> [String: String]) -> IdpSdkProvideCredentialsResult {
        do {
            return .init(credentials: try credentials())
        } catch let error as IdpSdkError {
            return .init(error: error)
        } catch {
            return .init(error: CredentialProviderError.make(.answerFailed, "TokenCacheProvider's credentials threw: \(error)"))
        }
    }

    /// The answer to `data` for `outcome`.
    private func answer(_ outcome: Outcome, _ data: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        switch outcome {
        case .token(let cached):
            return Self.answer { try credentials(cached.token, data) }
        case .failed(let error as IdpSdkError):
            return .init(error: error)
        case .failed(let error):
            return .init(error: CredentialProviderError.make(.answerFailed, "TokenCacheProvider's refresh threw: \(error)"))
        case .cleared, .timedOut, .cancelled, .lookAgain:
            return .init(error: Self.error(outcome))
        }
    }

    private static func error(_ outcome: Outcome) -> IdpSdkError {
        switch outcome {
        case .timedOut: CredentialProviderError.make(.timedOut, "TokenCacheProvider's refresh did not end in time")
        case .cancelled: CredentialProviderError.make(.cancelled, "the wait for TokenCacheProvider's refresh was cancelled: its flow or task ended")
        default: CredentialProviderError.make(.cleared, "the token was cleared while it was refreshed")
        }
    }
}
