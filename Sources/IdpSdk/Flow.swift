import Dispatch
import Foundation
import IdpPrimitives
import IdpWireFormats
import Synchronization

/// What one flow needs that does not change while it runs. The AST client data is not kept: only
/// the authorize request, made at the start, reads it.
struct FlowContext: Sendable {
    let id: IdpSdkFlowID
    let clientId: String
    let userId: String?
    let traceParent: String?
    /// Whether the caller's traceparent was unparseable and the flow started a new trace.
    let traceRestarted: Bool
    let provider: ProviderReference
    let transport: any Transport
    /// The service's tenant, configuration, worker pools, timers and count of flows in flight,
    /// through the copy of the thread that started the flow.
    let shared: FlowEnvironment
    /// The trace id the flow's ``Seam``s carry.
    let seamTrace: String?
    /// Where the flow notes its phases' times, when the caller's task binds a recorder.
    let phases: PhaseRecorder?
}

/// Where a flow's result goes: the caller's completion handler, or the task suspended in the `async`
/// form. The flow's state machine holds it as a plain value, so that a handler is kept as the caller
/// made it (a closure held as a generic parameter is wrapped in a thunk, made per flow) and the
/// `async` form resumes its task with no closure made around the continuation.
enum FlowCompletion: Sendable {
    /// A caller's completion handler; it may block.
    case handler(@Sendable (IdpSdkResult) -> Void)
    /// The `async` form's task; resuming it never blocks.
    case continuation(CheckedContinuation<IdpSdkResult, Never>)
}

/// What every flow of one ``IdpSdkService`` uses: its tenant, its configuration, its worker pools,
/// its timers and its count of flows in flight. The service holds one copy per ``ThreadStripe``
/// and a flow keeps the copy of the thread that starts it, from its start to its end: that
/// reference is counted on a line of the stripe's copy, not on the lines of the three shared
/// objects, which every flow on every core would otherwise write at its start and at its end; and
/// a flow copies none of the configuration's fields (its strings, its clock, its controller).
final class FlowEnvironment: Sendable {
    let tenantId: String
    let configuration: IdpSdkService.Configuration
    let shouldHashPin: Bool
    /// Whether a controller schedules the flows (``IdpSdkService/Configuration/controller``): read
    /// at each hand-off without copying the controller.
    let isControlled: Bool
    let pool: WorkerPools
    let timers: FlowTimers
    let inFlight: StripedCounter
    // Never read: it spaces the copies, made one after the other, so that each one's reference
    // count lies on lines of its own.
    private let spacing: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    init(tenantId: String, configuration: IdpSdkService.Configuration, shouldHashPin: Bool, pool: WorkerPools, timers: FlowTimers,
         inFlight: StripedCounter) {
        self.tenantId = tenantId
        self.configuration = configuration
        self.shouldHashPin = shouldHashPin
        isControlled = configuration.controller != nil
        self.pool = pool
        self.timers = timers
        self.inFlight = inFlight
        spacing = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }
}

/// One `getAuthorizationCode` call: fetch a form, ask the provider, submit, until the IDP
/// redirects with a code or an error.
///
/// The storage of a ``FlowStateMachine``: one lock section per event, the decision taken under
/// the lock, the action (send, ask the provider, complete) after it.
///
/// Threading: an IDP answer is read on an SDK thread: where it arrives, if that is an SDK thread
/// and the request was the engine's own (sent from an SDK thread while answering a step), else
/// after one hand-off to the ``WorkerPool``. The answer to the first request arrives on the
/// caller's thread with a synchronous transport, so it is always handed off. From there a
/// provider that never blocks (``IdpSdkNonBlockingProvider``) is asked on the same thread, and its
/// answer submitted from it; any other provider is asked on a pool thread of its own, inside
/// ``WorkerPool/mayBlock(_:)``. The completion runs on the SDK thread that ended the flow, or on a
/// pool thread when the flow was ended from outside (cancel, timeout) or on a thread that is not
/// this service's.
final class Flow: Sendable {
    typealias Machine = FlowStateMachine<FlowCompletion, IdpSdkResult>

