import Foundation
import IdpPrimitives

/// What a world learns of the run it is in (``StressScenario/attach``).
package struct StressRun: Sendable {
    /// `nil` when free-running.
    package let scheduler: ControlledScheduler?
    /// The run's fault plan (``FaultPlan/none`` when no fault is asked for).
    package let faults: FaultPlan
    /// The run's seed: what a world draws its per-run choices from (the scenario's script), so
    /// that each run plays another and a replay plays the same.
    package let seed: UInt64
    let fired: LockedValue<[FaultPlan.Site]>
    /// A free run's watchdog, which the world tells of its work; `nil` under control.
    let monitor: FreeRunMonitor?

    /// Whether fault `name` strikes flow `flow` at `step`; recorded as fired if so.
    package func fault(_ name: String, flow: Int, step: Int) -> Bool {
        let site = FaultPlan.Site(fault: name, flow: flow, step: step)
        guard faults.fires(site) else { return false }
        fired.withLock { $0.append(site) }
        return true
    }
}
