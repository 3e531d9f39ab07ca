import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk

// The calibration's ordering bugs, written with the controlled primitives (`LockedValue`,
// `ConditionLockedValue`, `ControlledLock`, the kit's clock): data-race free, each a provider whose
// critical sections are right one by one and wrong in some order, beside its fix. The kit's
// controlled phase must find each broken one and pass each fix. Every port reads the time from
// the kit's clock and talks to `RotatingGrantServer`, whose refresh grants are single-use: a
// second redemption of one grant revokes the login, and the next answer is an error.

/// The shapes, broken and fixed, by name.
enum ControlledShapes {
    typealias Make = @Sendable (ProviderConformanceKit.User) -> any IdpSdkInteractionInterface

    static let broken: [(name: String, make: Make)] = [
        ("check-then-refresh", { CheckThenRefreshProvider($0, fixed: false) }),
        ("a per-instance lock over a process-wide store", { PerInstanceLockProvider($0, fixed: false) }),
        ("waiters woken before the store is written", { WokenBeforeStoreProvider($0, fixed: false) }),
        ("a dropped second caller", { DroppedCallerProvider($0, fixed: false) }),
        ("a lock-order inversion", { GateInversionProvider($0, fixed: false) }),
    ]

    static let fixed: [(name: String, make: Make)] = [
        ("check-then-refresh, one critical section", { CheckThenRefreshProvider($0, fixed: true) }),
        ("a process-wide lock over a process-wide store", { PerInstanceLockProvider($0, fixed: true) }),
        ("waiters woken after the store is written", { WokenBeforeStoreProvider($0, fixed: true) }),
        ("every waiting caller answered", { DroppedCallerProvider($0, fixed: true) }),
        ("one lock order", { GateInversionProvider($0, fixed: true) }),
    ]
}

/// A login for `user` at the kit's clock's time, valid for an hour of it; `nil` for a user
/// without credentials.
private func login(_ user: ProviderConformanceKit.User) -> RotatingGrantServer.Session? {
    user.credentials.isEmpty ? nil : RotatingGrantServer.shared.login(now: user.clock.now(), lifetime: 3600)
}

/// BROKEN ON PURPOSE (unless `fixed`), the shape of auth0/Auth0.swift issue #457: a caller reads the
/// instance's session under its lock and, if it has expired, redeems its grant and stores the new
/// session under the lock again; two callers that both find it expired both redeem, and the second
/// redemption revokes the login. Fixed: a `ControlledLock` makes check → redeem → store one step.
final class CheckThenRefreshProvider: IdpSdkInteractionInterface, Sendable {
    private let user: ProviderConformanceKit.User
    private let session: LockedValue<RotatingGrantServer.Session?>
    private let renewal: ControlledLock?

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        session = LockedValue(login(user))
        renewal = fixed ? ControlledLock(name: "CheckThenRefreshProvider.renewal") : nil
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        renewal?.lock()
        defer { renewal?.unlock() }
        let now = user.clock.now()
        guard let stored = session.withLock({ $0 }) else { return answer(interactionData, for: user, with: .failure(.unknownGrant), at: now) }
        guard stored.expires <= now else { return answer(interactionData, for: user, with: .success(stored), at: now) }
        let renewed = RotatingGrantServer.shared.redeem(stored.grant, now: now, lifetime: 3600)
        if case .success(let new) = renewed { session.withLock { $0 = new } }
        return answer(interactionData, for: user, with: renewed, at: now)
    }
}

/// The keychain of ``PerInstanceLockProvider``: one per process, by account.
private let controlledKeychain = LockedValue<[String: RotatingGrantServer.Session]>([:])

/// BROKEN ON PURPOSE (unless `fixed`), the shape of Auth0.swift's `CredentialsManager` before
/// PR #1048: each instance renews under a lock of its own, but the session lives in a keychain
/// shared by every instance; two instances that find it expired both redeem it. Fixed: one
/// process-wide lock, so the second instance finds the renewed session.
final class PerInstanceLockProvider: IdpSdkInteractionInterface, Sendable {
    private static let processLock = ControlledLock(name: "PerInstanceLockProvider.process")
    private let user: ProviderConformanceKit.User
    private let lock: ControlledLock

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        lock = fixed ? Self.processLock : ControlledLock(name: "PerInstanceLockProvider.instance")
        // The app logged in before: the first instance of an account stores its session.
        if let session = login(user) { controlledKeychain.withLock { if $0[account(user)] == nil { $0[account(user)] = session } } }
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        lock.withLock {
            let key = account(user)
            let now = user.clock.now()
            guard let stored = controlledKeychain.withLock({ $0[key] }) else { return answer(interactionData, for: user, with: .failure(.unknownGrant), at: now) }
            guard stored.expires <= now else { return answer(interactionData, for: user, with: .success(stored), at: now) }
            let renewed = RotatingGrantServer.shared.redeem(stored.grant, now: now, lifetime: 3600)
            if case .success(let new) = renewed { controlledKeychain.withLock { $0[key] = new } }
            return answer(interactionData, for: user, with: renewed, at: now)
        }
    }
}