    let context: FlowContext
    private let machine: LockedValue<Machine>
    /// Every flow's lock counts as `IdpSdk.Flow` in ``LockProfiler``; registered once.
    private static let lockSite = LockProfiler.Site(label: "IdpSdk.Flow")
    /// When the flow times out on the service's clock (``FlowTimers/deadline(after:from:)``): its
    /// timer fires then, and an ending the engine reaches at or after it, before the timer's
    /// thread got to fire, is a timeout too (``finish(_:from:)``), however late that thread runs.
    private let deadline: Date
    /// The flow's place in its timer shard's heap while its timeout is armed (-1: not armed), read
    /// and written only under that shard's lock (``DeadlineHeapElement``); an atomic only so that
    /// the flow, shared between threads, may hold it.
    private let timerPlace = Atomic<Int>(-1)

    var deadlineHeapPlace: Int {
        get { timerPlace.load(ordering: .relaxed) }
        set { timerPlace.store(newValue, ordering: .relaxed) }
    }

    init(context: consuming FlowContext, completion: FlowCompletion) {
        deadline = FlowTimers.deadline(after: context.shared.configuration.flowTimeout, from: context.shared.configuration.clock.now())
        self.context = context
        self.machine = LockedValue(Machine(completion: completion), site: Self.lockSite)
    }

    var id: IdpSdkFlowID { context.id }

    /// Arms the timeout and sends the authorize request, made from the service's `template` and
    /// the caller's `astClientData`.
    func start(_ template: FlowRequests.AuthorizeTemplate, astClientData: AstClientDataInfo) {
        context.shared.timers.arm(self, at: deadline)
        send(FlowRequests.authorize(context, astClientData: astClientData, template: template), answeredInline: false)
    }

    /// Runs `job` on an SDK thread later: the worker pool's, or a controlled run's (``Seam`` `seam`).
    func handOff(_ seam: String, _ job: @escaping @Sendable () -> Void) {
        let shared = context.shared
        if shared.isControlled, let controller = shared.configuration.controller {
            controller.post(Seam(seam, trace: context.seamTrace), job)
        } else {
            shared.pool.submit(job)
        }
    }

    /// Where a finish comes from: the engine's own path (may act on the current SDK thread) or
    /// outside it (a cancel, the timer: always hand the completion to the pool).
    enum Origin { case engine, outside }

    /// Ends the flow with `outcome` unless it has ended already. Returns whether this call ended it.
    /// An ending the engine reaches at or after the flow's deadline is `timedOut`: the flow did
    /// not end within its timeout.
    @discardableResult
    func finish(_ outcome: Result<String, IdpSdkError>, from origin: Origin = .outside) -> Bool {
        let outcome = origin == .engine && context.shared.configuration.clock.now() >= deadline ? .failure(timedOutError) : outcome
        let result = IdpSdkResult(outcome, flowId: id, user: AuthenticationUserInformation(
            tenantId: context.shared.tenantId, userId: context.userId, clientId: context.clientId))
        let observing = context.provider.observer != nil
        guard case .complete(let completion, let notice) = machine.withLock({ $0.finish(result, observing: observing) }) else {
            return false
        }
        context.shared.timers.cancel(self)
        context.shared.inFlight.add(-1)
        if plantedEnding(completion, result: result, notice: notice, origin: origin) { return true }
        if origin == .engine && context.shared.pool.isCurrentThread {
            complete(consume completion, result: result, notice: notice)
        } else {
            handOff("completion") { [self] in complete(completion, result: result, notice: notice) }
        }
        return true
    }

    /// The timer fired: end with `timedOut`.
    func timeOut() {
        finish(.failure(timedOutError))
    }

    private var timedOutError: IdpSdkError {
        IdpSdkError(.timedOut, "the flow did not end within \(context.shared.configuration.flowTimeout)")
    }

    var isFinished: Bool { machine.withLock { $0.isFinished } }

    /// Runs on an SDK thread: the observer's notice, then the completion; each inside
    /// ``WorkerPool/mayBlock(_:)`` unless it is known not to block.
    private func complete(_ completion: consuming FlowCompletion, result: IdpSdkResult, notice: Machine.ObserverNotice) {
        switch notice {
        case .none: break
        case .didEnd(let result): callProvider { $0.observer?.flowDidEnd(id, result: result) }
        case .endedDuringCall: callProvider { $0.observer?.flowEndedDuringCall(id) }
        }
        context.phases?.note(.completing)
        // Moved out, not copied: a copy of a continuation retains an object the task's thread made.
        switch consume completion {
        case .continuation(let continuation): continuation.resume(returning: result)
        case .handler(let handler): context.shared.pool.mayBlock { handler(result) }
        }
    }

