import Foundation
import IdpPrimitives
import IdpWireFormats
import Synchronization

/// The IdpSdk: obtains an authorization code from the IDP for a flow client, asking an
/// ``IdpSdkInteractionInterface`` for credentials at each form step.
///
/// ```swift
/// IdpNetwork.shared.register(idp, at: "https://idp.example.test")   // setup: the in-process IDP
/// let idpSdk = IdpSdkService(tenantId: "demo", idpUrl: "https://idp.example.test",
///                            certificateChain: certificate, shouldHashPin: false)
/// idpSdk.getAuthorizationCode(withAstClientData: info, clientId: "KssIdpLogin",
///                             interactionInterface: provider, userId: "alice", traceParent: nil) { result in
///     if !result.hasError() { print("got a code") }
/// }
/// ```
///
/// Threading: every method may be called from any thread or task. `provideCredentials` and the
/// completion handler run on SDK-owned OS threads (named `IdpSdk-N`), never on the caller's
/// thread, the main thread or the Swift concurrency pool, and the completion runs exactly once per
/// call — on success, IDP error, provider error, cancellation and timeout alike. A flow waiting on
/// the IDP holds no thread.
public final class IdpSdkService: Sendable {
    /// How the SDK behaves; the defaults suit the standard KOBIL clients.
    public struct Configuration: Sendable {
        /// What to do with credentials that name a field the step did not request.
        public enum UnrequestedFieldPolicy: Sendable, Equatable {
            /// Drop them; they are never sent (the default, as the documents' samples expect:
            /// their provider answers username, password and activation code at every step).
            case ignore
            /// End the flow with ``IdpSdkError/Code/unexpectedCredentialField``, naming the field
            /// and the step (opt-in: a provider that answers fields nobody asked for may be
            /// sending a secret to the wrong step).
            case reject
        }

        /// The redirect URI registered for the flow clients at the IDP.
        public var redirectUri: String
        /// How long one `getAuthorizationCode` may take before it ends with
        /// ``IdpSdkError/Code/timedOut`` (a provider still blocked then is left to return; its
        /// answer is discarded). A deadline on ``clock``, counted from the call: a flow whose
        /// last answer arrives at or after it ends with `timedOut` too, even when the timer's
        /// thread has not run yet.
        public var flowTimeout: Duration
        /// The longest credential value accepted, in UTF-8 bytes.
        public var maximumFieldLength: Int
        /// What to do with answered fields the step did not ask for; ``UnrequestedFieldPolicy/ignore`` by default.
        public var unrequestedFields: UnrequestedFieldPolicy
        /// The most form steps one flow may see before it ends with a protocol error (an IDP
        /// loop guard; re-asks of one step do not count).
        public var maximumSteps: Int
        /// The most SDK threads running providers and completions at once; beyond that, calls
        /// wait their turn.
        public var maximumWorkerThreads: Int
        /// How long an idle SDK thread lives.
        public var workerKeepAlive: Duration
        /// How long an SDK thread that ran out of work watches for the next job before it sleeps
        /// (one thread at a time, yielding its core on every round, and only while the process
        /// leaves a core idle): a flow hands off to the SDK's threads, and a job taken by a
        /// watching thread skips a wake-up, which costs tens of microseconds on a virtual
        /// machine. When the process keeps the cores busy, a spinning thread would take time from
        /// threads that have work, so it yields its core once (a thread with work on that core
        /// runs first, and a job it submits meanwhile skips the wake-up) and sleeps. 250 µs by
        /// default; `.zero` makes idle threads always sleep at once (less CPU at rest, for a
        /// battery-powered device, say).
        public var workerSpin: Duration
        /// The clock ``flowTimeout`` is measured on: the system's by default; a `ManualClock`
        /// lets a test time a flow out by advancing it, without waiting.
        public var clock: any IdpClock
        /// Takes over the SDK's scheduling for a controlled stress run (`IdpHarness`'s
        /// `SystemStress`): every hand-off between threads goes through it, and the flow pauses
        /// at its seams (after a provider call, before a cancellation or a timeout takes effect).
        /// `nil`, the default: the SDK schedules its own work. With a `ManualClock` and a
        /// controller, timeouts fire on the thread that moves the clock, so a run repeats.
        package var controller: (any ExecutionController)?
        #if DEBUG
        /// A bug planted for the stress's mutation tests; set only by tests.
        package var plantedBug = PlantedBugSwitch()
        #endif
        /// Cores per worker pool above three cores (each pool has its own lock, queue and
        /// threads): 1, or what `idp-bench --cores-per-pool` measures.
        package var coresPerWorkerPool = WorkerPools.coresPerPool

