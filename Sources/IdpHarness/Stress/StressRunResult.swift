import Foundation
import IdpPrimitives

/// One run's result.
public struct StressRunResult: Sendable {
    /// The invariants broken (with a deadlock as "no deadlock: …").
    public let violations: [String]
    /// How the scheduler's run ended (its decisions, whether it deadlocked or lost control); `nil`
    /// for a run that was not controlled.
    public let outcome: ControlledScheduler.Outcome?
    /// The fault sites that fired, in the order they fired.
    public let fired: [FaultPlan.Site]
    /// The run as it happened, with the decisions the scheduler made: replaying it repeats the run.
    public let reproducer: StressReproducer
}
