import Dispatch
import Foundation
import IdpPrimitives

/// What one flow needs that does not change while it runs.
struct FlowContext: Sendable {
    let id: IdpSdkFlowID
    let tenantId: String
    let clientId: String
    let userId: String?
    let traceParent: String?
    /// Whether the caller's traceparent was unparseable and the flow started a new trace.
    let traceRestarted: Bool
    let astClientData: AstClientDataInfo
    let provider: ProviderReference
    let transport: any Transport
    let configuration: IdpSdkService.Configuration
    let shouldHashPin: Bool
    let pool: WorkerPool
}

/// One `getAuthorizationCode` call: fetch a form, ask the provider, submit, until the IDP
/// redirects with a code or an error.
///
/// Threading: transport callbacks arrive on the transport's threads and only parse and decide;
/// the provider and the completion run on ``WorkerPool`` threads. The state behind `state` is read
/// and changed only to decide; no call-out happens under the lock. ``finish(_:)`` is the single
/// door to the end, so the completion runs exactly once whatever races (IDP answer, provider
/// answer, timeout, cancel).
final class Flow: Sendable {
    let context: FlowContext
    private let state: LockedValue<FlowState>
    private let onEnd: @Sendable (Flow) -> Void

    struct FlowState {
        var finished = false
        var completion: (@Sendable (IdpSdkResult) -> Void)?
        /// The form step being answered, from 1, and the attempt at it, from 1.
        var step = 0
        var attempt = 0
        /// The request whose response the flow waits for (0: none). A response to any other —
        /// a duplicate from a faulty transport — is ignored.
        var awaitedRequest: UInt64 = 0
        var requestsSent: UInt64 = 0
        /// Whether a `provideCredentials` call of this flow is running.
        var inProviderCall = false
        /// The result to report to an observing provider once its running call returns.
        var endAfterCall: IdpSdkResult?
    }

    init(context: FlowContext, completion: @escaping @Sendable (IdpSdkResult) -> Void, onEnd: @escaping @Sendable (Flow) -> Void) {
        self.context = context
        self.state = LockedValue(FlowState(completion: completion), label: "IdpSdk.Flow")
        self.onEnd = onEnd
    }

    var id: IdpSdkFlowID { context.id }

    /// Arms the timeout and sends the authorize request.
    func start() {
        let timeout = context.configuration.flowTimeout
        // The timer holds the flow weakly: a flow that ended is gone, and the timer then does
        // nothing when it fires.
        DispatchQueue.global().asyncAfter(deadline: .now(plus: timeout)) { [weak self] in
            self?.finish(.failure(IdpSdkError(.timedOut, "the flow did not end within \(timeout)")))
        }
        send(FlowRequests.authorize(context))
    }

    /// Ends the flow with `outcome` unless it has ended already. Returns whether this call ended it.
    @discardableResult
    func finish(_ outcome: Result<String, IdpSdkError>) -> Bool {
        let result = IdpSdkResult(outcome, flowId: id, user: AuthenticationUserInformation(
            tenantId: context.tenantId, userId: context.userId, clientId: context.clientId))
        let provider = context.provider
        let observing = provider.observer != nil
        let taken = state.withLock { state -> (completion: (@Sendable (IdpSdkResult) -> Void)?, duringCall: Bool)? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.completion = nil }
            if state.inProviderCall, observing { state.endAfterCall = result }
            return (state.completion, state.inProviderCall)
        }
        guard let taken else { return false }
        onEnd(self)
        let id = self.id
        context.pool.submit {
            if let observer = provider.observer {
                // flowDidEnd waits for a running call to return (see askProvider).
                if taken.duringCall { observer.flowEndedDuringCall(id) } else { observer.flowDidEnd(id, result: result) }
            }
            taken.completion?(result)
        }
        return true
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    private func send(_ request: HTTPRequest) {
        let number = state.withLock { state -> UInt64 in
            state.requestsSent += 1
            state.awaitedRequest = state.requestsSent
            return state.requestsSent
        }
        context.transport.send(request) { [self] response in
            // Take the response only if it is the one awaited, and only once.
            let awaited = state.withLock { state -> Bool in
                guard !state.finished, state.awaitedRequest == number else { return false }
                state.awaitedRequest = 0
                return true
            }
            guard awaited else { return }
            switch response {
            case .success(let response): handle(response)
            case .failure(let error): finish(.failure(FlowRequests.error(for: error)))
            }
        }
    }

    /// Reads the IDP's answer and decides: ask the provider, or end.
    private func handle(_ response: HTTPResponse) {
        guard !isFinished else { return }
        switch FlowRequests.interpret(response, context: context) {
        case .finished(let outcome):
            finish(outcome)
        case .form(let form):
            let rejection = FlowRequests.rejection(in: form)
            let limit = context.configuration.maximumSteps
            let position = state.withLock { state -> (step: Int, attempt: Int)? in
                guard !state.finished else { return nil }
                if rejection == nil || state.step == 0 {
                    state.step += 1
                    state.attempt = 1
                } else {
                    state.attempt += 1
                }
                return (state.step, state.attempt)
            }
            guard let position else { return }
            guard position.step <= limit else {
                finish(.failure(IdpSdkError(.protocolError, "the IDP served more than \(limit) form steps")))
                return
            }
            let fields = form.visibleInputs.map { IdpSdkInputField(id: $0.id, label: $0.label, isSecret: $0.type == "password") }
            let data = IdpSdkInteractionData(
                inputFields: fields, flowId: id, step: position.step, attempt: position.attempt,
                tenantId: context.tenantId, clientId: context.clientId, userId: context.userId,
                traceParent: context.traceParent, previousError: rejection
            )
            context.pool.submit { [self] in askProvider(data, form: form) }
        }
    }

    /// Runs on a pool thread: the one place the provider is called.
    private func askProvider(_ data: IdpSdkInteractionData, form: XHTMLForm) {
        let begun = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.inProviderCall = true
            return true
        }
        guard begun else { return }
        let answer = context.provider.provider.provideCredentials(data)
        let endedDuringCall = state.withLock { state -> IdpSdkResult?? in
            state.inProviderCall = false
            guard state.finished else { return .none }
            defer { state.endAfterCall = nil }
            return .some(state.endAfterCall)
        }
        if let endedDuringCall {
            if let result = endedDuringCall, let observer = context.provider.observer {
                observer.flowDidEnd(id, result: result)
            }
            return
        }
        if let error = answer.error {
            finish(.failure(error))
            return
        }
        switch CredentialCheck.submission(for: answer.credentials ?? [:], data: data, form: form, context: context) {
        case .failure(let error):
            finish(.failure(error))
        case .success(let request):
            send(request)
        }
    }
}