/// The state of the single-flight shapes: the session, whether a refresh is in flight, and the
/// tickets of the callers waiting for it.
struct SingleFlightState {
    var session: RotatingGrantServer.Session?
    var refreshing = false
    var nextTicket = 0
    var waiting: [Int] = []
    /// The tickets the refresh in flight will answer (the dropped-caller shape: taken at its start).
    var seenAtStart: [Int] = []
    var answered: Set<Int> = []
}

/// A single-flight shape: a provider over a ``SingleFlightPort``, made with its user and whether it
/// is the fixed variant.
class SingleFlightShape: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: its one stored property is a `let` of a Sendable type; subclasses add none.
    private let port: SingleFlightPort

    init(_ user: ProviderConformanceKit.User, fixed: Bool) { port = SingleFlightPort(user, fixed: fixed) }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        respond(to: interactionData, port: port)
    }

    /// The shape's answer; each subclass gives its own.
    func respond(to interactionData: IdpSdkInteractionData, port: SingleFlightPort) -> IdpSdkProvideCredentialsResult {
        .init(error: IdpSdkError("Port", 9, "a single-flight shape without an answer"))
    }
}

/// What every single-flight shape keeps: its user, its state under a lock with a condition, and
/// whether it is the fixed one.
struct SingleFlightPort: Sendable {
    let user: ProviderConformanceKit.User
    let state: ConditionLockedValue<SingleFlightState>
    let fixed: Bool

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        self.fixed = fixed
        state = ConditionLockedValue(SingleFlightState(session: login(user)))
    }
}

/// What a caller of the single-flight shapes does after its first look at the session.
private enum Look {
    case use(RotatingGrantServer.Session)
    case refresh(RotatingGrantServer.Session)
    case failed(RotatingGrantServer.Refusal)
}

/// BROKEN ON PURPOSE (unless `fixed`): a single-flight refresh whose refresher clears its
/// "refreshing" flag and wakes the waiters in one critical section and stores the new session in
/// the next; a waiter that runs in between finds the old, expired session and no refresh in flight,
/// and redeems the spent grant. Fixed: the session is stored and the flag cleared in one critical
/// section, then the waiters are woken.
final class WokenBeforeStoreProvider: SingleFlightShape, @unchecked Sendable {
    override func respond(to interactionData: IdpSdkInteractionData, port: SingleFlightPort) -> IdpSdkProvideCredentialsResult {
        let (user, state, fixed) = (port.user, port.state, port.fixed)
        let now = user.clock.now()
        let look: Look = state.wait { state, _ in
            if state.refreshing { return .wait(timeout: .seconds(2)) }
            guard let session = state.session else { return .done(.failed(.unknownGrant)) }
            guard session.expires <= now else { return .done(.use(session)) }
            state.refreshing = true
            return .done(.refresh(session))
        }
        switch look {
        case .use(let session): return answer(interactionData, for: user, with: .success(session), at: now)
        case .failed(let refusal): return answer(interactionData, for: user, with: .failure(refusal), at: now)
        case .refresh(let old):
            let renewed = RotatingGrantServer.shared.redeem(old.grant, now: now, lifetime: 3600)
            let new = try? renewed.get()
            if fixed {
                state.withLock { state in
                    if let new { state.session = new }
                    state.refreshing = false
                }
                state.broadcast()
            } else {
                state.withLock { $0.refreshing = false }
                state.broadcast()
                if let new { state.withLock { $0.session = new } }
            }
            return answer(interactionData, for: user, with: renewed, at: now)
        }
    }
}

