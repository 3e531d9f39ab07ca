/// The controlled phase explored its schedules and every answer was right, with no deadlock; a
/// failure names what went wrong and prints the shrunk schedule's one-line reproducer, which
/// ``ProviderConformanceKit/replay(_:times:shrinking:name:instances:makeProvider:)`` replays.
///
/// A provider that reached no point the phase controls — no house lock, no `NSLock`,
/// `NSCondition` or `DispatchSemaphore`, no task, no read of the kit's clock — has orders the phase
/// cannot see: "not exercised", naming that, neither passing nor failing. One whose schedule went
/// through work the phase does not schedule (a dispatch queue, a thread of its own, the main
/// actor), or whose thread the OS showed blocked outside the points (a `Mutex`, an
/// `os_unfair_lock`, a read), ran between points unseen: "not exercised" too, naming what and
/// where. A schedule the kit could not decide on (nothing moved for the last-resort guard's time)
/// says so, and is not exercised either.
struct ControlledInterleavingsCheck: ConformanceCheck {
    let name = ConformanceReport.CheckName.controlledInterleavings.rawValue

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
            let detail = "schedule \(failure.schedule) of at most \(found.budget) (seed \(found.seed)) failed; shrunk, it fails with: "
                + ConformanceBattery.list(failure.problems)
                + "; replay it with ProviderConformanceKit.replay — \(Self.reproducerLabel)\(failure.shrunk)"
            return ConformanceVerdict(check: .init(name: name, passed: false, detail: detail), outcomes: .init(check: name, rows: rows))
        }
        if let reason = found.uncontrolled {
            return notExercised("the controlled phase lost control of \(provider) in schedule \(found.schedules) (\(ControlledPhase.tries) tries): "
                                + "\(reason); \(Self.controls)", count: found.schedules)
        }
        if found.lockPoints == 0 && found.jobs == 0 && found.timers == 0 {
            let clock = found.clockPoints > 0 ? " (only reads of the kit's clock)" : ""
            return notExercised("the controlled phase saw no lock the kit controls in \(provider)\(clock): its locks, if it has any, are not "
                                + "controlled; \(Self.controls)", count: found.schedules)
        }
        let kinds = found.pointsByKind.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let scheduled = found.jobs + found.timers > 0 ? ", \(Self.count(found.jobs, "job")) of tasks and actors and \(Self.count(found.timers, "timer")) run under control" : ""
        let detail = "\(found.schedules) schedules (seed \(found.seed)) of \(found.threads) threads, chosen by PCT and a random walk, "
            + "\(found.decisions) scheduling decisions at \(found.lockPoints) lock points and \(found.clockPoints) clock reads (\(kinds))\(scheduled): "
            + "every answer right, no deadlock"
        return ConformanceVerdict(check: .init(name: name, passed: true, detail: detail), outcomes: .init(check: name, rows: Self.rows(found)))
    }

    /// What the phase controls and what it does not, for a verdict that says it could not see.
    static let controls = "the kit schedules LockedValue, ConditionLockedValue, ControlledLock, NSLock, NSRecursiveLock, NSCondition, "
        + "DispatchSemaphore, the jobs of tasks and actors, asyncAfter and Task.sleep; it does not schedule a dispatch queue, a thread the "
        + "provider starts, the main actor, a Mutex, an os_unfair_lock or a pthread lock called from the executable"

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
