/// One check of the conformance kit: a judgement of what a run saw, with nothing to run.
///
/// A check reads the run's ``ConformanceEvidence`` and gives its verdict and the table of the
/// outcomes it counted; it runs no flow and takes no lock, so a check is tested on evidence made
/// by hand as well as on a run's. The run collects the evidence; ``ConformanceBattery`` lists
/// the checks in the order the report shows them.
protocol ConformanceCheck: Sendable {
    /// The check's name, as the report's table shows it.
    var name: String { get }

    /// The verdict on `evidence`; `nil` when the run did not collect what this check judges (no
    /// engine flows in a run of the race hammer alone, no flows under timeouts without
    /// `providerWait`).
    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict?
}

/// A check's verdict, and the outcomes it counted.
struct ConformanceVerdict: Sendable, Equatable {
    /// The verdict, as the report's table of checks shows it.
    let check: ConformanceReport.Check
    /// The outcomes counted; `nil` when the check counted none (ThreadSanitizer off, nothing
    /// exercised).
    let outcomes: ConformanceReport.OutcomeTable?
}

/// The checks, in the order the report shows them.
enum ConformanceBattery {
    /// The checks of the direct calls (the race hammer's, the several instances', the answers
    /// after the expiry crossings) and of ThreadSanitizer's reports: first in every report, also
    /// in a run of the race hammer alone.
    static let raceChecks: [any ConformanceCheck] = [RaceHammerCheck(), SeveralInstancesCheck(), ExpiryStormsCheck(), ControlledInterleavingsCheck(), DataRaceCheck()]

    /// The checks of the engine's flows, after the race checks (and after a failure that stopped
    /// the run before its flows).
    static let flowChecks: [any ConformanceCheck] = [
        ConcurrentFlowsCheck(), MultiStepCheck(), CrossTalkCheck(), ErrorPropagationCheck(), CancellationCheck(),
        ExactlyOnceCheck(), NoDeadlockCheck(), SDKThreadsCheck(), BlockingCheck(),
    ]

    /// Every check's verdict on `evidence`, in the report's order.
    static func judge(_ evidence: ConformanceEvidence) -> [ConformanceVerdict] {
        raceChecks.compactMap { $0.judge(evidence) }
            + (evidence.stoppedBy.map { [ConformanceVerdict(check: $0, outcomes: nil)] } ?? [])
            + flowChecks.compactMap { $0.judge(evidence) }
    }

    /// Up to five items, then how many more there were.
    static func list(_ items: [String]) -> String {
        items.prefix(5).joined(separator: "; ") + (items.count > 5 ? "; and \(items.count - 5) more" : "")
    }
}

/// The outcomes one check counts: each a sentence (the raw value, as the table's row shows it)
/// with its grade. An outcome is forbidden unless ``acceptable``, ``stale`` or ``notExercised``
/// names it.
protocol CheckOutcome: CaseIterable, Hashable, Sendable, RawRepresentable where RawValue == String {
    /// What a correct provider may bring about.
    static var acceptable: Set<Self> { get }
    /// No outcome at all within the hang timeout.
    static var stale: Set<Self> { get }
    /// What the check judges did not happen (the provider never read the kit's clock).
    static var notExercised: Set<Self> { get }
}

extension CheckOutcome {
    static var stale: Set<Self> { [] }
    static var notExercised: Set<Self> { [] }

    /// Whether a correct provider may bring this outcome about.
    var grade: ConformanceReport.Grade {
        Self.acceptable.contains(self) ? .acceptable : Self.stale.contains(self) ? .stale
            : Self.notExercised.contains(self) ? .notExercised : .forbidden
    }
}

/// Counts a check's outcomes, and keeps a description of each problem for the check's detail.
struct OutcomeTally<Outcome: CheckOutcome> {
    private(set) var counts: [Outcome: Int]
    /// The problems noted, in the order they were noted.
    private(set) var problems: [String] = []

    init(counts: [Outcome: Int] = [:]) {
        self.counts = counts
    }

    /// Counts `outcome` `count` times; `problem` describes it for the check's detail.
    mutating func note(_ outcome: Outcome, count: Int = 1, problem: String? = nil) {
        counts[outcome, default: 0] += count
        if let problem { problems.append(problem) }
    }

    /// Keeps a problem's description without counting an outcome (one outcome with several
    /// problems).
    mutating func note(problem: String) {
        problems.append(problem)
    }

    /// How often `outcome` was noted.
    subscript(_ outcome: Outcome) -> Int { counts[outcome] ?? 0 }

    /// Whether no outcome noted is forbidden or stale.
    var acceptable: Bool { counts.allSatisfy { $0.value == 0 || $0.key.grade == .acceptable || $0.key.grade == .notExercised } }

    /// The table of the outcomes noted, in the order `Outcome` declares them.
    func table(check: String) -> ConformanceReport.OutcomeTable {
        ConformanceReport.OutcomeTable(check: check, rows: Outcome.allCases.compactMap { outcome in
            counts[outcome].map { .init(outcome: outcome.rawValue, count: $0, grade: outcome.grade) }
        })
    }

    /// The verdict of check `name`: passed when every outcome noted is acceptable and `also`
    /// holds, with the table of the outcomes noted (none when nothing was).
    func verdict(_ name: String, also: Bool = true, detail: String) -> ConformanceVerdict {
        ConformanceVerdict(check: .init(name: name, passed: acceptable && also, detail: detail),
                           outcomes: counts.isEmpty ? nil : table(check: name))
    }
}
