import Foundation
import IdpServer

extension SystemStress {
    /// A lockout policy replayed over the IDP's decisions on one user, in the order the IDP made
    /// them and by the time it made each at (``IdpServer/userDecisions(_:tenant:)``): what the
    /// "lockout counts exact" invariant judges a wrong-password storm by.
    ///
    /// The rules it holds the IDP to: a wrong secret is evaluated only while no lock runs; the
    /// `limit`-th wrong secret in a row locks, and no other does; an attempt is refused unevaluated
    /// only while a lock runs; a completed flow clears the counts. A lock runs from the decision
    /// that set it for `lockDuration`, so a clock jump past its end (the run's clock is shared by
    /// every device) lifts it, and later guesses count again towards a new lock; the replay says
    /// whether that happened (``liftedByClock``).
    struct LockoutReplay {
        /// Wrong secrets the IDP evaluated.
        private(set) var evaluated = 0
        /// Locks it set.
        private(set) var locks = 0
        /// Whether a wrong secret was evaluated after a lock had run out on the clock.
        private(set) var liftedByClock = false
        /// The first decision that broke the rules, described; `nil` when every one kept them.
        private(set) var problem: String?

        /// The rejection codes that count towards a lock (a missing field or an unknown user
        /// does not).
        static let countedCodes = ["invalid_credentials", "invalid_activation_code", "invalid_reset_code"]

        /// The decisions in a few letters, each with its time from the first: `R` a wrong secret
        /// evaluated, `L` its lock, `X` an attempt refused as locked, `C` a completed flow, `?`
        /// any other (what a violation prints).
        private(set) var script = ""

        init(_ decisions: [AuditEntry], limit: Int, lockDuration: Duration) {
            let first = decisions.first?.time ?? Date()
            script = decisions.map { decision in
                let letter = switch decision.event {
                case .credentialsRejected: "R"
                case .accountLocked: "L"
                case .lockedAttemptRefused: "X"
                case .codeIssued: "C"
                default: "?"
                }
                return "\(decision.userDecision.map(String.init) ?? "-"):\(letter)@\(Int(decision.time.timeIntervalSince(first)))"
            }.joined(separator: " ")
            var failures = 0
            var lockedUntil: Date?
            var index = 0
            func broke(_ text: String) { if problem == nil { problem = text } }
            while index < decisions.count {
                let decision = decisions[index]
                let number = decision.userDecision.map { "decision \($0)" } ?? "a decision"
                let locked = lockedUntil.map { decision.time < $0 } ?? false
                switch decision.event {
                case .credentialsRejected where Self.countedCodes.contains(where: decision.detail.hasSuffix):
                    evaluated += 1
                    if locked { broke("\(number) evaluated a wrong secret while the lock ran") }
                    if lockedUntil != nil, !locked { liftedByClock = true }
                    failures += 1
                    let next = index + 1 < decisions.count ? decisions[index + 1] : nil
                    if let next, next.event == .accountLocked, next.userDecision == decision.userDecision {
                        if failures != limit { broke("\(number) locked after \(failures) wrong secrets in a row (limit \(limit))") }
                        locks += 1
                        failures = 0
                        lockedUntil = decision.time.addingTimeInterval(lockDuration.timeInterval)
                        index += 1
                    } else if failures >= limit {
                        broke("\(number), wrong secret \(failures) in a row, did not lock (limit \(limit))")
                    }
                case .accountLocked:
                    broke("\(number) locked without a wrong secret")
                case .lockedAttemptRefused:
                    if !locked { broke("\(number) refused an attempt as locked while no lock ran") }
                case .codeIssued:
                    failures = 0
                    lockedUntil = nil
                default:
                    break
                }
                index += 1
            }
        }
    }
}
