extension ControlledScheduler {
    /// What a run did.
    package struct Outcome: Sendable, Equatable {
        /// The participant chosen at each decision: the run's schedule.
        package var decisions: [Int]
        /// Whether a participant ran outside the scheduler's control for a while.
        package var partiallyControlled: Bool
        /// Why, the first time: which participant was set aside, or which work was handed over
        /// from outside the run's participants.
        package var partialControlReason: String?
        /// Whether every unfinished participant was blocked outside a seam.
        package var deadlocked: Bool
        /// Where a replayed decision named a participant that was not waiting (nondeterminism in
        /// the code under test), or `nil`.
        package var divergence: String?
        /// Each participant's last seam (or "finished").
        package var lastSeams: [String]
        /// Each participant's first seam: for one that joined during the run, the work it is and
        /// who handed it over (`transport.request[trace] from participant 3`, `completion[trace]
        /// from the quiet world`, `mc.KSMStartEvent from participant 0`).
        package var firstSeams: [String] = []
        /// Why the run ended without a verdict (nothing moved for the last-resort guard's time), or
        /// `nil`.
        package var undecided: String?
    }
}
