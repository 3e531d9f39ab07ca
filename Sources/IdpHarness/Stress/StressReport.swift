import Foundation
import IdpPrimitives

/// What exploring a scenario found.
package struct StressReport: Sendable, CustomStringConvertible {
    /// The scenario's name.
    package let scenario: String
    /// How many runs were asked for.
    package let runs: Int
    /// The run (from 1) that failed first, or `nil`.
    package let failingRun: Int?
    /// The invariants the failing run broke; empty when none broke.
    package let violations: [String]
    /// The failing run's reproducer, or `nil`.
    package let original: StressReproducer?
    /// The smallest reproducer found that fails the same way, or `nil` when none failed.
    package let shrunk: StressReproducer?
    /// Of the confirming replays, how many failed the same way.
    package let replaysFailingTheSameWay: Int
    /// How many confirming replays were made.
    package let replays: Int
    /// Set when the replays did not agree: nondeterminism in the code under test, not a flaky failure.
    package let nondeterminism: String?

    /// A few lines: the failing run, what it broke, both reproducers and the replays; or that
    /// nothing broke.
    package var description: String {
        guard let failingRun, let original, let shrunk else { return "\(scenario): no invariant broken in \(runs) runs" }
        return """
        \(scenario): run \(failingRun) of \(runs) broke \(violations.joined(separator: "; "))
          reproducer: \(original)
          shrunk (flows \(original.size.flows)→\(shrunk.size.flows), decisions \(original.size.decisions)→\(shrunk.size.decisions), fault sites off \(original.faults.suppressed.count)→\(shrunk.faults.suppressed.count)): \(shrunk)
          replays failing the same way: \(replaysFailingTheSameWay) of \(replays)\(nondeterminism.map { "\n  nondeterminism: \($0)" } ?? "")
        """
    }
}
