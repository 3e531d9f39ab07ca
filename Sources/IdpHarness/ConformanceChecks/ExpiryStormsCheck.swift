/// After each crossing of the kit's clock (a jump of `expiryHorizon` halfway through a round of
/// the race hammer or of the several-instances check), every thread called at once; the provider
/// read the clock after the crossing, so its expiry was exercised, and every answer after it was
/// right.
///
/// A provider that never reads the kit's clock has no expiry the kit can reach: the check says
/// "expiry not exercised" and neither passes nor fails, and the answers after the crossings are
/// graded as ordinary answers of their phase.
struct ExpiryStormsCheck: ConformanceCheck {
    let name = ConformanceReport.CheckName.expiryStorms.rawValue

    func judge(_ evidence: ConformanceEvidence) -> ConformanceVerdict? {
        let phases = [evidence.hammer, evidence.severalInstances].compactMap { $0 }
        guard !phases.isEmpty else {
            // The run asked for direct calls, but none could be made: nothing crossed.
            guard let reason = evidence.severalInstancesNotExercised else { return nil }
            let outcome = "no round of direct calls ran (the race hammer is off; several instances: \(reason))"
            return ConformanceVerdict(check: .init(name: name, passed: true, detail: "expiry not exercised: \(outcome)", exercised: false),
                                      outcomes: .init(check: name, rows: [.init(outcome: outcome, count: 1, grade: .notExercised)]))
        }
        let horizon = evidence.configuration.expiryHorizon
        let crossings = phases.flatMap(\.crossings)
        let read = crossings.filter(\.read).count
        var rows: [ConformanceReport.OutcomeTable.Row] = []
        if read > 0 { rows.append(.init(outcome: "crossing: the provider read the kit's clock after it", count: read, grade: .acceptable)) }
        if crossings.count > read {
            rows.append(.init(outcome: "crossing: the provider did not read the kit's clock after it", count: crossings.count - read, grade: .notExercised))
        }
        guard read > 0 else {
            let detail: String
            if horizon <= .zero || crossings.isEmpty {
                let rounds = phases.map { $0.roundsRun + 1 }.reduce(0, +)
                rows.append(.init(outcome: "round without an expiry crossing", count: rounds, grade: .notExercised))
                detail = horizon <= .zero ? "expiry not exercised: the kit's clock never moved (expiryHorizon is zero)"
                    : "expiry not exercised: no round reached its crossing of the kit's clock"
            } else {
                let which = crossings.count == 1 ? "the crossing" : "any of the \(crossings.count) crossings"
                detail = "expiry not exercised (the provider does not read the kit's clock): it did not read `User.clock` after \(which) "
                    + "of \(Self.format(horizon)); a provider that reads the time from it has its expiry exercised"
            }
            return ConformanceVerdict(check: .init(name: name, passed: true, detail: detail, exercised: false),
                                      outcomes: .init(check: name, rows: rows))
        }
        for phase in phases {
            for outcome in HammerOutcome.allCases {
                for instance in 0..<phase.instances {
                    guard let count = phase.answers[.init(instance: instance, outcome: outcome, afterCrossing: true)] else { continue }
                    // The hammer mixes its users' instances in every call; the several-instances
                    // check's rows say which instance answered.
                    let label = phase.phase == "race hammer" || phase.instances == 1 ? "" : "instance \(instance): "
                    if let index = rows.firstIndex(where: { $0.outcome == "\(phase.phase), after the crossing: \(label)\(outcome.rawValue)" }) {
                        rows[index] = .init(outcome: rows[index].outcome, count: rows[index].count + count, grade: outcome.grade)
                    } else {
                        rows.append(.init(outcome: "\(phase.phase), after the crossing: \(label)\(outcome.rawValue)", count: count, grade: outcome.grade))
                    }
                }
            }
        }
        let table = ConformanceReport.OutcomeTable(check: name, rows: rows)
        let answers = phases.flatMap(\.answers).filter(\.key.afterCrossing).map(\.value).reduce(0, +)
        let detail: String
        if let stale = phases.first(where: { $0.staleRound != nil && $0.staleAfterCrossing }) {
            detail = "stale: round \(stale.staleRound ?? 0) of the \(stale.phase) did not end within the hang timeout after its crossing "
                + "(a provider call never returned)"
        } else if table.acceptable {
            detail = "the provider read the kit's clock after \(read) of \(crossings.count) crossings of \(Self.format(horizon)), "
                + "and all \(answers) answers after them, every thread calling at once, were right"
        } else {
            let forbidden = rows.filter { $0.grade == .forbidden }.map(\.count).reduce(0, +)
            detail = "\(forbidden) of \(answers) answers after the crossings forbidden: "
                + ConformanceBattery.list(phases.flatMap { phase in phase.examplesAfterCrossing.map { "\(phase.phase), \($0)" } })
        }
        return ConformanceVerdict(check: .init(name: name, passed: table.acceptable, detail: detail), outcomes: table)
    }

    /// "24 h", "90 s".
    static func format(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        return seconds % 3600 == 0 ? "\(seconds / 3600) h" : "\(seconds) s"
    }
}
