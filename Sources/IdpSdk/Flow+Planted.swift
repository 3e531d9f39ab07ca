import IdpPrimitives
import IdpWireFormats

// The engine's planted bugs (`PlantedBug.engine…`), beside the flow: each hook is called once from
// `Flow`'s main line. In a debug build it acts when its bug is planted; a release build compiles
// each hook to the unplanted behaviour and has none of the planted code.
extension Flow {
    #if DEBUG
    /// In `finish(_:from:)`, after the flow ended: whether a planted bug drops the completion
    /// (`engineDropsCompletionDuringProviderCall`); it may also keep it for a late response
    /// (`engineCompletesAgainOnLateResponse`) or deliver it a second time
    /// (`engineCompletesFailuresTwice`).
    func plantedEnding(_ completion: FlowCompletion, result: IdpSdkResult, notice: Machine.ObserverNotice,
                       origin: Origin) -> Bool {
        let planted = context.shared.configuration.plantedBug
        if planted.isOn(.engineDropsCompletionDuringProviderCall), case .endedDuringCall = notice { return true }
        if planted.isOn(.engineCompletesAgainOnLateResponse), origin == .outside, let scratch = planted.scratch {
            let again: @Sendable () -> Void = { [self] in handOff("completion") { completion.deliverAgain(result) } }
            scratch.withLock { kept in
                var byFlow = kept as? [IdpSdkFlowID: @Sendable () -> Void] ?? [:]
                byFlow[id] = again
                kept = byFlow
            }
        }
        if planted.isOn(.engineCompletesFailuresTwice), origin == .engine, result.idpSdkError != nil {
            handOff("completion") { completion.deliverAgain(result) }
        }
        return false
    }

    /// In `send(_:answeredInline:)`, for a response no longer awaited: the completion a planted
    /// engine kept for it, delivered again.
    func plantedLateResponse() {
        let planted = context.shared.configuration.plantedBug
        guard planted.isOn(.engineCompletesAgainOnLateResponse), let scratch = planted.scratch else { return }
        let again = scratch.withLock { ($0 as? [IdpSdkFlowID: @Sendable () -> Void])?[id] }
        again?()
    }

    /// In `askProvider(_:form:)`, before the call: a planted engine puts the asking flow in its
    /// one slot for the whole service (`engineRoutesAnswerThroughSharedSlot`).
    func plantedAsking(_ data: IdpSdkInteractionData, form: XHTMLForm) {
        let planted = context.shared.configuration.plantedBug
        guard planted.isOn(.engineRoutesAnswerThroughSharedSlot) else { return }
        planted.scratch?.withLock { $0 = PlantedAsking(flow: self, data: data, form: form) }
    }

    /// In `askProvider(_:form:)`, after the call: whether a planted engine handed the answer to
    /// whichever flow is in its slot now.
    func plantedRouting(_ answer: IdpSdkProvideCredentialsResult) -> Bool {
        let planted = context.shared.configuration.plantedBug
        guard planted.isOn(.engineRoutesAnswerThroughSharedSlot),
              let asking = planted.scratch?.withLock({ $0 }) as? PlantedAsking, let flow = asking.flow else { return false }
        flow.take(answer, data: asking.data, form: asking.form)
        return true
    }

    /// In `take(_:data:form:)`: the answer a planted engine goes on with
    /// (`engineAnswersFromAnotherFlowAfterProviderError`).
    func plantedAnswer(_ answer: IdpSdkProvideCredentialsResult, data: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        PlantedAnswers.apply(context.shared.configuration.plantedBug, to: answer, data: data)
    }

    /// In `take(_:data:form:)`: the error a flow ends with for its provider's `error`
    /// (`engineReplacesProviderError` replaces it).
    func plantedDelivery(of error: IdpSdkError) -> IdpSdkError {
        context.shared.configuration.plantedBug.isOn(.engineReplacesProviderError) ? IdpSdkError(.protocolError, "the provider failed") : error
    }

    /// In `IdpSdkService.cancel()`: the error a planted engine ends a cancelled flow with
    /// (`engineReportsCancelAsConnectionLost`); `nil`: `cancelled`.
    var plantedCancelError: IdpSdkError? {
        context.shared.configuration.plantedBug.isOn(.engineReportsCancelAsConnectionLost) ? IdpSdkError(.connectionLost, "the connection to the IDP was lost") : nil
    }
    #else
    @inline(__always)
    func plantedEnding(_ completion: FlowCompletion, result: IdpSdkResult, notice: Machine.ObserverNotice,
                       origin: Origin) -> Bool { false }
    @inline(__always)
    func plantedLateResponse() {}
    @inline(__always)
    func plantedAsking(_ data: IdpSdkInteractionData, form: XHTMLForm) {}
    @inline(__always)
    func plantedRouting(_ answer: IdpSdkProvideCredentialsResult) -> Bool { false }
    @inline(__always)
    func plantedAnswer(_ answer: IdpSdkProvideCredentialsResult, data: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { answer }
    @inline(__always)
    func plantedDelivery(of error: IdpSdkError) -> IdpSdkError { error }
    @inline(__always)
    var plantedCancelError: IdpSdkError? { nil }
    #endif
}

#if DEBUG
extension FlowCompletion {
    /// Delivers `result` once more, as the planted engines that complete twice do.
    func deliverAgain(_ result: IdpSdkResult) {
        switch self {
        case .handler(let handler): handler(result)
        case .continuation(let continuation): continuation.resume(returning: result)
        }
    }
}

/// ``PlantedBug/engineAnswersFromAnotherFlowAfterProviderError``: the last answer a provider gave
/// for each user and step, as the planted engine keeps them in one table for the whole service
/// (the switch's scratch).
enum PlantedAnswers {
    /// The answer the planted engine goes on with: `answer`, kept when it holds credentials; the
    /// kept answer for the same user and step in its place when it is an error. Unchanged when the
    /// bug is off.
    static func apply(_ bug: PlantedBugSwitch, to answer: IdpSdkProvideCredentialsResult, data: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        guard bug.isOn(.engineAnswersFromAnotherFlowAfterProviderError), let scratch = bug.scratch else { return answer }
        let key = "\(data.userId ?? "")|\(data.step)"
        let kept = scratch.withLock { table -> [String: String]? in
            var answers = table as? [String: [String: String]] ?? [:]
            defer { table = answers }
            guard let credentials = answer.credentials else { return answers[key] }
            answers[key] = credentials
            return nil
        }
        return kept.map { IdpSdkProvideCredentialsResult(credentials: $0) } ?? answer
    }
}

/// ``PlantedBug/engineRoutesAnswerThroughSharedSlot``: the flow whose provider call runs, as the
/// planted engine keeps it in one slot for the whole service (the switch's scratch).
final class PlantedAsking: Sendable {
    weak let flow: Flow?
    let data: IdpSdkInteractionData
    let form: XHTMLForm

    init(flow: Flow, data: IdpSdkInteractionData, form: XHTMLForm) {
        self.flow = flow
        self.data = data
        self.form = form
    }
}
#endif