        /// A configuration; every parameter has a default.
        ///
        /// - Parameters:
        ///   - redirectUri: The redirect URI registered for the flow clients; the documents' sample
        ///     URI by default.
        ///   - flowTimeout: How long one `getAuthorizationCode` may take; 180 s.
        ///   - maximumFieldLength: The longest credential value accepted, in UTF-8 bytes; 1024.
        ///   - unrequestedFields: What to do with answered fields the step did not ask for;
        ///     `.ignore`.
        ///   - maximumSteps: The most form steps one flow may see; 32.
        ///   - maximumWorkerThreads: The most SDK threads running providers and completions at
        ///     once; 256.
        ///   - workerKeepAlive: How long an idle SDK thread lives; 2 s.
        ///   - workerSpin: How long an SDK thread out of work watches for the next job; 250 µs.
        ///   - clock: The clock `flowTimeout` is measured on; the system's.
        public init(
            redirectUri: String = "https://kobil/OpenIdRedirectUri",
            flowTimeout: Duration = .seconds(180),
            maximumFieldLength: Int = 1024,
            unrequestedFields: UnrequestedFieldPolicy = .ignore,
            maximumSteps: Int = 32,
            maximumWorkerThreads: Int = 256,
            workerKeepAlive: Duration = .seconds(2),
            workerSpin: Duration = .microseconds(250),
            clock: any IdpClock = SystemClock()
        ) {
            self.redirectUri = redirectUri
            self.flowTimeout = flowTimeout
            self.maximumFieldLength = maximumFieldLength
            self.unrequestedFields = unrequestedFields
            self.maximumSteps = maximumSteps
            self.maximumWorkerThreads = maximumWorkerThreads
            self.workerKeepAlive = workerKeepAlive
            self.workerSpin = workerSpin
            self.clock = clock
            controller = nil
        }
    }

    /// The tenant (realm) the flows run in.
    public let tenantId: String
    /// The IDP's base URL, looked up in `IdpNetwork.shared` at each call unless a transport was
    /// given.
    public let idpUrl: String
    /// The certificate chain presented to the IDP (certificate pinning).
    public let certificateChain: Data
    /// Whether password fields are sent as `base64url(SHA-256(value))` instead of the value.
    public let shouldHashPin: Bool
    /// Timeouts, limits, strictness, worker threads and the clock; fixed for the service's life.
    public let configuration: Configuration
    private let explicitTransport: (any Transport)?
    /// `IdpNetwork.shared`, held so that a flow's look-up does not retain the one network object
    /// every flow on every core reaches.
    private let network = IdpNetwork.shared
    let pool: WorkerPools
    let timers: FlowTimers
    /// One per ``ThreadStripe``, each referring to `pool`, `timers` and `inFlight`.
    let environments: [FlowEnvironment]
    /// What every flow's authorize request shares, encoded once.
    private let authorizeTemplate: FlowRequests.AuthorizeTemplate
    /// Flows started and not completed, striped: every flow writes it twice.
    let inFlight = StripedCounter()

    /// The documents' initialiser. The IDP is looked up by `idpUrl` in `IdpNetwork.shared` at each
    /// call, so it may be registered before or after.
    /// - Parameters:
    ///   - tenantId: The tenant (realm) the flows run in.
    ///   - idpUrl: The IDP's base URL.
    ///   - certificateChain: The certificate chain to present to the IDP (certificate pinning).
    ///   - shouldHashPin: Whether password fields are sent as `base64url(SHA-256(value))`.
    public convenience init(tenantId: String, idpUrl: String, certificateChain: Data, shouldHashPin: Bool) {
        self.init(tenantId: tenantId, idpUrl: idpUrl, certificateChain: certificateChain, shouldHashPin: shouldHashPin, configuration: Configuration())
    }

    /// The documents' initialiser with opt-in behaviour and an explicit transport.
    /// - Parameters:
    ///   - tenantId: The tenant (realm) the flows run in.
    ///   - idpUrl: The IDP's base URL.
    ///   - certificateChain: The certificate chain to present to the IDP (certificate pinning).
    ///   - shouldHashPin: Whether password fields are sent as `base64url(SHA-256(value))`.
    ///   - configuration: Timeouts, limits, strictness, worker threads and the clock.
    ///   - transport: Carries requests to the IDP; `nil` looks `idpUrl` up in
    ///     `IdpNetwork.shared`.
    public init(tenantId: String, idpUrl: String, certificateChain: Data, shouldHashPin: Bool, configuration: Configuration, transport: (any Transport)? = nil) {
        self.tenantId = tenantId
        self.idpUrl = idpUrl
        self.certificateChain = certificateChain
        self.shouldHashPin = shouldHashPin
        self.configuration = configuration
        self.explicitTransport = transport
        self.pool = WorkerPools(maximumThreads: max(1, configuration.maximumWorkerThreads), keepAlive: configuration.workerKeepAlive,
                                coresPerPool: configuration.coresPerWorkerPool, spin: configuration.workerSpin)
        self.timers = FlowTimers(clock: configuration.clock, firesOnMove: configuration.controller != nil)
        authorizeTemplate = FlowRequests.AuthorizeTemplate(tenantId: tenantId, redirectUri: configuration.redirectUri)
        let (pool, timers, inFlight) = (pool, timers, inFlight)
        environments = (0..<ThreadStripe.count).map { _ in
            FlowEnvironment(tenantId: tenantId, configuration: configuration, shouldHashPin: shouldHashPin, pool: pool, timers: timers, inFlight: inFlight)
        }
    }

