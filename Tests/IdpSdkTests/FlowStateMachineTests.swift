@testable import IdpSdk
import Testing

/// The flow's rules on the plain value, one event at a time, without threads: the completion is
/// a string and the outcome a string, so each test reads what came out.
@Suite("The flow state machine")
struct FlowStateMachineTests {
    typealias Machine = FlowStateMachine<String, String>

    /// A machine that has sent its first request and taken the IDP's first form.
    static func askingFirstStep() -> Machine {
        var machine = Machine(completion: "completion")
        let request = machine.sendingRequest()
        #expect(request == 1)
        let event1 = machine.responseArrived(for: 1)
        #expect(event1)
        let event2 = machine.formServed(rejected: false, stepLimit: 32)
        #expect(event2 == .askProvider(step: 1, attempt: 1))
        return machine
    }

    /// The completion a finish hands out, or `nil` for ``FlowStateMachine/FinishAction/none``.
    static func completion(of action: Machine.FinishAction) -> (completion: String, notice: Machine.ObserverNotice)? {
        guard case .complete(let completion, let notice) = action else { return nil }
        return (completion, notice)
    }

    @Test("the completion comes out exactly once, whichever of success, cancel and timeout comes first")
    func completionExactlyOnce() {
        // Given a flow awaiting the IDP
        var machine = Machine(completion: "completion")
        _ = machine.sendingRequest()

        // When success, cancel and timeout all try to finish it
        let first = machine.finish("success", observing: false)
        let second = machine.finish("cancelled", observing: false)
        let third = machine.finish("timed out", observing: true)

        // Then only the first hands out the completion
        #expect(Self.completion(of: first)?.completion == "completion")
        #expect(Self.completion(of: second) == nil)
        #expect(Self.completion(of: third) == nil)
        #expect(machine.isFinished)
    }

    @Test("only the awaited request's answer is taken, and only once")
    func onlyAwaitedResponse() {
        var machine = Machine(completion: "c")
        let event3 = machine.sendingRequest()
        #expect(event3 == 1)
        let event4 = machine.responseArrived(for: 2)
        #expect(!event4)
        let event5 = machine.responseArrived(for: 1)
        #expect(event5)
        // a faulty transport's duplicate
        let event6 = machine.responseArrived(for: 1)
        #expect(!event6)
        _ = machine.formServed(rejected: false, stepLimit: 32)
        let event7 = machine.providerCallBegins()
        #expect(event7)
        let event8 = machine.providerCallEnded()
        #expect(Self.isProceed(event8))
        let event9 = machine.sendingRequest()
        #expect(event9 == 2)
        // the first request's late answer
        let event10 = machine.responseArrived(for: 1)
        #expect(!event10)
        let event11 = machine.responseArrived(for: 2)
        #expect(event11)
    }

    @Test("a flow that ended sends nothing and takes no answer")
    func endedFlowIsSilent() {
        var machine = Machine(completion: "c")
        _ = machine.sendingRequest()
        _ = machine.finish("cancelled", observing: false)
        let event12 = machine.responseArrived(for: 1)
        #expect(!event12)
        let event13 = machine.sendingRequest()
        #expect(event13 == nil)
        let event14 = machine.formServed(rejected: false, stepLimit: 32)
        #expect(event14 == .ignore)
    }

    @Test("a rejection re-asks the same step with the next attempt; a new form is the next step")
    func stepsAndAttempts() {
        var machine = Self.askingFirstStep()
        func answerAndServe(rejected: Bool) -> Machine.FormAction {
            let event15 = machine.providerCallBegins()
            #expect(event15)
            let event16 = machine.providerCallEnded()
            #expect(Self.isProceed(event16))
            let number = machine.sendingRequest()!
            let event17 = machine.responseArrived(for: number)
            #expect(event17)
            return machine.formServed(rejected: rejected, stepLimit: 2)
        }
        #expect(answerAndServe(rejected: true) == .askProvider(step: 1, attempt: 2))
        #expect(answerAndServe(rejected: true) == .askProvider(step: 1, attempt: 3))
        #expect(answerAndServe(rejected: false) == .askProvider(step: 2, attempt: 1))
        #expect(answerAndServe(rejected: false) == .stepLimitExceeded)
    }

