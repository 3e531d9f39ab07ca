import Foundation
import IdpPrimitives
import IdpSdk

/// Wraps the provider under test: notes every call (step, attempt, rejection, duration, error,
/// how many calls were inside the provider as it entered) and which flows are inside the provider
/// right now, on which thread — what the watchdog reports when a flow hangs. Holds each call at
/// the run's ``CallGate`` first, so calls enter the provider together. Never sees or keeps values
/// beyond the call.
///
/// `@unchecked Sendable`: its own state lives in `LockedValue`s; `base`, the provider under test,
/// is an immutable reference that is shared across threads on purpose — whether that is safe is
/// exactly what the kit checks (``IdpSdkInteractionInterface`` leaves thread safety to the
/// implementer, as the documents do).
final class ConformanceProbe: IdpSdkFlowObserving, @unchecked Sendable {
    struct Inside: Sendable {
        let thread: String
        let step: Int
        let attempt: Int
        let since: ContinuousClock.Instant
    }

    struct FlowCalls: Sendable {
        var calls = 0
        var sawRejection = false
        var lastError: IdpSdkError?
        var lastStep = 0
        var lastAttempt = 0
        var endedCount = 0
    }

    /// Time inside the provider and the calls inside it on entering, per call.
    struct CallFigures: Sendable {
        var durations: [Duration] = []
        var overlap: [Int] = []
    }

    let base: any IdpSdkInteractionInterface
    private let gate: CallGate?
    private let overlap: CallOverlap
    private let inside = LockedValue<[IdpSdkFlowID: Inside]>([:])
    private let flows = LockedValue<[IdpSdkFlowID: FlowCalls]>([:])
    private let figures = LockedValue(CallFigures())
    private let misplaced = LockedValue<[String]>([])

    /// - Parameters:
    ///   - base: The provider under test.
    ///   - overlap: Counts the calls inside the provider, over every probe of the run.
    ///   - gate: Where calls wait to enter the provider together; `nil`: they go in at once.
    init(_ base: any IdpSdkInteractionInterface, overlap: CallOverlap = CallOverlap(), gate: CallGate? = nil) {
        self.base = base
        self.overlap = overlap
        self.gate = gate
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let id = interactionData.flowId
        let began = ContinuousClock.now
        let thread = IdpSdkService.currentThreadName
        if !IdpSdkService.isSDKThread || withUnsafeCurrentTask(body: { $0 != nil }) || Thread.isMainThread {
            misplaced.withLock { $0.append("\(id) step \(interactionData.step) ran on \(thread)") }
        }
        gate?.pass()
        inside.withLock { $0[id] = Inside(thread: thread, step: interactionData.step, attempt: interactionData.attempt, since: began) }
        let entered = ContinuousClock.now
        let together = overlap.enter()
        let result = base.provideCredentials(interactionData)
        overlap.leave()
        let took = ContinuousClock.now - entered
        inside.withLock { _ = $0.removeValue(forKey: id) }
        figures.withLock {
            $0.durations.append(took)
            $0.overlap.append(together)
        }
        flows.withLock { flows in
            var record = flows[id] ?? FlowCalls()
            record.calls += 1
            record.sawRejection = record.sawRejection || interactionData.previousError != nil
            record.lastError = result.error
            record.lastStep = interactionData.step
            record.lastAttempt = interactionData.attempt
            flows[id] = record
        }
        return result
    }

    func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
        (base as? any IdpSdkFlowObserving)?.flowEndedDuringCall(flowId)
    }

    func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        flows.withLock { $0[flowId, default: FlowCalls()].endedCount += 1 }
        (base as? any IdpSdkFlowObserving)?.flowDidEnd(flowId, result: result)
    }

    func insideNow(_ flowId: IdpSdkFlowID) -> Inside? { inside.withLock { $0[flowId] } }
    func calls(_ flowId: IdpSdkFlowID) -> FlowCalls? { flows.withLock { $0[flowId] } }
    var allCalls: [IdpSdkFlowID: FlowCalls] { flows.withLock { $0 } }
    var callDurations: [Duration] { figures.withLock { $0.durations } }
    /// Per call, the calls inside the provider as it entered (itself included).
    var overlapSamples: [Int] { figures.withLock { $0.overlap } }
    var misplacedCalls: [String] { misplaced.withLock { $0 } }
}

/// Counts completions per flow: the exactly-once check.
package final class CompletionLedger: Sendable {
    private let counts = LockedValue<[IdpSdkFlowID: Int]>([:])

    /// An empty ledger.
    package init() {}

    /// Notes one completion of `flowId`.
    package func record(_ flowId: IdpSdkFlowID) {
        counts.withLock { $0[flowId, default: 0] += 1 }
    }

    /// Flows that completed more than once, with their counts.
    package var duplicates: [IdpSdkFlowID: Int] { counts.withLock { $0.filter { $0.value > 1 } } }

    /// Flows that completed at least once.
    package var completedFlows: Int { counts.withLock { $0.count } }

    /// Completions in all.
    package var completions: Int { counts.withLock { $0.values.reduce(0, +) } }

    /// Completions per flow.
    var perFlow: [IdpSdkFlowID: Int] { counts.withLock { $0 } }
}
