import CredentialProviders
import Foundation
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

/// A login step for alice.
private let step = IdpSdkInteractionData(
    inputFields: [IdpSdkInputField(id: "username", label: nil, isSecret: false), IdpSdkInputField(id: "password", label: nil, isSecret: true)],
    flowId: IdpSdkFlowID(rawValue: 1), step: 1, attempt: 1, tenantId: "demo", clientId: "KssIdpLogin", userId: "alice",
    traceParent: nil, previousError: nil)

/// alice's values from token generation `token`.
@Sendable private func values(_ token: Int, _ data: IdpSdkInteractionData) -> [String: String] {
    ["username": "alice", "password": "token-\(token)"]
}

/// What a test's refresh does and counts: each refresh is numbered; it waits until `release`
/// says go (checked every millisecond, for at most 600 s), then returns the next generation, an
/// hour long on `clock`, or throws what `failure` gives for its number.
private final class Refresher: Sendable {
    let clock: ManualClock
    private let count = LockedValue(0)
    private let release: @Sendable () -> Bool
    private let failure: @Sendable (Int) -> (any Error)?

    init(clock: ManualClock, release: @escaping @Sendable () -> Bool = { true }, failure: @escaping @Sendable (Int) -> (any Error)? = { _ in nil }) {
        self.clock = clock
        self.release = release
        self.failure = failure
    }

    var refreshes: Int { count.withLock { $0 } }
    /// Opens when the first refresh begins.
    let began = Gate()

    func blocking(_ previous: CachedToken<Int>?) throws -> CachedToken<Int> {
        let number = count.withLock { $0 += 1; return $0 }
        began.open()
        let deadline = ContinuousClock.now + .seconds(600)
        while !release(), ContinuousClock.now < deadline { usleep(1_000) }
        if let error = failure(number) { throw error }
        return CachedToken((previous?.token ?? 0) + 1, expires: clock.now().addingTimeInterval(3_600))
    }

