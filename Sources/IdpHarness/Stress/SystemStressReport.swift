import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// What the stress found.
    public struct Report: Sendable, CustomStringConvertible {
        /// Runs made.
        public var runs = 0
        /// `getAuthorizationCode` flows started and MC events sent, over all runs.
        public var flows = 0
        /// MC events sent, over all runs.
        public var mcEvents = 0
        /// Faults that fired, by name.
        public var faultsInjected: [String: Int] = [:]
        /// Invariant checks made, by invariant.
        public var checks: [Invariant: Int] = [:]
        /// How often the runs reached each interleaving the invariants accept but a reader should
        /// know was explored.
        public var interleavings: [Interleaving: Int] = [:]
        /// With ``Options/stopAt``: the run that reached it and the reproducer that replays it.
        public var reached: (run: Int, interleaving: Interleaving, reproducer: String)?
        /// Scheduler decisions over all runs.
        public var decisions = 0
        /// Runs in which a participant ran outside the scheduler's control for a while; their
        /// replays need not repeat.
        public var partiallyControlledRuns = 0
        /// Why the first partially controlled run lost control (a hung provider set aside, say).
        public var partialControlExample: String?
        /// The first failing run's violations, its reproducer, the shrunk reproducer and how many
        /// replays failed the same way (`nil` when every invariant held).
        public var failure: Failure?
        /// Wall time of the whole stress, in seconds.
        public var seconds = 0.0

        /// The first failing run: what it broke and how to replay it.
        public struct Failure: Sendable {
            /// The run that failed, from 1.
            public var run: Int
            /// The invariants it broke, with what was seen.
            public var violations: [String]
            /// The string ``SystemStress/replay(_:options:times:)`` replays; a placeholder for a
            /// free run.
            public var reproducer: String
            /// The shrunk reproducer; `-` for a free run.
            public var shrunk: String
            /// Participants and scheduler decisions of the original reproducer.
            public var sizeBefore: (flows: Int, decisions: Int)
            /// Participants and scheduler decisions of the shrunk reproducer.
            public var sizeAfter: (flows: Int, decisions: Int)
            /// Of the confirming replays, how many failed the same way.
            public var replaysFailingTheSameWay: Int
            /// How many confirming replays were made (none for a free run).
            public var replays: Int
            /// Set when the replays did not agree: nondeterminism in the code under test; `nil`
            /// otherwise.
            public var nondeterminism: String?
            /// What the participants the violations name did, oldest first (their steps, MC
            /// events and results, flows, clock moves): a free run's account of a failure it
            /// cannot replay.
            public var eventLog: [String] = []
        }

        /// A few lines: counts, faults, invariants, interleavings, and the failure or that every
        /// invariant held.
        public var description: String {
            var lines = ["system stress: \(runs) runs, \(flows) flows, \(mcEvents) MC events, \(decisions) scheduler decisions, \(String(format: "%.1f", seconds)) s"]
            let faults = faultsInjected.keys.sorted().map { "\($0) \(faultsInjected[$0]!)" }
            lines.append("faults injected: \(faults.isEmpty ? "none" : faults.joined(separator: ", "))")
            lines.append("invariants checked: " + checks.keys.sorted().map { "\($0.rawValue) ×\(checks[$0]!)" }.joined(separator: ", "))
            if !interleavings.isEmpty {
                lines.append("interleavings reached: " + interleavings.keys.sorted().map { "\($0.rawValue) ×\(interleavings[$0]!)" }.joined(separator: ", "))
            }
            if let reached { lines.append("reached '\(reached.interleaving.rawValue)' in run \(reached.run); replay it with: \(reached.reproducer)") }
            if partiallyControlledRuns > 0 {
                lines.append("partially controlled runs: \(partiallyControlledRuns) (the first: \(partialControlExample ?? "?")); their interleavings are not all the scheduler's, and a replay of one need not repeat")
            }
            if let failure {
                lines.append("FAILED in run \(failure.run): \(failure.violations.joined(separator: "; "))")
                lines.append("  reproducer: \(failure.reproducer)")
                lines.append("  shrunk (flows \(failure.sizeBefore.flows)→\(failure.sizeAfter.flows), decisions \(failure.sizeBefore.decisions)→\(failure.sizeAfter.decisions)): \(failure.shrunk)")
                lines.append("  replays failing the same way: \(failure.replaysFailingTheSameWay) of \(failure.replays)")
                if let nondeterminism = failure.nondeterminism { lines.append("  nondeterminism: \(nondeterminism)") }
                if !failure.eventLog.isEmpty {
                    lines.append("  what happened (oldest first):")
                    lines += failure.eventLog.map { "    \($0)" }
                }
            } else {
                lines.append("every invariant held; nothing lost")
            }
            return lines.joined(separator: "\n")
        }
    }
}
