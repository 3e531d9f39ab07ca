import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk

/// The provider under test, with the provider faults of the run around it, and the cross-talk
/// check on every call it sees: the call's user and trace must be the flow's.
///
/// A hung provider (`provider.hang`) blocks until its flow ends (the flow's timeout on the run's
/// clock, or a cancel): under control it parks as a participant of the scheduler, which the
/// flow's end unparks, so the run stays controlled; free-running it waits on a semaphore the
/// flow's end signals, and the free run's watchdog moves the clock past the flow's timeout once
/// everyone else waits.
final class FaultingProvider: IdpSdkFlowObserving, Sendable {
    let inner: any IdpSdkInteractionInterface & Sendable
    /// Weak: a free run ends when its participants stop waiting, and a flow still on an SDK
    /// thread (a hung provider's) may call in after its world is gone.
    weak let world: SystemStress.World?
    let faults: StressFaults
    private let scheduler: ControlledScheduler?
    private let monitor: FreeRunMonitor?
    private let calls = LockedValue<[String: Int]>([:])
    /// What releases each hanging call, by flow.
    private let hanging = LockedValue<[IdpSdkFlowID: Release]>([:])
    /// Flows that ended while their call ran (a timeout, a cancel): the engine drops that call's
    /// answer, and the app may meanwhile have started its next flow on the same trace.
    private let endedDuringCall = LockedValue<Set<IdpSdkFlowID>>([])

    /// How a hanging call is let go.
    private enum Release {
        case participant(Int)
        case semaphore(DispatchSemaphore)
        /// The flow ended before the call hung: it does not hang.
        case ended
    }

    init(inner: any IdpSdkInteractionInterface & Sendable, world: SystemStress.World, faults: StressFaults, scheduler: ControlledScheduler?,
         monitor: FreeRunMonitor?) {
        self.inner = inner
        self.world = world
        self.faults = faults
        self.scheduler = scheduler
        self.monitor = monitor
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let trace = TraceParent.seamTrace(interactionData.traceParent) ?? "none"
        guard let world else { return .init(error: IdpSdkError(Self.subsystem, 1, "the stress run of this flow has ended")) }
        monitor?.beginWork()
        defer { monitor?.endWork() }
        let call = calls.withLock { $0[trace, default: 0] += 1; return $0[trace]! }
        world.checkCall(interactionData, trace: trace) { endedDuringCall.withLock { $0.contains(interactionData.flowId) } }
        if interactionData.attempt > 1, let rejection = interactionData.previousError {
            // The IDP refused what it received for this step. If the provider had given the
            // flow's own, right values, what the IDP received was not the provider's answer: the
            // engine handed that answer elsewhere, or sent another flow's.
            let wasRight = world.answeredRight(interactionData.flowId)
            if !world.expectsRefusal(trace: trace) {
                world.triggered(.noCrossTalk)
                world.checked(.noCrossTalk, !wasRight,
                              "the IDP refused (\(rejection.errorDescription)) step \(interactionData.step) of a flow for \(interactionData.userId ?? "(activation)") whose provider had answered it with the flow's own values")
            }
        }
        if faults.fires(.providerFail, trace: trace, step: call) {
            let error = IdpSdkError(Self.subsystem, 4_242, "injected provider failure, call \(call) of trace \(trace.prefix(8))")
            world.recordProviderError(error, flow: interactionData.flowId)
            return .init(error: error)
        }
        if faults.fires(.providerSlow, trace: trace, step: call) { usleep(1_000) }
        if faults.fires(.providerHang, trace: trace, step: call) { hang(interactionData.flowId) }
        let answer = inner.provideCredentials(interactionData)
        // An answer the engine drops is no cross-talk; and once the flow has ended, the truth
        // of its trace may already be the app's next flow's. The truth is read first: the app
        // sets its next flow's only after this flow has ended, which is marked before its end.
        let truth = world.credentials.values(for: interactionData)
        let ended = endedDuringCall.withLock { $0.remove(interactionData.flowId) != nil }
        if !ended, let given = answer.credentials, let truth {
            // The provider's answer must be this flow's own: another flow's secrets are cross-talk.
            let foreign = interactionData.inputFieldIds.filter { id in given[id].map { $0 != truth[id] } ?? false }
            let complete = interactionData.inputFieldIds.allSatisfy { given[$0] != nil }
            world.recordAnswer(interactionData.flowId, right: foreign.isEmpty && complete)
            if !foreign.isEmpty { world.recordWrongAnswer(for: interactionData.userId) }
            world.checked(.noCrossTalk, foreign.isEmpty,
                          "the provider answered \(foreign.joined(separator: ", ")) of a flow for \(interactionData.userId ?? "(activation)") with another flow's values")
        }
        return answer
    }

    /// Blocks the calling SDK thread until flow `flowId` ends.
    private func hang(_ flowId: IdpSdkFlowID) {
        monitor?.endWork()
        defer { monitor?.beginWork() }
        if let scheduler, let participant = scheduler.current {
            let parks = hanging.withLock { hanging -> Bool in
                if case .ended = hanging[flowId] { return false }
                hanging[flowId] = .participant(participant)
                return true
            }
            if parks { scheduler.park(participant, "provider.hang") }
        } else {
            let gate = DispatchSemaphore(value: 0)
            let waits = hanging.withLock { hanging -> Bool in
                if case .ended = hanging[flowId] { return false }
                hanging[flowId] = .semaphore(gate)
                return true
            }
            // A long bound: the free run's watchdog ends the flow long before.
            if waits { _ = gate.wait(timeout: .now() + 60) }
        }
        hanging.withLock { _ = $0.removeValue(forKey: flowId) }
    }

    func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
        endedDuringCall.withLock { _ = $0.insert(flowId) }
        world?.recordEndedDuringCall(flowId)
        releaseHang(of: flowId, keepEnded: true)
        (inner as? any IdpSdkFlowObserving)?.flowEndedDuringCall(flowId)
    }

    func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        // Its flow ended: a call of it still hanging goes on (an engine that took another answer
        // for the call ends the flow while the call still hangs).
        releaseHang(of: flowId, keepEnded: false)
        (inner as? any IdpSdkFlowObserving)?.flowDidEnd(flowId, result: result)
    }

    /// Lets a hanging call of `flowId` go on; with `keepEnded`, a call that hangs later returns at
    /// once (the flow ended while it ran).
    private func releaseHang(of flowId: IdpSdkFlowID, keepEnded: Bool) {
        let release = hanging.withLock { hanging -> Release? in
            let release = hanging[flowId]
            if keepEnded, release == nil { hanging[flowId] = .ended } else if !keepEnded, case .ended = release { hanging[flowId] = nil }
            return release
        }
        switch release {
        case .participant(let participant): scheduler?.unpark(participant)
        case .semaphore(let gate): gate.signal()
        case .ended, nil: break
        }
    }

    /// The subsystem of the errors this provider injects.
    static let subsystem = "IdpHarness.Stress"
}