    /// Obtains an authorization code for `clientId`.
    ///
    /// - Parameters:
    ///   - astClientData: From the MC's `KSMGetAstClientDataResultEvent`.
    ///   - clientId: The IDP flow client (`KssIdpEnrollment`, `KssIdpLogin`, a custom one).
    ///   - interactionInterface: Asked once per form step, on an SDK thread.
    ///   - userId: `nil` (or `""`, as the documents write it) for activation; the enrolled user's
    ///     id for login.
    ///   - traceParent: An optional W3C traceparent; `nil` or `""` for none. It is sent to the IDP
    ///     and appears in its audit log. One that cannot be parsed starts a new trace, as W3C Trace
    ///     Context asks of a receiver: the flow gets fresh ids (``IdpSdkInteractionData/traceParent``
    ///     shows them) and tells the IDP with `tracestate: idpsdk=restarted`.
    ///   - completion: Runs exactly once, on an SDK thread, with the code or the error.
    /// - Returns: A handle to cancel the flow; ignoring it is fine.
    @discardableResult
    public func getAuthorizationCode(
        withAstClientData astClientData: AstClientDataInfo,
        clientId: String,
        interactionInterface: any IdpSdkInteractionInterface,
        userId: String?,
        traceParent: String?,
        completion: @escaping @Sendable (IdpSdkResult) -> Void
    ) -> IdpSdkFlowHandle {
        startFlow(astClientData: astClientData, clientId: clientId, interactionInterface: interactionInterface, userId: userId,
                  traceParent: traceParent, completion: .handler(completion))
    }

    /// Starts a flow that ends in `completion`.
    private func startFlow(
        astClientData: AstClientDataInfo,
        clientId: String,
        interactionInterface: any IdpSdkInteractionInterface,
        userId: String?,
        traceParent: String?,
        completion: FlowCompletion
    ) -> IdpSdkFlowHandle {
        let phases = PhaseRecorder.current
        phases?.note(.flowEntered)
        let id = IdpSdkFlowID.next()
        // The transport is taken out of its lookup's result once, and moved into the flow: the
        // flow's one copy of it.
        var trace: TraceStart?
        var transport: any Transport = UnreachableTransport()
        var failure: IdpSdkError?
        switch validate(astClientData: astClientData, clientId: clientId, userId: userId, traceParent: traceParent) {
        case .failure(let error):
            failure = error
        case .success(let checked):
            trace = checked
            if let explicitTransport {
                transport = explicitTransport
            } else {
                switch network.connect(to: idpUrl, certificateChain: certificateChain) {
                case .success(let found): transport = found
                case .failure(let error): failure = FlowRequests.error(for: error)
                }
            }
        }
        let context = FlowContext(
            id: id, clientId: clientId, userId: userId.flatMap { $0.isEmpty ? nil : $0 },
            traceParent: trace?.traceParent, traceRestarted: trace?.restarted ?? false,
            provider: ProviderReference(interactionInterface), transport: transport,
            shared: environments[ThreadStripe.current & (environments.count - 1)],
            seamTrace: TraceParent.seamTrace(trace?.traceParent), phases: phases
        )
        inFlight.add(1)
        let flow = Flow(context: consume context, completion: completion)
        if let failure {
            flow.finish(.failure(failure))
        } else {
            flow.start(authorizeTemplate, astClientData: astClientData)
        }
        return IdpSdkFlowHandle(flow: flow)
    }

