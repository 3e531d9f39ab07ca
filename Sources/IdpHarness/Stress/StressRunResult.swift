import Foundation
import IdpPrimitives

/// One run's result.
package struct StressRunResult: Sendable {
    /// The invariants broken (with a deadlock as "no deadlock: …").
    package let violations: [String]
    /// How the scheduler's run ended (its decisions, whether it deadlocked or lost control); `nil`
    /// for a run that was not controlled.
    package let outcome: ControlledScheduler.Outcome?
    /// The fault sites that fired, in the order they fired.
    package let fired: [FaultPlan.Site]
    /// The run as it happened, with the decisions the scheduler made: replaying it repeats the run.
    package let reproducer: StressReproducer
}
