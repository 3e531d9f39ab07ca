import Dispatch
import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk

// The calibration's ordering bugs written as app teams write them: an actor for the token, a Task
// and a `DispatchSemaphore` to bridge into the synchronous `provideCredentials`, a continuation, an
// `NSLock`, an `NSCondition`. None uses a house primitive; the kit's controlled phase must find
// each broken one as it is and pass each fix. Every port reads the time from the kit's clock and
// talks to `RotatingGrantServer`, whose refresh grants are single-use: a second redemption of one
// grant revokes the login, and the next answer is an error.

/// The shapes, broken and fixed, by name.
enum UserWrittenShapes {
    typealias Make = @Sendable (ProviderConformanceKit.User) -> any IdpSdkInteractionInterface

    static let broken: [(name: String, make: Make)] = [
        ("a refresh per caller through an actor that awaits", { ActorRefreshProvider($0, fixed: false) }),
        ("an actor's read-modify-write across an await", { ActorReadModifyWriteProvider($0, fixed: false) }),
        ("one continuation slot shared by concurrent callers", { ContinuationSlotProvider($0, fixed: false) }),
        ("check-then-refresh under NSLock", { NSLockCheckThenRefreshProvider($0, fixed: false) }),
        ("a waiter woken early under NSCondition", { NSConditionEarlyWakeProvider($0, fixed: false) }),
        ("a Task and DispatchSemaphore bridge whose outcome slot races", { OutcomeSlotBridgeProvider($0, fixed: false) }),
    ]

    static let fixed: [(name: String, make: Make)] = [
        ("one refresh task the actor's callers share", { ActorRefreshProvider($0, fixed: true) }),
        ("an actor that changes its state in place after the await", { ActorReadModifyWriteProvider($0, fixed: true) }),
        ("a continuation per caller", { ContinuationSlotProvider($0, fixed: true) }),
        ("check and refresh in one NSLock section", { NSLockCheckThenRefreshProvider($0, fixed: true) }),
        ("waiters woken after the store under NSCondition", { NSConditionEarlyWakeProvider($0, fixed: true) }),
        ("an outcome box per call", { OutcomeSlotBridgeProvider($0, fixed: true) }),
    ]
}

/// The network call an app makes to renew its session: asynchronous (it suspends the caller's task
/// while the request is out), then the server's answer.
private func renewOverNetwork(_ grant: String, now: Date) async -> Result<RotatingGrantServer.Session, RotatingGrantServer.Refusal> {
    await Task.yield()
    return RotatingGrantServer.shared.redeem(grant, now: now, lifetime: 3600)
}

/// Runs `operation` in a new task and blocks the calling SDK thread for its result, as apps bridge
/// an async call into the synchronous callback: a result box under an `NSLock`, a
/// `DispatchSemaphore` the task signals.
private func blockingAwait<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task {
        box.set(await operation())
        done.signal()
    }
    done.wait()
    return box.value!
}

/// A value one task writes and one thread reads, behind an `NSLock`.
private final class ResultBox<T>: @unchecked Sendable {
    // Sound: `stored` is touched only with `lock` held.
    private let lock = NSLock()
    private var stored: T?

    func set(_ value: T) {
        lock.lock()
        stored = value
        lock.unlock()
    }

    var value: T? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// A login for `user` at the kit's clock's time, valid for an hour of it.
private func freshLogin(_ user: ProviderConformanceKit.User) -> RotatingGrantServer.Session {
    RotatingGrantServer.shared.login(now: user.clock.now(), lifetime: 3600)
}

// MARK: 1. A refresh per caller through an actor that awaits

/// BROKEN ON PURPOSE (unless `fixed`), the shape of firebase-ios-sdk #15474: an actor meant to
/// serialise token refreshes awaits the network inside its method; at that await the actor takes
/// the next caller, which finds the token still expired and refreshes too, redeeming the same
/// grant twice. Fixed: the first caller starts one refresh task and every caller awaits it.
final class ActorRefreshProvider: IdpSdkInteractionInterface, Sendable {
    actor TokenManager {
        private var session: RotatingGrantServer.Session
        private var refresh: Task<Result<RotatingGrantServer.Session, RotatingGrantServer.Refusal>, Never>?
        private let fixed: Bool

        init(_ session: RotatingGrantServer.Session, fixed: Bool) {
            self.session = session
            self.fixed = fixed
        }

        func validSession(now: Date) async -> Result<RotatingGrantServer.Session, RotatingGrantServer.Refusal> {
            guard session.expires <= now else { return .success(session) }
            guard fixed else {
                let renewed = await renewOverNetwork(session.grant, now: now)
                if case .success(let new) = renewed { session = new }
                return renewed
            }
            if let refresh { return await refresh.value }
            let grant = session.grant
            let task = Task { await renewOverNetwork(grant, now: now) }
            refresh = task
            let renewed = await task.value
            if case .success(let new) = renewed { session = new }
            refresh = nil
            return renewed
        }
    }

