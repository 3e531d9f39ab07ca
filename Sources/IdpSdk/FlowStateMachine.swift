/// The life of one `getAuthorizationCode` flow as a plain value: which request it awaits, which
/// provider call it makes, how it ends. One mutating method per event, each returning what the
/// caller must do after releasing the lock that holds the value (``Flow`` is that storage).
///
/// Generic over the completion and the outcome only so that its tests can use plain values; the
/// engine uses `@Sendable (IdpSdkResult) -> Void` and `IdpSdkResult`.
///
/// The rules it keeps:
/// - the completion comes out of it exactly once, in the one ``finish(_:observing:)`` that ends the
///   flow; every later finish gets ``FinishAction/none``;
/// - only the response to the last request sent is taken, and only once;
/// - a flow that ended while a provider call was running tells an observing provider
///   ``ObserverNotice/endedDuringCall`` at once and, when that call returns,
///   ``ProviderCallEndAction/notifyDidEnd(_:)``; a flow that ended outside a call tells it
///   ``ObserverNotice/didEnd(_:)`` with the completion; never both `didEnd`s.
struct FlowStateMachine<Completion, Outcome> {
    /// Where a running flow is: the form step being answered, from 1 (0 before the first form),
    /// the attempt at it, and how many requests it has sent.
    struct Progress: Equatable, Sendable {
        var step = 0
        var attempt = 0
        var requestsSent: UInt64 = 0
    }

    /// Each state holds what belongs to it: a running flow its progress; an ended flow what it
    /// still owes an observer. A running flow's completion is held beside the state
    /// (``completion``), so that the events of a running flow, which replace one state by the
    /// next, copy plain values only.
    enum State {
        /// Created; nothing sent yet.
        case created
        /// Awaiting the IDP's answer to request `request` (numbered from 1).
        case awaitingIdp(request: UInt64, Progress)
        /// The engine is reading an answer or building the next request; no request and no
        /// provider call is outstanding.
        case deciding(Progress)
        /// The provider is to be asked for the progress's step and attempt (queued for, or running
        /// on, an SDK thread); `running` once the call has begun.
        case askingProvider(Progress, running: Bool)
        /// Ended during a provider call; `notice` is the outcome to tell the observing provider
        /// when the call returns (`nil` when the provider does not observe flows). Indirect: an
        /// outcome is large, and a state that holds one inline makes every state as large, which
        /// each event copies and the flow's lock spreads over more cache lines.
        indirect case finishedDuringCall(notice: Outcome?)
        /// Ended; nothing more happens.
        case finished
    }

    /// What to tell an observing provider when the flow ends.
    enum ObserverNotice {
        /// Nothing: the provider does not observe flows.
        case none
        /// `flowDidEnd(_:result:)` now, before the completion.
        case didEnd(Outcome)
        /// `flowEndedDuringCall(_:)` now; `flowDidEnd` follows when the running call returns.
        case endedDuringCall
    }

    enum FinishAction {
        /// The flow had ended already: do nothing.
        case none
        /// The flow ends now: tell the observer, then run the completion (exactly once).
        case complete(Completion, notice: ObserverNotice)
    }

    enum FormAction: Equatable {
        /// Ask the provider for this step and attempt.
        case askProvider(step: Int, attempt: Int)
        /// The IDP served more steps than allowed: finish with a protocol error.
        case stepLimitExceeded
        /// The flow has ended: do nothing.
        case ignore
    }

    enum ProviderCallEndAction {
        /// Use the answer: submit it, or finish with its error.
        case proceed
        /// The flow ended during the call: drop the answer.
        case discard
        /// The flow ended during the call: drop the answer and tell the observer `flowDidEnd` now.
        case notifyDidEnd(Outcome)
    }

    private(set) var state: State
    /// The completion while the flow runs (every state but the two ended ones); it leaves the
    /// machine in the one ``finish(_:observing:)`` that ends the flow, which sets it to `nil`.
    private var completion: Completion?

    init(completion: Completion) {
        state = .created
        self.completion = completion
    }

    var isFinished: Bool {
        switch state {
        case .finished, .finishedDuringCall: true
        case .created, .awaitingIdp, .deciding, .askingProvider: false
        }
    }

    /// The running flow's progress; `nil` once it has ended.
    private var running: Progress? {
        switch state {
        case .created: Progress()
        case .awaitingIdp(_, let progress), .deciding(let progress), .askingProvider(let progress, _): progress
        case .finishedDuringCall, .finished: nil
        }
    }

    /// A request is about to be sent. Returns its number, or `nil` if the flow has ended (then
    /// nothing is sent).
    mutating func sendingRequest() -> UInt64? {
        guard var progress = running else { return nil }
        progress.requestsSent += 1
        state = .awaitingIdp(request: progress.requestsSent, progress)
        return progress.requestsSent
    }

    /// The transport answered request `number`. Returns whether to take the answer: only the
    /// awaited request's, only once, only while the flow runs (a faulty transport's duplicate is
    /// dropped).
    mutating func responseArrived(for number: UInt64) -> Bool {
        guard case .awaitingIdp(let awaited, let progress) = state, awaited == number else { return false }
        state = .deciding(progress)
        return true
    }

    /// The answer is a form; `rejected` when it re-serves the step with the IDP's rejection.
    mutating func formServed(rejected: Bool, stepLimit: Int) -> FormAction {
        guard case .deciding(var progress) = state else { return .ignore }
        if !rejected || progress.step == 0 {
            progress.step += 1
            progress.attempt = 1
        } else {
            progress.attempt += 1
        }
        guard progress.step <= stepLimit else {
            state = .deciding(progress)
            return .stepLimitExceeded
        }
        state = .askingProvider(progress, running: false)
        return .askProvider(step: progress.step, attempt: progress.attempt)
    }

    /// A provider call is about to begin. Returns whether to make it (`false` once the flow has
    /// ended while the call waited for a thread).
    mutating func providerCallBegins() -> Bool {
        guard case .askingProvider(let progress, running: false) = state else { return false }
        state = .askingProvider(progress, running: true)
        return true
    }

    /// The provider call returned.
    mutating func providerCallEnded() -> ProviderCallEndAction {
        switch state {
        case .askingProvider(let progress, running: true):
            state = .deciding(progress)
            return .proceed
        case .finishedDuringCall(let notice):
            state = .finished
            return notice.map(ProviderCallEndAction.notifyDidEnd) ?? .discard
        case .created, .awaitingIdp, .deciding, .askingProvider, .finished:
            // A call that did not begin in this machine (a caller's bug): nothing to hand out.
            return .discard
        }
    }

    /// Ends the flow with `outcome` (success, IDP or provider error, cancellation, timeout), unless
    /// it has ended already. `observing`: whether the provider observes flows.
    mutating func finish(_ outcome: Outcome, observing: Bool) -> FinishAction {
        guard !isFinished, let completion = completion.take() else { return .none }
        if case .askingProvider(_, running: true) = state {
            state = .finishedDuringCall(notice: observing ? outcome : nil)
            return .complete(completion, notice: observing ? .endedDuringCall : .none)
        }
        state = .finished
        return .complete(completion, notice: observing ? .didEnd(outcome) : .none)
    }
}

extension FlowStateMachine: Sendable where Completion: Sendable, Outcome: Sendable {}
extension FlowStateMachine.State: Sendable where Outcome: Sendable {}
extension FlowStateMachine.ObserverNotice: Sendable where Outcome: Sendable {}
