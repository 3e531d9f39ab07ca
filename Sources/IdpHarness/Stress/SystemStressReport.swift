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
        /// The campaign's parts these runs are (``Shard``): one for a stress run, those merged for
        /// a report ``merged(_:)`` made.
        public var shards: [Shard] = [.whole]
        /// What makes the campaign: the options that decide its runs (seed, strategy, scenario,
        /// mix, faults); reports of one campaign's shards have the same.
        public var campaign = ""
        /// `getAuthorizationCode` flows started and MC events sent, over all runs.
        public var flows = 0
        /// MC events sent, over all runs.
        public var mcEvents = 0
        /// Faults that fired, by name.
        public var faultsInjected: [String: Int] = [:]
        /// Each invariant's triggers, judgments and excused judgments, and the interleavings
        /// reached, over all runs.
        public var tally = Tally()
        /// Invariant judgments made, by invariant.
        public var checks: [Invariant: Int] { tally.judged }
        /// How often the runs reached each interleaving the invariants accept but a reader should
        /// know was explored.
        public var interleavings: [Interleaving: Int] { tally.interleavings }
        /// Runs in which an invariant's trigger happened but the invariant was never judged there:
        /// failures of the stress itself, each naming the run, the invariant and its triggers.
        public var unexercised: [String] = []
        /// With ``Options/stopAt``: the run that reached it and the reproducer that replays it.
        public var reached: (run: Int, interleaving: Interleaving, reproducer: String)?
        /// Scheduler decisions over all runs.
        public var decisions = 0
        /// Runs in which a participant ran outside the scheduler's control for a while; their
        /// replays need not repeat.
        public var partiallyControlledRuns = 0
        /// Why the first partially controlled run lost control (a hung provider set aside, say).
        public var partialControlExample: String?
        /// Free runs the last-resort guard ended: nothing moved for the guard limit, and the OS never
        /// showed the run stuck (a thread kept running without moving it), so the kit could not
        /// decide; no verdict on their flows' ends.
        public var undecidedFreeRuns = 0
        /// The first undecided free run, and why.
        public var undecidedExample: String?
        /// The first failing run's violations, its reproducer, the shrunk reproducer and how many
        /// replays failed the same way (`nil` when every invariant held).
        public var failure: Failure?
        /// Wall time of the whole stress, in seconds.
        public var seconds = 0.0

        /// An empty report: no run yet.
        package init() {}

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
            /// Wall time from the stress's start to the end of the failing run, in seconds (before
            /// any replay or shrinking).
            public var foundAfter: Double = 0
            /// The shard whose run failed.
            public var shard = Shard.whole
            /// What the participants the violations name did, oldest first (their steps, MC
            /// events and results, flows, clock moves): a free run's account of a failure it
            /// cannot replay.
            public var eventLog: [String] = []

            package init(run: Int, violations: [String], reproducer: String, shrunk: String, sizeBefore: (flows: Int, decisions: Int),
                         sizeAfter: (flows: Int, decisions: Int), replaysFailingTheSameWay: Int, replays: Int, nondeterminism: String? = nil,
                         foundAfter: Double = 0, eventLog: [String] = []) {
                self.run = run
                self.violations = violations
                self.reproducer = reproducer
                self.shrunk = shrunk
                self.sizeBefore = sizeBefore
                self.sizeAfter = sizeAfter
                self.replaysFailingTheSameWay = replaysFailingTheSameWay
                self.replays = replays
                self.nondeterminism = nondeterminism
                self.foundAfter = foundAfter
                self.eventLog = eventLog
            }
        }

        /// What the stress can say of one invariant.
        public enum Verdict: Sendable, Equatable, CustomStringConvertible {
            /// Judged this many times (and this many judgments excused), never broken.
            case held(judged: Int, excused: Int)
            /// Broken in the failing run.
            case failed
            /// Never judged: its trigger happened this many times (0: it never came up), or it
            /// was excused every time.
            case notExercised(triggers: Int, excused: Int)

            /// `held (judged N, excused K)`, `FAILED`, or `not exercised (…)`.
            public var description: String {
                switch self {
                case .held(let judged, let excused): "held (judged \(judged)\(excused > 0 ? ", excused \(excused)" : ""))"
                case .failed: "FAILED"
                case .notExercised(let triggers, let excused):
                    triggers == 0 ? "not exercised (its trigger never came up)"
                        : "not exercised (triggered \(triggers) times, never judged\(excused > 0 ? "; excused \(excused)" : ""))"
                }
            }
        }

        /// The verdict on `invariant`: a check that ran 0 times is "not exercised", never "held".
        /// - Parameter invariant: An invariant.
        public func verdict(_ invariant: Invariant) -> Verdict {
            if failure?.violations.contains(where: { Invariant(violation: $0) == invariant }) == true { return .failed }
            let judged = tally.judged[invariant, default: 0]
            let excused = tally.excused[invariant, default: 0]
            return judged > 0 ? .held(judged: judged, excused: excused) : .notExercised(triggers: tally.triggers[invariant, default: 0], excused: excused)
        }

        /// Whether every invariant held and none was left unjudged where its trigger happened.
        public var passed: Bool { failure == nil && unexercised.isEmpty }

        /// A few lines: counts, faults, each invariant's verdict, interleavings, and the failure or
        /// that every invariant held.
        public var description: String {
            let part = shards == [.whole] ? "" : " (shard\(shards.count == 1 ? "" : "s") \(shards.map { "\($0.index)" }.joined(separator: ",")) of \(shards[0].count))"
            var lines = ["system stress\(part): \(runs) runs, \(flows) flows, \(mcEvents) MC events, \(decisions) scheduler decisions, \(String(format: "%.1f", seconds)) s"]
            let faults = faultsInjected.keys.sorted().map { "\($0) \(faultsInjected[$0]!)" }
            lines.append("faults injected: \(faults.isEmpty ? "none" : faults.joined(separator: ", "))")
            lines.append("invariants:")
            lines += Invariant.allCases.sorted().map { "  \($0.rawValue): \(verdict($0))" }
            if !interleavings.isEmpty {
                lines.append("interleavings reached: " + interleavings.keys.sorted().map { "\($0.rawValue) ×\(interleavings[$0]!)" }.joined(separator: ", "))
            }
            if let reached { lines.append("reached '\(reached.interleaving.rawValue)' in run \(reached.run); replay it with: \(reached.reproducer)") }
            if partiallyControlledRuns > 0 {
                lines.append("partially controlled runs: \(partiallyControlledRuns) (the first: \(partialControlExample ?? "?")); their interleavings are not all the scheduler's, and a replay of one need not repeat")
            }
            if undecidedFreeRuns > 0 {
                lines.append("undecided free runs: \(undecidedFreeRuns) (the first: \(undecidedExample ?? "?")); whether their flows were stuck is not judged")
            }
            if let failure {
                let found = shards == [.whole] ? "" : " of shard \(failure.shard)"
                lines.append("FAILED in run \(failure.run)\(found), after \(String(format: "%.1f", failure.foundAfter)) s: \(failure.violations.joined(separator: "; "))")
                lines.append("  reproducer: \(failure.reproducer)")
                lines.append("  shrunk (flows \(failure.sizeBefore.flows)→\(failure.sizeAfter.flows), decisions \(failure.sizeBefore.decisions)→\(failure.sizeAfter.decisions)): \(failure.shrunk)")
                if failure.replays > 0 { lines.append("  replays failing the same way: \(failure.replaysFailingTheSameWay) of \(failure.replays)") }
                if let nondeterminism = failure.nondeterminism { lines.append("  nondeterminism: \(nondeterminism)") }
                if !failure.eventLog.isEmpty {
                    lines.append("  what happened (oldest first):")
                    lines += failure.eventLog.map { "    \($0)" }
                }
            }
            if !unexercised.isEmpty {
                lines.append("NOT EXERCISED where their trigger happened (a failure of the stress itself): \(unexercised.prefix(5).joined(separator: "; "))\(unexercised.count > 5 ? "; …" : "")")
            }
            if failure == nil && unexercised.isEmpty {
                let quiet = Invariant.allCases.filter { if case .notExercised = verdict($0) { true } else { false } }
                lines.append(quiet.isEmpty ? "every invariant held; nothing lost"
                                           : "every invariant judged held; not exercised: \(quiet.map(\.rawValue).sorted().joined(separator: ", "))")
            }
            return lines.joined(separator: "\n")
        }
    }
}