/// BROKEN ON PURPOSE (unless `fixed`), the shape of a single-flight refresh that keeps its
/// waiters' tickets when the refresh starts: a caller that comes while the refresh is in flight
/// registers a ticket and waits for it to be answered, but the refresher answers only the tickets
/// it saw when it started, so the later caller waits until its wait times out and answers an error.
/// Fixed: the refresher answers every ticket registered when it ends.
final class DroppedCallerProvider: SingleFlightShape, @unchecked Sendable {
    override func respond(to interactionData: IdpSdkInteractionData, port: SingleFlightPort) -> IdpSdkProvideCredentialsResult {
        let (user, state, fixed) = (port.user, port.state, port.fixed)
        let now = user.clock.now()
        var ticket: Int?
        let look: Look? = state.wait { state, wake in
            switch wake {
            case .first:
                guard let session = state.session else { return .done(.failed(.unknownGrant)) }
                if state.refreshing {
                    ticket = state.nextTicket
                    state.nextTicket += 1
                    state.waiting.append(state.nextTicket - 1)
                    return .wait(timeout: .seconds(2))
                }
                guard session.expires <= now else { return .done(.use(session)) }
                state.refreshing = true
                state.seenAtStart = state.waiting
                return .done(.refresh(session))
            case .woken:
                guard let ticket, state.answered.remove(ticket) != nil, let session = state.session else { return .wait(timeout: .seconds(2)) }
                return .done(.use(session))
            case .timedOut:
                return .done(nil)
            }
        }
        switch look {
        case nil: return .init(error: IdpSdkError("Port", 3, "timed out waiting for the refresh in flight"))
        case .use(let session): return answer(interactionData, for: user, with: .success(session), at: now)
        case .failed(let refusal): return answer(interactionData, for: user, with: .failure(refusal), at: now)
        case .refresh(let old):
            let renewed = RotatingGrantServer.shared.redeem(old.grant, now: now, lifetime: 3600)
            state.withLock { state in
                if case .success(let new) = renewed { state.session = new }
                state.refreshing = false
                let answering = fixed ? state.waiting : state.seenAtStart
                state.answered.formUnion(answering)
                state.waiting.removeAll { answering.contains($0) }
            }
            state.broadcast()
            return answer(interactionData, for: user, with: renewed, at: now)
        }
    }
}

/// BROKEN ON PURPOSE (unless `fixed`): a lock-order inversion between the keychain's lock and a
/// refresh gate (a flag other callers wait on). A reader holds the keychain's lock while it waits
/// for the gate, so that it never reads a session half renewed; the refresher holds the gate while
/// it takes the keychain's lock to store the new session. A reader and a refresher that each take
/// their first one wait for each other for ever. Fixed: a reader waits for the gate before it takes
/// the keychain's lock (the gate, then the lock, in both). Either refresher reads the session again
/// once it holds the gate.
final class GateInversionProvider: IdpSdkInteractionInterface, Sendable {
    private let user: ProviderConformanceKit.User
    private let keychain: LockedValue<RotatingGrantServer.Session?>
    /// Whether a refresh holds the gate.
    private let gate = ConditionLockedValue(false)
    private let fixed: Bool

    init(_ user: ProviderConformanceKit.User, fixed: Bool) {
        self.user = user
        self.fixed = fixed
        keychain = LockedValue(login(user))
    }

    private func waitForGate() {
        gate.wait { busy, _ in busy ? .wait(timeout: nil) : .done(()) }
    }

    private func read() -> RotatingGrantServer.Session? {
        if fixed {
            waitForGate()
            return keychain.withLock { $0 }
        }
        return keychain.withLock { session in
            waitForGate()
            return session
        }
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = user.clock.now()
        guard let stored = read() else { return answer(interactionData, for: user, with: .failure(.unknownGrant), at: now) }
        guard stored.expires <= now else { return answer(interactionData, for: user, with: .success(stored), at: now) }
        gate.wait { busy, _ -> ConditionLockedValue<Bool>.Decision<Void> in
            if busy { return .wait(timeout: nil) }
            busy = true
            return .done(())
        }
        defer {
            gate.withLock { $0 = false }
            gate.broadcast()
        }
        // Another refresh may have renewed it meanwhile.
        let current = keychain.withLock { $0 } ?? stored
        guard current.expires <= now else { return answer(interactionData, for: user, with: .success(current), at: now) }
        let renewed = RotatingGrantServer.shared.redeem(current.grant, now: now, lifetime: 3600)
        if case .success(let new) = renewed { keychain.withLock { $0 = new } }
        return answer(interactionData, for: user, with: renewed, at: now)
    }
}