    @Test("ended during a call: the observer is told at once that it ended during the call, and flowDidEnd when the call returns")
    func endedDuringCallWithObserver() {
        // Given a provider call in progress
        var machine = Self.askingFirstStep()
        let event18 = machine.providerCallBegins()
        #expect(event18)

        // When the flow is cancelled during it
        let finished = Self.completion(of: machine.finish("cancelled", observing: true))

        // Then the completion comes out with "ended during call", and the call's end carries flowDidEnd
        #expect(finished?.completion == "completion")
        guard case .endedDuringCall? = finished?.notice else {
            Issue.record("expected endedDuringCall, got \(String(describing: finished?.notice))")
            return
        }
        guard case .notifyDidEnd(let outcome) = machine.providerCallEnded() else {
            Issue.record("expected notifyDidEnd when the call returned")
            return
        }
        #expect(outcome == "cancelled")
        // and a second return (a caller's bug) hands out nothing
        let event19 = machine.providerCallEnded()
        #expect(Self.isDiscard(event19))
    }

    @Test("ended during a call of a provider that does not observe: the late answer is discarded, nothing to notify")
    func endedDuringCallWithoutObserver() {
        var machine = Self.askingFirstStep()
        let event20 = machine.providerCallBegins()
        #expect(event20)
        guard case .none? = Self.completion(of: machine.finish("timed out", observing: false))?.notice else {
            Issue.record("expected no notice")
            return
        }
        let event21 = machine.providerCallEnded()
        #expect(Self.isDiscard(event21))
    }

    @Test("ended while the call waited for a thread: the call is not made, and the observer gets flowDidEnd with the completion")
    func endedBeforeCallBegan() {
        var machine = Self.askingFirstStep()
        let finished = Self.completion(of: machine.finish("cancelled", observing: true))
        guard case .didEnd(let outcome)? = finished?.notice else {
            Issue.record("expected didEnd, got \(String(describing: finished?.notice))")
            return
        }
        #expect(outcome == "cancelled")
        let event22 = machine.providerCallBegins()
        #expect(!event22)
    }

    @Test("ended outside a call: flowDidEnd comes with the completion, never a second time")
    func endedOutsideCall() {
        var machine = Self.askingFirstStep()
        let event23 = machine.providerCallBegins()
        #expect(event23)
        let event24 = machine.providerCallEnded()
        #expect(Self.isProceed(event24))
        _ = machine.sendingRequest()
        let finished = Self.completion(of: machine.finish("success", observing: true))
        guard case .didEnd("success")? = finished?.notice else {
            Issue.record("expected didEnd(success)")
            return
        }
        let late = machine.finish("timed out", observing: true)
        #expect(Self.completion(of: late) == nil)
        let event25 = machine.providerCallBegins()
        #expect(!event25)
        let event26 = machine.providerCallEnded()
        #expect(Self.isDiscard(event26))
    }

    /// A completion the test can watch go.
    final class Completion {}

    @Test("the completion leaves the machine when the flow ends, during a provider call or outside one")
    func endedMachineKeepsNoCompletion() {
        for duringCall in [false, true] {
            // Given a running flow whose completion only the machine holds
            var completion: Completion? = Completion()
            weak let watched = completion
            var machine = FlowStateMachine<Completion, String>(completion: completion!)
            completion = nil
            _ = machine.sendingRequest()
            _ = machine.responseArrived(for: 1)
            _ = machine.formServed(rejected: false, stepLimit: 32)
            if duringCall { _ = machine.providerCallBegins() }
            #expect(watched != nil, "a running flow keeps its completion")

            // When it ends and the completion handed out is run and let go
            let action = machine.finish("cancelled", observing: true)
            if case .complete(let handedOut, _) = action { #expect(handedOut === watched) } else { Issue.record("no completion handed out") }
            _ = consume action

            // Then the ended machine, still alive, holds no reference to it
            #expect(watched == nil, "duringCall \(duringCall)")
            #expect(machine.isFinished)
        }
    }

    static func isProceed(_ action: Machine.ProviderCallEndAction) -> Bool {
        if case .proceed = action { true } else { false }
    }

    static func isDiscard(_ action: Machine.ProviderCallEndAction) -> Bool {
        if case .discard = action { true } else { false }
    }
}
