extension SystemStress {
    /// How often each invariant's trigger happened, how often it was judged, and how often a
    /// judgment was set aside for a recorded reason (a fault struck in between); and the
    /// interleavings reached.
    ///
    /// A trigger is what an invariant exists to judge: a flow started, a provider's error, a
    /// logout, a login, a refresh at an expiry. An invariant whose trigger happened in a run but
    /// that was neither judged nor excused there was not exercised: a failure of the stress, not
    /// of the product (``Report/unexercised``).
    public struct Tally: Sendable, Equatable {
        /// Trigger events, by invariant.
        public var triggers: [Invariant: Int] = [:]
        /// Judgments made, by invariant.
        public var judged: [Invariant: Int] = [:]
        /// Judgments set aside for a recorded reason, by invariant.
        public var excused: [Invariant: Int] = [:]
        /// How often each interleaving was reached.
        public var interleavings: [Interleaving: Int] = [:]

        /// Adds `other`'s counts to these.
        /// - Parameter other: Another run's tally.
        mutating func add(_ other: Tally) {
            for (invariant, count) in other.triggers { triggers[invariant, default: 0] += count }
            for (invariant, count) in other.judged { judged[invariant, default: 0] += count }
            for (invariant, count) in other.excused { excused[invariant, default: 0] += count }
            for (interleaving, count) in other.interleavings { interleavings[interleaving, default: 0] += count }
        }
    }
}