    /// Obtains an authorization code for `clientId`; the `async` form of
    /// ``getAuthorizationCode(withAstClientData:clientId:interactionInterface:userId:traceParent:completion:)``.
    ///
    /// Suspends without blocking a thread. Cancelling the task ends the flow with
    /// ``IdpSdkError/Code/cancelled``. It runs in the caller's isolation (`nonisolated(nonsending)`),
    /// so an actor or the main actor may pass a provider that is not `Sendable`.
    nonisolated(nonsending) public func getAuthorizationCode(
        withAstClientData astClientData: AstClientDataInfo,
        clientId: String,
        interactionInterface: any IdpSdkInteractionInterface,
        userId: String?,
        traceParent: String?
    ) async -> IdpSdkResult {
        if Task.isCancelled {
            return IdpSdkResult(error: IdpSdkError(.cancelled, "the flow was cancelled by its caller"), flowId: IdpSdkFlowID.next())
        }
        let link = CancellationLink<IdpSdkFlowHandle>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let started = startFlow(
                    astClientData: astClientData, clientId: clientId, interactionInterface: interactionInterface,
                    userId: userId, traceParent: traceParent, completion: .continuation(continuation)
                )
                if link.publish(started) { started.cancel() }
            }
        } onCancel: {
            link.cancel()?.cancel()
        }
    }

    /// Flows started and not yet completed.
    package var flowsInFlight: Int { inFlight.value }

    /// The SDK's worker threads: running now, the most at once, and started in all.
    package var workerThreads: (current: Int, peak: Int, started: Int) { pool.statistics }

    /// Flow timeouts armed and not yet fired or cancelled: one per flow in flight (a flow that
    /// ended has none).
    package var armedTimeouts: Int { timers.armed }

    /// How often the system refused the SDK a new thread (each refusal is retried after 10 ms).
    package var workerThreadStartFailures: Int { pool.startFailures }

    /// Whether the calling thread is an SDK worker thread (where providers and completions run).
    public static var isSDKThread: Bool { SDKThreadMarker.isMarked }

    /// A name for the calling thread: `IdpSdk-N` on an SDK thread, else the thread's own name or
    /// its pthread id. For logs and hang reports.
    public static var currentThreadName: String {
        if let name = SDKThreadMarker.currentName { return name }
        if Thread.isMainThread { return "main thread" }
        return Thread.current.name.flatMap { $0.isEmpty ? nil : $0 } ?? "thread \(pthread_self())"
    }

    /// Checks the arguments; returns the flow's trace.
    private func validate(astClientData: AstClientDataInfo, clientId: String, userId: String?, traceParent: String?) -> Result<TraceStart?, IdpSdkError> {
        func invalid(_ text: String) -> Result<TraceStart?, IdpSdkError> { .failure(IdpSdkError(.invalidArgument, text)) }
        if tenantId.isEmpty { return invalid("tenantId is empty") }
        if clientId.isEmpty { return invalid("clientId is empty") }
        // By byte: every byte of a scalar above U+007F is at least 0x80.
        if clientId.utf8.count > 256 || clientId.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) {
            return invalid("clientId is longer than 256 bytes or contains spaces or control characters")
        }
        if let userId, userId.utf8.count > configuration.maximumFieldLength { return invalid("userId is longer than \(configuration.maximumFieldLength) bytes") }
        if astClientData.clientData.isEmpty { return invalid("astClientData.clientData is empty; post a KSMGetAstClientDataEvent first") }
        if astClientData.codeChallengeMethod != PKCE.methodS256 {
            return invalid("astClientData.codeChallengeMethod '\(astClientData.codeChallengeMethod)' is not supported; S256 is required")
        }
        if !PKCE.isValidS256Challenge(astClientData.codeChallenge) {
            return invalid("astClientData.codeChallenge is not an S256 challenge (43 base64url characters)")
        }
        guard let traceParent, !traceParent.isEmpty else { return .success(nil) }
        return .success(TraceStart(caller: traceParent))
    }
}

/// Cancels one running `getAuthorizationCode`.
public struct IdpSdkFlowHandle: Sendable {
    let flow: Flow

    /// The flow's id, as `IdpSdkInteractionData.flowId` shows it.
    public var flowId: IdpSdkFlowID { flow.id }

    /// Ends the flow with ``IdpSdkError/Code/cancelled`` unless it has ended already. A provider
    /// call in progress is left to return; its answer is discarded.
    public func cancel() {
        flow.context.shared.configuration.controller?.pause(at: Seam("cancel", trace: flow.context.seamTrace))
        flow.finish(.failure(flow.plantedCancelError ?? IdpSdkError(.cancelled, "the flow was cancelled by its caller")))
    }
}

/// The trace a flow runs in: the caller's, or a new one when the caller's could not be parsed.
struct TraceStart {
    let traceParent: String
    let restarted: Bool

    init(caller: String) {
        if let canonical = TraceParent.canonical(caller) {
            traceParent = canonical
            restarted = false
        } else {
            traceParent = TraceParent.randomHeader()
            restarted = true
        }
    }
}

/// Stands in when no transport could be had; the flow ends before using it.
private struct UnreachableTransport: Transport {
    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        completion(.failure(TransportError(.unreachable, "no transport")))
    }
}
