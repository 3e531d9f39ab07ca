import Foundation
import IdpPrimitives

/// A system to stress: a fresh world per run, what each flow does in it (calling
/// ``StressContext/seam(_:)`` where another flow may go first, and ``StressContext/fault(_:step:)``
/// where a fault may strike), and the invariants checked after the run.
package struct StressScenario<World: Sendable>: Sendable {
    /// The scenario's name, as reports print it.
    package let name: String
    /// How many flows a run starts.
    package let flows: Int
    /// Makes a fresh world for one run; called once per run, before any flow starts.
    package let makeWorld: @Sendable () -> World
    /// What one flow does in the world; each flow runs it on a thread of its own, with its own
    /// context.
    package let flow: @Sendable (World, StressContext) -> Void
    /// The names of the invariants the run broke, with what was seen; empty when all held.
    package let check: @Sendable (World) -> [String]
    /// Called once per run, after the world is made and before any flow starts, with the run's
    /// scheduler (`nil` when free-running) and faults: where a world hands its code under test the
    /// run's `ExecutionController` and transport.
    package let attach: (@Sendable (World, StressRun) -> Void)?
    /// Called when no flow can go on and some wait for a delivery: what the world does when it is
    /// quiet (a watchdog moving the clock). Returns whether it changed anything.
    package let quiesce: (@Sendable (World) -> Bool)?
    /// How long nothing may move in a run before it ends undecided: the last-resort guard, never
    /// a verdict (a flow is set aside only when the OS shows it blocked outside a seam, and a
    /// deadlock is judged when nobody can go on).
    package let guardLimit: Duration
    /// The name a deadlock (every unfinished flow blocked for ever) is reported under, before
    /// its detail: `no deadlock` by default.
    package let deadlockVerdict: String
    /// Name prefixes of the seams where a PCT change point may fall; `nil`: every decision
    /// (see ``ControlledScheduler/init(participants:strategy:seed:replay:guardLimit:onQuiescence:preemptionSeams:observe:)``).
    package let preemptionSeams: [String]?

    /// A scenario.
    ///
    /// - Parameters:
    ///   - name: The scenario's name.
    ///   - flows: How many flows a run starts.
    ///   - makeWorld: Makes a fresh world for one run.
    ///   - flow: What one flow does in the world.
    ///   - check: The invariants the run broke, with what was seen; empty when all held.
    ///   - attach: Hands the world the run's scheduler and faults; `nil`: nothing to attach.
    ///   - quiesce: What the world does when nobody can go on; `nil`: nothing.
    ///   - guardLimit: How long nothing may move before a run ends undecided; 60 s by default.
    ///   - deadlockVerdict: The name a deadlock is reported under; `no deadlock` by default.
    ///   - preemptionSeams: Name prefixes of the seams where a PCT change point may fall; `nil`
    ///     (every decision) by default.
    package init(name: String, flows: Int, makeWorld: @escaping @Sendable () -> World,
                flow: @escaping @Sendable (World, StressContext) -> Void, check: @escaping @Sendable (World) -> [String],
                attach: (@Sendable (World, StressRun) -> Void)? = nil, quiesce: (@Sendable (World) -> Bool)? = nil,
                guardLimit: Duration = .seconds(60), deadlockVerdict: String = "no deadlock",
                preemptionSeams: [String]? = nil) {
        self.name = name
        self.flows = flows
        self.makeWorld = makeWorld
        self.flow = flow
        self.check = check
        self.attach = attach
        self.quiesce = quiesce
        self.guardLimit = guardLimit
        self.deadlockVerdict = deadlockVerdict
        self.preemptionSeams = preemptionSeams
    }
}
