import Foundation
import IdpPrimitives
import IdpSdk

/// Wraps the provider under test: notes every call (step, attempt, rejection, duration, error)
/// and which flows are inside the provider right now, on which thread — what the watchdog
/// reports when a flow hangs. Never sees or keeps values beyond the call.
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

    let base: any IdpSdkInteractionInterface
    private let inside = LockedValue<[IdpSdkFlowID: Inside]>([:])
    private let flows = LockedValue<[IdpSdkFlowID: FlowCalls]>([:])
    private let durations = LockedValue<[Duration]>([])
    private let misplaced = LockedValue<[String]>([])

    init(_ base: any IdpSdkInteractionInterface) {
        self.base = base
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let id = interactionData.flowId
        let began = ContinuousClock.now
        let thread = IdpSdkService.currentThreadName
        if !IdpSdkService.isSDKThread || withUnsafeCurrentTask(body: { $0 != nil }) || Thread.isMainThread {
            misplaced.withLock { $0.append("flow \(id) step \(interactionData.step) ran on \(thread)") }
        }
        inside.withLock { $0[id] = Inside(thread: thread, step: interactionData.step, attempt: interactionData.attempt, since: began) }
        let result = base.provideCredentials(interactionData)
        let took = ContinuousClock.now - began
        inside.withLock { _ = $0.removeValue(forKey: id) }
        durations.withLock { $0.append(took) }
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
    var callDurations: [Duration] { durations.withLock { $0 } }
    var misplacedCalls: [String] { misplaced.withLock { $0 } }
}

/// Counts completions per flow: the exactly-once check.
public final class CompletionLedger: Sendable {
    private let counts = LockedValue<[IdpSdkFlowID: Int]>([:])

    /// An empty ledger.
    public init() {}

    /// Notes one completion of `flowId`.
    public func record(_ flowId: IdpSdkFlowID) {
        counts.withLock { $0[flowId, default: 0] += 1 }
    }

    /// Flows that completed more than once, with their counts.
    public var duplicates: [IdpSdkFlowID: Int] { counts.withLock { $0.filter { $0.value > 1 } } }

    /// Flows that completed at least once.
    public var completedFlows: Int { counts.withLock { $0.count } }

    /// Completions in all.
    public var completions: Int { counts.withLock { $0.values.reduce(0, +) } }

    /// Completions per flow.
    var perFlow: [IdpSdkFlowID: Int] { counts.withLock { $0 } }
}
