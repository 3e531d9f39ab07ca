import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk

/// The MC-SDK's MasterController for one app installation (one device): Start, Restart,
/// GetAstClientData, SetAuthorisationCode, OfflineLogin, ClearIamTokenCache, ExchangeIamToken,
/// GetInformation, GetState and the tracing events, against the in-process IDP.
///
/// Its tokens never leave it, as documented: apps get a token for another service with
/// ``KSMExchangeIamTokenEvent``, which refreshes the MC's own access token once for any number of
/// concurrent callers.
///
/// ```swift
/// let masterController = MasterController(configuration: .init(idpUrl: "https://idp.example.test"))
/// let start = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
/// ```
///
/// Four ways in, as in the documents: `receive(_:) async`; `receive(_:withCompletionHandler:)` and
/// `sendEvent2MasterController(_:completion:)`, whose completions run on a Swift concurrency thread
/// (do not block it); and `postEvent(_:)`, returning an ``McFuture`` with `then`. Events the MC
/// sends on its own (``KSMStartLoginEvent``, ``KSMServerConnectionEvent``, the result of an
/// automated restart) go to the ``KSMEventListener``s registered with ``register(_:)``.
///
/// Every event's ``KsEvent/traceContext`` goes with the IDP requests it causes and comes back on
/// its result; an event without one gets a new trace.
///
/// One authorization is in flight per user identifier (the tenant and the user id, empty at
/// activation), as on a device: a second GetAstClientData for the same identifier replaces the
/// kept verifier, and a code obtained with the first then fails to exchange. Run concurrent
/// flows on separate MasterControllers, one per simulated device.
///
/// What survives an app restart lives in the configuration's ``McTokenStore``: a new
/// MasterController on the same store is the same device after a restart.
public actor MasterController {
    /// Where the MC finds the IDP and how it talks to it.
    public struct Configuration: Sendable {
        /// The IDP's base URL; requests go to it through `transport`.
        public var idpUrl: String
        /// The pinned certificate chain: when the IDP at `idpUrl` in `IdpNetwork.shared` has a
        /// certificate, the chain must contain it (unused with a `transport`); `nil`: none pinned.
        public var certificateChain: Data?
        /// The redirect URI sent with the token request; must be the one the code was issued for.
        public var redirectUri: String
        /// Carries token requests; `nil` looks `idpUrl` up in `IdpNetwork.shared`.
        public var transport: (any Transport)?
        /// The device's persistent storage; share it with a new MasterController to simulate an
        /// app restart.
        public var tokenStore: McTokenStore
        /// The clock token expiry is measured on (a `ManualClock` in tests, the IDP's).
        public var clock: any IdpClock
        /// Asked before a SetAuthorisationCode in BIOMETRIC mode and before an OfflineLogin uses
        /// the offline token of a BIOMETRIC user; `nil`: the device has no biometry (both fail with
        /// `kFailed` and `errorCode` 802000000 + `publicKeyInconsistent`).
        public var biometricPrompt: (any BiometricPrompt)?
        /// How long a token refresh may take before its waiters get ``McTokenError/Reason/timedOut``,
        /// measured on ``clock`` (a test on a `ManualClock` advances it past the timeout instead of
        /// waiting).
        public var refreshTimeout: Duration
        /// Takes over the tasks the MC starts on its own (the token refresh, the automated
        /// restart) and the waits on a refresh in flight, for a controlled stress run (`IdpHarness`'s
        /// `SystemStress`); `nil`, the default: plain tasks.
        package var controller: (any ExecutionController)?
        /// The executor the tasks the MC starts on its own prefer (the token refresh, the automated
        /// restart); `nil`, the default: the Swift concurrency pool. A free-running stress run
        /// (`IdpHarness`'s `SystemStress`) gives the executor of its own threads.
        package var taskExecutor: (any TaskExecutor)?
        #if DEBUG
        /// A bug planted for the stress's mutation tests; set only by tests.
        package var plantedBug = PlantedBugSwitch()
        #endif

        /// A configuration; every parameter but `idpUrl` has a default.
        ///
        /// - Parameters:
        ///   - idpUrl: The IDP's base URL.
        ///   - certificateChain: The pinned certificate chain; `nil` by default.
        ///   - redirectUri: The redirect URI sent with the token request.
        ///   - transport: Carries token requests; `nil` looks `idpUrl` up in `IdpNetwork.shared`.
        ///   - tokenStore: The device's persistent storage; a fresh, empty one by default.
        ///   - clock: The clock token expiry is measured on; the system clock by default.
        ///   - biometricPrompt: The device's biometric prompt; `nil`: the device has no biometry.
        ///   - refreshTimeout: How long a token refresh may take, on `clock`; 30 seconds by default.
        public init(
            idpUrl: String,
            certificateChain: Data? = nil,
            redirectUri: String = "https://kobil/OpenIdRedirectUri",
            transport: (any Transport)? = nil,
            tokenStore: McTokenStore = McTokenStore(),
            clock: any IdpClock = SystemClock(),
            biometricPrompt: (any BiometricPrompt)? = nil,
            refreshTimeout: Duration = .seconds(30)
        ) {
            self.idpUrl = idpUrl
            self.certificateChain = certificateChain
            self.redirectUri = redirectUri
            self.transport = transport
            self.tokenStore = tokenStore
            self.clock = clock
            self.biometricPrompt = biometricPrompt
            self.refreshTimeout = refreshTimeout
            controller = nil
        }
    }

    /// The configuration the MC was made with; fixed for its life.
    public let configuration: Configuration
    var started = false
    /// Users logged in since the last Start or Restart (not persistent).
    var loggedIn: Set<KsUserIdentifier> = []
    /// The user of the last successful login since Start (GetInformation's `loggedInUser`).
    var lastLoggedIn: KsUserIdentifier?
    var pending: [KsUserIdentifier: PendingAuthorization] = [:]
    /// Refreshes in flight, one per user and token kind.
    var flights: [FlightKey: RefreshFlight] = [:]
    /// Events that are waiting on the IDP (SetAuthorisationCode, OfflineLogin, ExchangeIamToken);
    /// a Start or Restart meanwhile is refused with `kInvalidState`.
    var eventsWaitingOnIdp = 0
    /// What the last Start/Restart passed.
    var appConfiguration: KSMSsmsAppConfiguration?
    /// Whether `KSMEnableOpenCensusTracingEvent` turned tracing on.
    var tracingEnabled = false
    /// Where `KSMConfigurationEvent` said traces go.
    var exporterUrl: String?
    let feed = EventFeed()
    /// Numbers the events sent through the completion forms, in the order they are sent.
    nonisolated let intake = EventIntake()
    /// Which of those events begins next, and those waiting for their turn.
    var turns = (next: UInt64(0), waiting: [UInt64: CheckedContinuation<Void, Never>]())
    /// The tenant of the last token request and its token endpoint's path (``tokenPath(of:)``).
    private var lastTokenPath: (tenantId: String, path: String)?

    var store: McTokenStore { configuration.tokenStore }
    var now: Date { configuration.clock.now() }

    /// The version GetInformation reports.
    public static let sdkVersion = "IdpHarness-MC 1.0 (simulation of the KOBIL MC-SDK, Maverick backend)"

    /// A MasterController that has not yet started: post a ``KSMStartEvent`` (or a
    /// ``KSMRestartEvent``) first.
    ///
    /// - Parameter configuration: Where the IDP is and how to reach it.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: - Entry points

    /// Handles `event` and returns its result event (downcast it to the documented type).
    ///
    /// The result carries the event's trace context (a new one if the event had none, or one whose
    /// traceparent could not be parsed).
    public func receive(_ event: any KsMacroEvent) async -> any KsMacroEvent {
        let trace = traceContext(of: event)
        // Cases tried in order (every event class is final): a login's two events first, whose
        // handlers make their results with the trace.
        switch event {
        case let event as KSMGetAstClientDataEvent:
            return getAstClientData(event, trace: trace)
        case let event as KSMSetAuthorisationCodeEvent:
            return await setAuthorisationCode(event, trace: trace)
        default:
            let result = await handle(event, trace: trace)
            result.traceContext = trace
            return result
        }
    }

    /// The Objective-C form the invalid-state page's adapter calls: `completionBlock` runs once, on
    /// a Swift concurrency thread (not the caller's, not the main thread), with the result event.
    ///
    /// As with the vendor's SDK, whose blocks Swift imports as plain escaping closures, the block
    /// need not be `@Sendable`; it must be safe to run on that thread (hop to the main queue for
    /// UI work, as the documents' samples do).
    public nonisolated func receive(_ event: any KsEvent, withCompletionHandler completionBlock: (((any KsEvent)?) -> Void)?) {
        let completion = AppCompletion(completionBlock)
        let number = intake.accept()
        Task {
            guard let macro = event as? any KsMacroEvent else {
                await takeTurn(number)
                completion.run(KSMStatusResultEvent(status: .kNotSupported, errorDescription: "\(type(of: event)) is not an event of the MasterController"))
                return
            }
            completion.run(await receive(macro, inTurn: number))
        }
    }

    /// The completion-handler form of the iOS samples. `completion` runs once, on a Swift
    /// concurrency thread (not the caller's, not the main thread), with the result event.
    ///
    /// Events sent through the completion forms (this one, ``receive(_:withCompletionHandler:)``,
    /// ``postEvent(_:)``) begin in the order they were sent: an event sent after another one's
    /// send returned is handled from its start after that one began. Once begun, an event that
    /// waits on the IDP lets later ones go on meanwhile, so results may come back in another
    /// order.
    ///
    /// The completion need not be `@Sendable`, as with the vendor's Objective-C SDK; it must be
    /// safe to run on that thread.
    public nonisolated func sendEvent2MasterController(_ event: any KsMacroEvent, completion: ((any KSMEvent) -> Void)? = nil) {
        send(event, completion: AppCompletion(completion))
    }

    /// The same, with the label of the Start sample; the completion may be left out for events
    /// without a result (the tracing events).
    public nonisolated func sendEvent2MasterController(event: any KsMacroEvent, completion: ((any KSMEvent) -> Void)? = nil) {
        send(event, completion: AppCompletion(completion))
    }

    private nonisolated func send(_ event: any KsMacroEvent, completion: AppCompletion<any KSMEvent>) {
        let number = intake.accept()
        Task { completion.run(await receive(event, inTurn: number)) }
    }

    /// Handles `event` once every event accepted before it (``EventIntake``) has begun: it begins
    /// on the actor with nothing between its turn and its start.
    private func receive(_ event: any KsMacroEvent, inTurn number: UInt64) async -> any KsMacroEvent {
        await takeTurn(number)
        return await receive(event)
    }

    /// Waits until event `number` is next to begin, then makes the one after it next (it runs only
    /// when this one suspends or ends: the actor runs one piece at a time).
    private func takeTurn(_ number: UInt64) async {
        if number != turns.next { await withCheckedContinuation { turns.waiting[number] = $0 } }
        turns.next = number + 1
        turns.waiting.removeValue(forKey: turns.next)?.resume()
    }

    /// The Kotlin samples' form: a future that `then` callbacks observe.
    public nonisolated func postEvent(_ event: any KsMacroEvent) -> McFuture<any KsMacroEvent> {
        let future = McFuture<any KsMacroEvent>()
        let number = intake.accept()
        Task { future.resolve(await receive(event, inTurn: number)) }
        return future
    }

    /// Registers `listener` for the events the MC sends on its own: ``KSMStartLoginEvent``,
    /// ``KSMServerConnectionEvent`` and the ``KSMRestartResultEvent`` of an automated restart.
    public nonisolated func register(_ listener: any KSMEventListener) { feed.register(listener) }

    /// Whether `user` is logged in since the last Start or Restart.
    package func isLoggedIn(_ user: KsUserIdentifier) -> Bool { loggedIn.contains(user) }

    /// The tokens stored for `user`; for the package's own tests. The app never sees them.
    func tokenSet(for user: KsUserIdentifier) -> McTokenSet? { store.tokens(for: user) }

    /// Handles every event but a login's two; each case is a cast tried in order.
    private func handle(_ event: any KsMacroEvent, trace: TraceContext) async -> any KsMacroEvent {
        switch event {
        case let event as KSMStartEvent:
            return start(problem: AppIdentity.problem(locale: event.locale, appName: event.appName),
                         configuration: AppIdentity.configuration(locale: event.locale, appName: event.appName))
        case let event as KSMStartEventEx:
            return start(problem: event.problem, configuration: event.ssmsAppConfiguration)
        case let event as KSMRestartEvent:
            return restart(problem: AppIdentity.problem(locale: event.locale, appName: event.appName),
                           configuration: AppIdentity.configuration(locale: event.locale, appName: event.appName))
        case let event as KSMRestartEventEx:
            return restart(problem: event.problem, configuration: event.ssmsAppConfiguration)
        case let event as KSMOfflineLoginEvent:
            return await offlineLogin(event, trace: trace)
        case let event as KSMClearIamTokenCacheEvent:
            return clearIamTokenCache(event)
        case let event as KSMExchangeIamTokenEvent:
            return await exchangeIamToken(event, trace: trace)
        case is KSMGetInformationEvent:
            return getInformation()
        case is KSMGetStateEventEvent:
            return getState()
        case let event as KSMConfigurationEvent:
            return configure(event)
        case let event as KSMEnableOpenCensusTracingEvent:
            return enableTracing(event)
        default:
            return KSMStatusResultEvent(status: .kNotSupported, errorDescription: "\(type(of: event)) is not supported by this MasterController")
        }
    }

    /// The event's trace context, or a new trace: sampled when tracing is on, else one in ten,
    /// as the tracing page describes.
    private func traceContext(of event: any KsMacroEvent) -> TraceContext {
        if let given = event.traceContext { return given.usable.context }
        var generator = SecureRandom.Generator()
        return TraceContext(traceParent: TraceParent.randomHeader(sampled: tracingEnabled || Int.random(in: 0..<10, using: &generator) == 0))
    }

    /// What a token request of an event in `tenantId` needs.
    func requestContext(_ trace: TraceContext, tenantId: String) -> TokenExchange.Context {
        TokenExchange.Context(controller: self, trace: trace, tokenPath: tokenPath(of: tenantId))
    }

    /// The path of `tenantId`'s token endpoint, kept for the tenant of the last request: a
    /// device's requests nearly always go to one tenant, so the path is made once.
    private func tokenPath(of tenantId: String) -> String {
        if let kept = lastTokenPath, kept.tenantId == tenantId { return kept.path }
        let path = "/auth/realms/\(FormURLEncoding.percentEncode(tenantId))/protocol/openid-connect/token"
        lastTokenPath = (tenantId, path)
        return path
    }

    /// Starts work the MC does on its own: a task, or the controlled run's.
    nonisolated func startTask(_ seam: Seam, _ body: @escaping @Sendable () async -> Void) {
        if let controller = configuration.controller {
            controller.postAsync(seam, body)
        } else {
            Task(executorPreference: configuration.taskExecutor) { await body() }
        }
    }
}

