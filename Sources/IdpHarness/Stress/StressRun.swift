import Foundation
import IdpPrimitives

/// What a world learns of the run it is in (``StressScenario/attach``).
public struct StressRun: Sendable {
    /// `nil` when free-running.
    public let scheduler: ControlledScheduler?
    /// The run's fault plan (``FaultPlan/none`` when no fault is asked for).
    public let faults: FaultPlan
    let fired: LockedValue<[FaultPlan.Site]>

    /// Whether fault `name` strikes flow `flow` at `step`; recorded as fired if so.
    public func fault(_ name: String, flow: Int, step: Int) -> Bool {
        let site = FaultPlan.Site(fault: name, flow: flow, step: step)
        guard faults.fires(site) else { return false }
        fired.withLock { $0.append(site) }
        return true
    }
}