    private let user: ProviderConformanceKit.User
    private let manager: TokenManager

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        manager = TokenManager(freshLogin(user), fixed: fixed)
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = user.clock.now()
        let manager = self.manager
        let session = blockingAwait { await manager.validSession(now: now) }
        return answer(interactionData, for: user, with: session, at: now)
    }
}

// MARK: 2. An actor's read-modify-write across an await

/// BROKEN ON PURPOSE (unless `fixed`), the shape of session-ios PR #769: the actor records each
/// use of the session by copying its state, awaiting the write to disk, and storing the copy back;
/// a refresh that ran on the actor during that await is undone, and the spent grant is restored, so
/// the next refresh redeems it again. Fixed: the use is recorded on the actor's state as it is after
/// the await.
final class ActorReadModifyWriteProvider: IdpSdkInteractionInterface, Sendable {
    struct Record: Sendable {
        var session: RotatingGrantServer.Session
        var uses = 0
    }

    actor SessionStore {
        private var record: Record
        private let fixed: Bool

        init(_ session: RotatingGrantServer.Session, fixed: Bool) {
            record = Record(session: session)
            self.fixed = fixed
        }

        func validSession(now: Date) -> Result<RotatingGrantServer.Session, RotatingGrantServer.Refusal> {
            guard record.session.expires <= now else { return .success(record.session) }
            // Redeemed on the actor, with no await inside: one refresh at a time.
            let renewed = RotatingGrantServer.shared.redeem(record.session.grant, now: now, lifetime: 3600)
            if case .success(let new) = renewed { record.session = new }
            return renewed
        }

        func recordUse() async {
            var copy = record
            copy.uses += 1
            await persist(copy)
            if fixed {
                record.uses += 1
            } else {
                record = copy
            }
        }

        /// The write to disk: it suspends the caller.
        private func persist(_ record: Record) async {
            await Task.yield()
        }
    }

    private let user: ProviderConformanceKit.User
    private let store: SessionStore

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        store = SessionStore(freshLogin(user), fixed: fixed)
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = user.clock.now()
        let store = self.store
        let session = blockingAwait {
            let session = await store.validSession(now: now)
            await store.recordUse()
            return session
        }
        return answer(interactionData, for: user, with: session, at: now)
    }
}

// MARK: 3. One continuation slot shared by concurrent callers