/// A refresh in flight is per user and per token kind presented.
struct FlightKey: Hashable, Sendable {
    enum Kind: String, Sendable { case refresh, offline }
    let user: KsUserIdentifier
    let kind: Kind
}

struct PendingAuthorization: Sendable {
    let verifier: String
    let challenge: String
    let clientData: String
}

/// Numbers the events sent to one MasterController through its completion forms, in the order
/// their sends took a number (under a lock held for one increment).
final class EventIntake: Sendable {
    private let next = LockedValue<UInt64>(0)

    /// The next number.
    func accept() -> UInt64 { next.withLock { number in defer { number += 1 }; return number } }
}

/// The app's completion block, carried from the thread that sent the event to the one that runs
/// it.
///
/// Why `@unchecked Sendable` is sound here: the box holds one immutable closure, handed over
/// once — the sender keeps no reference to it — and called once, by the one task that completes
/// the event; so the box itself is never touched by two threads at once. What the closure
/// captures is the app's: as with the vendor's Objective-C SDK, whose blocks Swift imports as
/// plain escaping closures and calls on the SDK's own thread, the documented contract makes the
/// app's closure responsible for being safe on the thread it runs on.
struct AppCompletion<Argument>: @unchecked Sendable {
    private let body: ((Argument) -> Void)?

    init(_ body: ((Argument) -> Void)?) { self.body = body }

    /// Calls the closure, if there is one.
    func run(_ argument: Argument) { body?(argument) }
}