    /// Calls into the provider: directly if it never blocks, else inside ``WorkerPool/mayBlock(_:)``.
    private func callProvider<Result>(_ body: (ProviderReference) -> Result) -> Result {
        // Read in place: a copy of the reference is a copy of each of its existentials.
        if context.provider.neverBlocks { return body(context.provider) }
        return context.shared.pool.mayBlock { body(context.provider) }
    }

    /// Sends `request`. `answeredInline`: whether its answer may be read on the thread it arrives
    /// on, if that is an SDK thread (only for requests the engine sends from an SDK thread).
    private func send(_ request: HTTPRequest, answeredInline: Bool) {
        guard let number = machine.withLock({ $0.sendingRequest() }) else { return }
        context.phases?.note(number == 1 ? .authorizeSent : .submissionSent)
        context.transport.send(request) { [self] response in
            context.phases?.note(number == 1 ? .authorizeAnswered : .submissionAnswered)
            // Take the response only if it is the one awaited, and only once.
            guard machine.withLock({ $0.responseArrived(for: number) }) else {
                plantedLateResponse()
                return
            }
            if answeredInline && context.shared.pool.enterInline() {
                defer { context.shared.pool.leaveInline() }
                handle(response)
            } else {
                handOff("response") { [self] in handle(response) }
            }
        }
    }

    /// Runs on an SDK thread: reads the IDP's answer and decides: ask the provider, or end.
    private func handle(_ responseOrError: Result<HTTPResponse, TransportError>) {
        context.phases?.note(.answerPickedUp)
        let response: HTTPResponse
        switch responseOrError {
        case .success(let value): response = value
        case .failure(let error):
            finish(.failure(FlowRequests.error(for: error)), from: .engine)
            return
        }
        switch FlowRequests.interpret(response, context: context) {
        case .finished(let outcome):
            finish(outcome, from: .engine)
        case .form(let form):
            let rejection = FlowRequests.rejection(in: form)
            let limit = context.shared.configuration.maximumSteps
            switch machine.withLock({ $0.formServed(rejected: rejection != nil, stepLimit: limit) }) {
            case .ignore:
                return
            case .stepLimitExceeded:
                finish(.failure(IdpSdkError(.protocolError, "the IDP served more than \(limit) form steps")), from: .engine)
            case .askProvider(let step, let attempt):
                let inputs = form.inputs
                context.phases?.note(.formRead)
                let data = IdpSdkInteractionData(
                    form: inputs, flowId: id, step: step, attempt: attempt,
                    tenantId: context.shared.tenantId, clientId: context.clientId, userId: context.userId,
                    traceParent: context.traceParent, previousError: rejection
                )
                if context.provider.neverBlocks && context.shared.pool.isCurrentThread {
                    askProvider(data, form: form)
                } else {
                    handOff(attempt > 1 ? "provider.reask" : "provider.ask") { [self] in askProvider(data, form: form) }
                }
            }
        }
    }

    /// Runs on an SDK thread: the one place the provider is called.
    private func askProvider(_ data: IdpSdkInteractionData, form: XHTMLForm) {
        guard machine.withLock({ $0.providerCallBegins() }) else { return }
        plantedAsking(data, form: form)
        let answer = callProvider { $0.provider.provideCredentials(data) }
        context.phases?.note(.providerReturned)
        if context.shared.isControlled {
            context.shared.configuration.controller?.pause(at: Seam("provider.returned", trace: context.seamTrace))
        }
        if plantedRouting(answer) { return }
        take(answer, data: data, form: form)
    }

    /// Runs on an SDK thread: hands the provider's answer to the flow, which submits it or ends.
    func take(_ answer: IdpSdkProvideCredentialsResult, data: IdpSdkInteractionData, form: XHTMLForm) {
        switch machine.withLock({ $0.providerCallEnded() }) {
        case .discard:
            return
        case .notifyDidEnd(let result):
            callProvider { $0.observer?.flowDidEnd(id, result: result) }
            return
        case .proceed:
            break
        }
        let answer = plantedAnswer(answer, data: data)
        if let error = answer.error {
            finish(.failure(plantedDelivery(of: error)), from: .engine)
            return
        }
        switch CredentialCheck.submission(for: answer.credentials ?? [:], data: data, form: form, context: context) {
        case .failure(let error):
            finish(.failure(error), from: .engine)
        case .success(let request):
            send(request, answeredInline: true)
        }
    }
}