/// BROKEN ON PURPOSE (unless `fixed`), the shape of stytch-ios PR #214: a callback-style token
/// service wrapped with `withCheckedContinuation`, the continuation kept in one property of the
/// wrapper; a second caller's continuation replaces the first's, the first caller is never resumed,
/// and its wait for an answer ends by its timeout. Fixed: a continuation per request, by request id.
final class ContinuationSlotProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `slot`, `slots` and `nextRequest` are touched only with `lock` held.
    private let user: ProviderConformanceKit.User
    private let fixed: Bool
    private let lock = NSLock()
    private var slot: CheckedContinuation<[String: String], Never>?
    private var slots: [Int: CheckedContinuation<[String: String], Never>] = [:]
    private var nextRequest = 0

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        self.fixed = fixed
    }

    /// The callback-style service: answers on a task of its own.
    private func fetchCredentials(completion: @escaping @Sendable ([String: String]) -> Void) {
        let credentials = user.credentials
        Task {
            await Task.yield()
            completion(credentials)
        }
    }

    private func credentials() async -> [String: String] {
        await withCheckedContinuation { continuation in
            lock.lock()
            let request = nextRequest
            nextRequest += 1
            if fixed { slots[request] = continuation } else { slot = continuation }
            lock.unlock()
            fetchCredentials { [self] values in
                lock.lock()
                let waiting = fixed ? slots.removeValue(forKey: request) : slot.take()
                lock.unlock()
                waiting?.resume(returning: values)
            }
        }
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<[String: String]>()
        Task {
            box.set(await credentials())
            done.signal()
        }
        guard done.wait(timeout: .now() + .seconds(5)) == .success, let values = box.value else {
            return .init(error: IdpSdkError("Port", 4, "no answer from the token service within 5 s"))
        }
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

// MARK: 4. Check-then-refresh under NSLock

/// BROKEN ON PURPOSE (unless `fixed`), check-then-refresh as it is written with an `NSLock`: the
/// expiry check and the store are each under the lock, the redemption between them is not; two
/// callers that both find the session expired both redeem its grant. Fixed: check, redeem and
/// store in one section under the lock.
final class NSLockCheckThenRefreshProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `session` is touched only with `lock` held.
    private let user: ProviderConformanceKit.User
    private let fixed: Bool
    private let lock = NSLock()
    private var session: RotatingGrantServer.Session

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        self.fixed = fixed
        session = freshLogin(user)
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = user.clock.now()
        lock.lock()
        let stored = session
        guard stored.expires <= now else {
            lock.unlock()
            return answer(interactionData, for: user, with: .success(stored), at: now)
        }
        if !fixed { lock.unlock() }
        let renewed = RotatingGrantServer.shared.redeem(stored.grant, now: now, lifetime: 3600)
        if !fixed { lock.lock() }
        if case .success(let new) = renewed { session = new }
        lock.unlock()
        return answer(interactionData, for: user, with: renewed, at: now)
    }
}

// MARK: 5. A waiter woken early under NSCondition

/// BROKEN ON PURPOSE (unless `fixed`): a single-flight refresh written with an `NSCondition`; the
/// refresher clears its "refreshing" flag and broadcasts before it stores the new session, so a
/// waiter woken in between finds the old, expired session and no refresh in flight, and redeems
/// the spent grant. Fixed: store, clear and broadcast in one section.
final class NSConditionEarlyWakeProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `session` and `refreshing` are touched only with `condition` locked.
    private let user: ProviderConformanceKit.User
    private let fixed: Bool
    private let condition = NSCondition()
    private var session: RotatingGrantServer.Session
    private var refreshing = false

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        self.fixed = fixed
        session = freshLogin(user)
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = user.clock.now()
        condition.lock()
        while refreshing { condition.wait() }
        let stored = session
        guard stored.expires <= now else {
            condition.unlock()
            return answer(interactionData, for: user, with: .success(stored), at: now)
        }
        refreshing = true
        condition.unlock()
        let renewed = RotatingGrantServer.shared.redeem(stored.grant, now: now, lifetime: 3600)
        condition.lock()
        if fixed, case .success(let new) = renewed { session = new }
        refreshing = false
        condition.broadcast()
        condition.unlock()
        if !fixed, case .success(let new) = renewed {
            condition.lock()
            session = new
            condition.unlock()
        }
        return answer(interactionData, for: user, with: renewed, at: now)
    }
}

// MARK: 6. A Task and DispatchSemaphore bridge whose outcome slot races

/// BROKEN ON PURPOSE (unless `fixed`): the bridge from the synchronous callback into an async
/// credential lookup keeps the lookup's outcome in one property of the provider, written by the
/// task and taken by the caller after the semaphore; two concurrent callers each take whatever is
/// there, and one of them finds nothing. Fixed: an outcome box per call.
final class OutcomeSlotBridgeProvider: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `outcome` is touched only with `lock` held.
    private let user: ProviderConformanceKit.User
    private let fixed: Bool
    private let lock = NSLock()
    private var outcome: [String: String]?

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        self.fixed = fixed
    }

    private func lookUp() async -> [String: String] {
        await Task.yield()
        return user.credentials
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if fixed {
            let values = blockingAwait { await self.lookUp() }
            return StaticCredentials(values).provideCredentials(interactionData)
        }
        let done = DispatchSemaphore(value: 0)
        Task {
            let values = await lookUp()
            lock.withLock { outcome = values }
            done.signal()
        }
        done.wait()
        lock.lock()
        let values = outcome.take()
        lock.unlock()
        guard let values else { return .init(error: IdpSdkError("Port", 5, "the lookup's outcome was gone")) }
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}
