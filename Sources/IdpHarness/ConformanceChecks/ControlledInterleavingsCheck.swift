/// The controlled phase explored its schedules and every answer was right, with no deadlock; a
/// failure names what went wrong and prints the shrunk schedule's one-line reproducer, which
/// ``ProviderConformanceKit/replay(_:times:name:makeProvider:)`` replays.
///
/// A provider that reached no point of the kit's controlled primitives — no ``LockedValue``,
/// ``ConditionLockedValue``, ``ControlledLock`` or read of the kit's clock — has orders the phase
/// cannot see: "not exercised", naming that, neither passing nor failing. One whose thread blocked
/// outside those primitives (an `NSLock`, a `DispatchQueue`, a semaphore, an `os_unfair_lock`
/// another thread held) ran between points unseen: "not exercised" too, with the reason.
struct ControlledInterleavingsCheck: ConformanceCheck {
    let name = "controlled interleavings"

    /// The prefix of the reproducer in a failed verdict's detail.
    static let reproducerLabel = "reproducer: "

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        guard let found = evidence.controlled else {
            guard let reason = evidence.controlledNotExercised else { return nil }
            return notExercised("the controlled phase did not run: \(reason)", count: 1)
        }
        let provider = found.providerName.isEmpty ? "the provider" : found.providerName
        if let failure = found.failure {
            let shrunk = failure.shrunk
            let rows = Self.rows(found) + [.init(outcome: "failing schedule (shrunk to \(Self.count(shrunk.threads, "thread")), \(Self.count(shrunk.calls, "call")) each, "
                                                  + "\(Self.count(shrunk.instances, "instance")), \(Self.count(failure.shrunkDecisions, "decision")))", count: 1, grade: .forbidden)]
            let detail = "schedule \(failure.schedule) of at most \(found.budget) (seed \(found.seed)) failed: " + ConformanceBattery.list(failure.problems)
                + "; replay it with ProviderConformanceKit.replay — \(Self.reproducerLabel)\(failure.shrunk)"
            return ConformanceVerdict(check: .init(name: name, passed: false, detail: detail), outcomes: .init(check: name, rows: rows))
        }
        if let reason = found.uncontrolled {
            return notExercised("the controlled phase lost control of \(provider) in schedule \(found.schedules): \(reason); a lock or queue the kit "
                                + "does not control (an NSLock, a DispatchQueue, a semaphore, an os_unfair_lock, a wait for async work) runs unseen; "
                                + "locks written with LockedValue, ConditionLockedValue or ControlledLock are explored", count: found.schedules)
        }
        if found.lockPoints == 0 {
            let clock = found.clockPoints > 0 ? " (only reads of the kit's clock)" : ""
            return notExercised("the controlled phase saw no lock the kit controls in \(provider)\(clock): its locks, if it has any, are not "
                                + "controlled (an NSLock, a DispatchQueue, an os_unfair_lock); use LockedValue or ControlledLock to have "
                                + "their orders explored", count: found.schedules)
        }
        let detail = "\(found.schedules) schedules (seed \(found.seed)) of \(found.threads) threads, chosen by PCT and a random walk, "
            + "\(found.decisions) scheduling decisions at \(found.lockPoints) lock points and \(found.clockPoints) clock reads: every answer right, no deadlock"
        return ConformanceVerdict(check: .init(name: name, passed: true, detail: detail), outcomes: .init(check: name, rows: Self.rows(found)))
    }

    /// "1 call", "2 calls".
    static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

    private func notExercised(_ detail: String, count: Int) -> ConformanceVerdict {
        ConformanceVerdict(check: .init(name: name, passed: true, detail: "not exercised: " + detail, exercised: false),
                           outcomes: .init(check: name, rows: [.init(outcome: "schedule without a point the kit controls", count: count, grade: .notExercised)]))
    }

    private static func rows(_ found: ControlledPhase.Findings) -> [ConformanceReport.OutcomeTable.Row] {
        HammerOutcome.allCases.compactMap { outcome in
            found.answers[outcome].map { .init(outcome: "controlled call: \(outcome.rawValue)", count: $0, grade: outcome.grade) }
        }
    }
}