    func async(_ previous: CachedToken<Int>?) async throws -> CachedToken<Int> {
        let number = count.withLock { $0 += 1; return $0 }
        began.open()
        let deadline = ContinuousClock.now + .seconds(600)
        while !release(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        if let error = failure(number) { throw error }
        return CachedToken((previous?.token ?? 0) + 1, expires: clock.now().addingTimeInterval(3_600))
    }
}

/// A cache over `refresher` starting from generation 0, valid for a minute, async or synchronous.
private func cache(_ refresher: Refresher, synchronous: Bool, refreshTimeout: Duration = .seconds(600),
                   planted: PlantedBugSwitch = PlantedBugSwitch()) -> TokenCacheProvider<Int> {
    let initial = CachedToken(0, expires: refresher.clock.now().addingTimeInterval(60))
    return PlantedBugSwitch.$inTask.withValue(planted) {
        synchronous
            ? TokenCacheProvider(clock: refresher.clock, initial: initial, refreshTimeout: refreshTimeout,
                                 refreshSynchronously: { try refresher.blocking($0) }, credentials: values)
            : TokenCacheProvider(clock: refresher.clock, initial: initial, refreshTimeout: refreshTimeout,
                                 refresh: { try await refresher.async($0) }, credentials: values)
    }
}

/// A cache whose token has expired, whose refreshes wait until `gate` is set and fail as
/// `failure` says.
private func expiredWithHeldRefresh(synchronous: Bool = false, refreshTimeout: Duration = .seconds(600),
                                    failure: @escaping @Sendable (Int) -> (any Error)? = { _ in nil })
    -> (gate: LockedValue<Bool>, refresher: Refresher, provider: TokenCacheProvider<Int>) {
    let clock = ManualClock()
    let gate = LockedValue(false)
    let refresher = Refresher(clock: clock, release: { gate.withLock { $0 } }, failure: failure)
    let provider = cache(refresher, synchronous: synchronous, refreshTimeout: refreshTimeout)
    clock.advance(by: .seconds(61))
    return (gate, refresher, provider)
}

@Suite("TokenCacheProvider: one refresh for every caller, failures unchanged and not kept, a logout not undone", .serialized, .heavy)
struct TokenCacheProviderTests {
    /// 1,000 OS threads each answer once before the expiry and once after it (the clock moves
    /// when all have answered once). Half make their second call at once, racing for the expired
    /// token; the other half only once a refresh has begun, so they meet it in flight however
    /// the threads are scheduled. The refresh waits until 999 callers wait for it, or until a
    /// second refresh began (a cache without single flight).
    static func thousandCallers(synchronous: Bool, planted: PlantedBugSwitch) async throws -> (refreshes: Int, answers: [[String?]]) {
        let clock = ManualClock()
        let made = LockedValue<(provider: TokenCacheProvider<Int>, refresher: Refresher)?>(nil)
        let refresher = Refresher(clock: clock, release: {
            guard let (provider, refresher) = made.withLock({ $0 }) else { return false }
            return provider.waitingForRefresh >= 999 || refresher.refreshes >= 2
        })
        let provider = cache(refresher, synchronous: synchronous, planted: planted)
        made.withLock { $0 = (provider, refresher) }
        let answered = Barrier(parties: 1_000), expired = Barrier(parties: 1_000)
        let answers = try #require(await onOSThreads(1_000) { index in
            let before = provider.provideCredentials(step).credentials?["password"]
            answered.arriveAndWait()
            if index == 0 { clock.advance(by: .seconds(61)) }
            expired.arriveAndWait()
            if index >= 500 { refresher.began.wait(timeout: .seconds(600)) }
            return [before, provider.provideCredentials(step).credentials?["password"]]
        })
        return (refresher.refreshes, answers)
    }

    @Test("1,000 concurrent callers across an expiry cause exactly one refresh, and all get its token", arguments: [false, true])
    func thousandCallersOneRefresh(synchronous: Bool) async throws {
        let (refreshes, answers) = try await Self.thousandCallers(synchronous: synchronous, planted: PlantedBugSwitch())
        #expect(refreshes == 1)
        #expect(answers.allSatisfy { $0 == ["token-0", "token-1"] }, "\(Set(answers.map { "\($0)" }))")
    }

    #if DEBUG
    @Test("planted: with no single flight, the same 1,000 callers refresh more than once")
    func thousandCallersWithoutSingleFlight() async throws {
        let (refreshes, _) = try await Self.thousandCallers(synchronous: false, planted: PlantedBugSwitch(.providersTokenRefreshWithoutSingleFlight))
        #expect(refreshes > 1)
    }
    #endif

    @Test("a failed refresh reaches every waiter unchanged, and the next caller refreshes again", arguments: [false, true])
    func failureToAllNotKept(synchronous: Bool) async throws {
        let down = IdpSdkError("Port", 7, "the authorization server is down")
        let (gate, refresher, provider) = expiredWithHeldRefresh(synchronous: synchronous, failure: { $0 == 1 ? down : nil })
        // Eight SDK threads and a task ask while the refresh is in flight
        async let threads = onOSThreads(8) { _ in provider.provideCredentials(step).error }
        async let task: (any Error)? = { () async -> (any Error)? in
            do { _ = try await provider.token(); return nil } catch { return error }
        }()
        #expect(await eventually { provider.waitingForRefresh == 9 })
        gate.withLock { $0 = true }
        let errors = try #require(await threads)
        #expect(errors.allSatisfy { $0 == down }, "\(errors)")
        #expect(await task as? IdpSdkError == down)
        #expect(refresher.refreshes == 1)
        // Nothing failed is kept: the next caller refreshes again and gets the new token
        #expect(await OSThreads.run { provider.provideCredentials(step).credentials?["password"] } == "token-1")
        #expect(refresher.refreshes == 2)
    }

    @Test("an error that is not an IdpSdkError: token() rethrows it as is, provideCredentials names it in answerFailed")
    func foreignErrorUnchangedForTasks() async throws {
        let clock = ManualClock()
        let refresher = Refresher(clock: clock, failure: { _ in URLError(.notConnectedToInternet) })
        let provider = cache(refresher, synchronous: false)
        clock.advance(by: .seconds(61))
        await #expect(throws: URLError.self) { _ = try await provider.token() }
        let answer = await OSThreads.run { provider.provideCredentials(step).error }
        #expect(answer?.credentialProviderCode == .answerFailed)
        #expect(answer?.errorDescription.contains("NSURLErrorDomain") == true, "\(String(describing: answer))")
    }

    @Test("clear() during a refresh is not undone: the waiters answer cleared, and the refreshed token is never stored", arguments: [false, true])
    func clearNotUndone(synchronous: Bool) async throws {
        let (gate, refresher, provider) = expiredWithHeldRefresh(synchronous: synchronous)
        async let waiter = OSThreads.run { provider.provideCredentials(step).error }
        #expect(await eventually { provider.waitingForRefresh == 1 && refresher.refreshes == 1 })
        provider.clear()
        gate.withLock { $0 = true }
        #expect(await waiter?.credentialProviderCode == .cleared)
        #expect(await eventually { !provider.isRefreshing })
        #expect(provider.description == "TokenCacheProvider(empty)")
        // The next caller starts from nothing: refresh 2 from no token, generation 1
        #expect(await OSThreads.run { provider.provideCredentials(step).credentials?["password"] } == "token-1")
        #expect(refresher.refreshes == 2)
    }

    @Test("store() during a refresh supersedes it: its waiters get the stored token, what the refresh returns is dropped")
    func storeSupersedes() async throws {
        let (gate, refresher, provider) = expiredWithHeldRefresh()
        async let waiter = OSThreads.run { provider.provideCredentials(step).credentials?["password"] }
        #expect(await eventually { provider.waitingForRefresh == 1 })
        provider.store(CachedToken(42, expires: refresher.clock.now().addingTimeInterval(3_600)))
        #expect(await waiter == "token-42")
        gate.withLock { $0 = true }
        #expect(await eventually { refresher.refreshes == 1 && !provider.isRefreshing })
        #expect(try await provider.token() == 42)
    }

    @Test("200 tasks waiting in token() block no thread: the refresh, itself a task, runs while they wait")
    func tasksNeverBlock() async throws {
        let clock = ManualClock()
        let box = LockedValue<TokenCacheProvider<Int>?>(nil)
        // The refresh goes on only once all 200 wait: were they blocking pool threads, it could not run
        let refresher = Refresher(clock: clock, release: { box.withLock { $0 }?.waitingForRefresh == 200 })
        let provider = cache(refresher, synchronous: false)
        box.withLock { $0 = provider }
        clock.advance(by: .seconds(61))
        let tokens = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 { group.addTask { try await provider.token() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(tokens.count == 200 && tokens.allSatisfy { $0 == 1 })
        #expect(refresher.refreshes == 1)
    }

    @Test("provideCredentials in a task answers from a valid token, and refuses where it would wait, starting no refresh")
    func refusesInsideATask() async {
        let clock = ManualClock()
        let refresher = Refresher(clock: clock)
        let provider = cache(refresher, synchronous: false)
        #expect(provider.provideCredentials(step).credentials?["password"] == "token-0")
        clock.advance(by: .seconds(61))
        #expect(provider.provideCredentials(step).error?.credentialProviderCode == .calledWhereBlockingIsUnsafe)
        #expect(!provider.isRefreshing && refresher.refreshes == 0)
    }

    @Test("a cancelled token() throws CancellationError, and the refresh goes on for the others")
    func cancelledWaiter() async throws {
        let (gate, refresher, provider) = expiredWithHeldRefresh()
        let cancelled = Task { try await provider.token() }
        let other = Task { try await provider.token() }
        #expect(await eventually { provider.waitingForRefresh == 2 })
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
        gate.withLock { $0 = true }
        #expect(try await other.value == 1)
        #expect(refresher.refreshes == 1)
    }

    @Test("a flow that ends while its SDK thread waits for a refresh ends the wait at once (cancelled); the refresh goes on and is stored")
    func endedFlowEndsItsWait() async throws {
        let (gate, refresher, provider) = expiredWithHeldRefresh()
        async let waiter = OSThreads.run { provider.provideCredentials(step).error }
        #expect(await eventually { provider.waitingForRefresh == 1 })
        provider.flowEndedDuringCall(step.flowId)
        // The refresh is still held: only the flow's end can have ended the wait
        #expect(await waiter?.credentialProviderCode == .cancelled)
        #expect(provider.isRefreshing)
        gate.withLock { $0 = true }
        #expect(await eventually { !provider.isRefreshing })
        #expect(try await provider.token() == 1 && refresher.refreshes == 1)
    }

    @Test("a caller that waits longer than refreshTimeout answers timedOut; the refresh goes on and its token is stored")
    func waiterTimesOut() async throws {
        let (gate, refresher, provider) = expiredWithHeldRefresh(refreshTimeout: .milliseconds(20))
        // The refresh is held until the wait has ended, so only the timeout can end it
        let answer = await OSThreads.run { provider.provideCredentials(step).error }
        #expect(answer?.credentialProviderCode == .timedOut)
        gate.withLock { $0 = true }
        #expect(await eventually { !provider.isRefreshing })
        #expect(try await provider.token() == 1 && refresher.refreshes == 1)
    }

    @Test("a synchronous refresh runs on the SDK thread that found the token expired; started by token(), on a thread outside any task")
    func synchronousRefreshThreads() async throws {
        let clock = ManualClock()
        let threads = LockedValue<[(caller: Bool, inTask: Bool)]>([])
        let callerThread = LockedValue<pthread_t?>(nil)
        let provider = TokenCacheProvider<Int>(clock: clock, refreshSynchronously: { previous in
            threads.withLock { $0.append((pthread_equal(pthread_self(), callerThread.withLock { $0 } ?? pthread_self()) != 0 && callerThread.withLock { $0 } != nil, withUnsafeCurrentTask { $0 != nil })) }
            return CachedToken((previous?.token ?? 0) + 1, expires: clock.now().addingTimeInterval(60))
        }, credentials: values)
        let answer = await OSThreads.run {
            callerThread.withLock { $0 = pthread_self() }
            return provider.provideCredentials(step).credentials?["password"]
        }
        #expect(answer == "token-1")
        clock.advance(by: .seconds(61))
        #expect(try await provider.token() == 2)
        let seen = threads.withLock { $0 }
        #expect(seen.count == 2)
        #expect(seen.first?.caller == true && seen.last?.caller == false)
        #expect(seen.allSatisfy { !$0.inTask })
    }
}
