extension FaultPlan {
    /// One decision point: a fault site in one flow at one step.
    package struct Site: Hashable, Sendable, Comparable, CustomStringConvertible {
        /// The fault's name, such as `transport.duplicate`.
        package let fault: String
        /// The flow (its index in the scenario, from 0).
        package let flow: Int
        /// The flow's step at which the fault may strike.
        package let step: Int

        /// A site.
        ///
        /// - Parameters:
        ///   - fault: The fault's name.
        ///   - flow: The flow's index in the scenario.
        ///   - step: The flow's step.
        package init(fault: String, flow: Int, step: Int) {
            self.fault = fault
            self.flow = flow
            self.step = step
        }

        /// Orders sites by fault name, then flow, then step (how reproducers list them).
        ///
        /// - Parameters:
        ///   - lhs: A site.
        ///   - rhs: Another site.
        /// - Returns: Whether `lhs` comes first.
        package static func < (lhs: Site, rhs: Site) -> Bool { (lhs.fault, lhs.flow, lhs.step) < (rhs.fault, rhs.flow, rhs.step) }
        /// `fault@flow.step`, as a reproducer writes a site.
        package var description: String { "\(fault)@\(flow).\(step)" }
    }
}
