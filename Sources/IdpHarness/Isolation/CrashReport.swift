/// The report of a child process that ended before its report: the checks it had judged (from its
/// progress), ThreadSanitizer's reports in its output, a failed "process survived" check that says
/// how and where it ended, and the checks it never reached, marked not checked.
struct CrashReport {
    static let checkName = ConformanceReport.CheckName.processSurvived.rawValue

    let call: KitCall
    let result: ChildProcess.Result
    let events: [KitProgressEvent]
    let output: ChildOutput
    let limit: Duration
    let outputFile: String
    /// ThreadSanitizer's log file, when `log_path` sent its text there.
    let sanitizerLog: String?

    var report: ConformanceReport {
        var phase = "before the run's first phase"
        var round: Int?
        var rounds: Int?
        var judged: [ConformanceVerdict] = []
        var threadSanitizer = false
        for event in events {
            switch event {
            case .started(_, let active): threadSanitizer = active
            case .phase(let name): (phase, round, rounds) = (name, nil, nil)
            case .hammerRound(let number, let of): (round, rounds) = (number, of)
            case .judged(let check, let outcomes): judged.append(.init(check: check.check, outcomes: outcomes))
            case .reported: break
            }
        }
        let cause: ConformanceReport.Crash.Cause = switch result.end {
        // A signal the crash output names came first: a sanitizer failing after it may end the
        // process by another.
        case .signalled(let signal): .signal(output.signal ?? signal)
        case .exited(let status): output.signal.map { .signal($0) } ?? .exit(status)
        case .killedAtLimit, .notStarted: .hung(limit: limit)
        }
        let crash = ConformanceReport.Crash(pid: result.pid, cause: cause, phase: phase, hammerRound: round, hammerRounds: rounds,
                                            message: output.message, stack: output.stack(), outputFile: outputFile)

        var verdicts = judged
        let sanitizerReports = output.sanitizerReports
        if threadSanitizer { verdicts = Self.withDataRaceVerdict(verdicts, reports: sanitizerReports, file: sanitizerLog ?? outputFile, call: call) }
        var detail = crash.summary + " (child process \(result.pid))"
        if let message = crash.message { detail += ": " + message }
        if let frame = crash.stack.first(where: { $0.contains(" at /") && !$0.contains("<compiler-generated>") }) { detail += "; innermost frame with a source: " + frame }
        detail += "; its whole output: \(outputFile)"
        verdicts.append(.init(check: .init(name: Self.checkName, passed: false, detail: detail), outcomes: nil))
        let reached = Set(verdicts.map(\.check.name))
        for name in Self.checkNames(call) where !reached.contains(name) {
            verdicts.append(.init(check: .init(name: name, passed: true, detail: "not checked: the child process ended \(ConformanceReport.Crash.when(phase: phase, round: round, of: rounds)), before this check was judged", checked: false), outcomes: nil))
        }

        let configuration = call.configuration
        var report = ConformanceReport(
            providerName: call.name, checks: verdicts.map(\.check), stuckFlows: [], flows: 0,
            threads: call.entry.battery ? max(1, configuration.threads) : configuration.hammerThreads, users: 0, elapsed: result.elapsed,
            flowLatency: (.zero, .zero, .zero), providerCallLatency: (.zero, .zero, .zero), providerCalls: 0, peakSDKThreads: 0)
        report.outcomes = verdicts.compactMap(\.outcomes)
        report.threadSanitizer = threadSanitizer
        if threadSanitizer {
            report.raceReports = sanitizerReports.filter { !$0.isMutexHandOff }
            if !report.raceReports.isEmpty { report.raceReportFile = sanitizerLog ?? outputFile }
        }
        report.execution = .childProcessDied(crash)
        return report
    }

    /// The checks a run of `call` judges, in the report's order: the race hammer only with hammer
    /// rounds, the several-instances check only with its rounds, the expiry storms with either,
    /// and the flows under timeouts only with `providerWait`.
    static func checkNames(_ call: KitCall) -> [String] {
        let configuration = call.configuration
        let hammer = configuration.hammerRounds > 0, instances = configuration.instanceRounds > 0
        let race = ConformanceBattery.raceChecks.map(\.name).filter { name in
            switch name {
            case RaceHammerCheck().name: hammer
            case SeveralInstancesCheck().name: instances
            case ExpiryStormsCheck().name: hammer || instances
            default: true
            }
        }
        guard call.entry.battery else { return race }
        return race + ConformanceBattery.flowChecks.map(\.name).filter { $0 != BlockingCheck().name || configuration.providerWait != nil }
    }

    /// The judged verdicts with ThreadSanitizer's: the one judged after the race hammer, when
    /// the output holds no report it did not count; else one judged on every report in the
    /// output, which covers the whole child up to its end.
    static func withDataRaceVerdict(_ verdicts: [ConformanceVerdict], reports: [ThreadSanitizerReport], file: String,
                                    call: KitCall) -> [ConformanceVerdict] {
        let name = DataRaceCheck().name
        let findings = reports.filter { !$0.isMutexHandOff }
        let judged = verdicts.first { $0.check.name == name }
        let counted = judged?.outcomes?.rows.filter { $0.grade == .forbidden }.map(\.count).reduce(0, +) ?? 0
        if judged != nil, findings.count <= counted { return verdicts }
        let phase = ThreadSanitizerPhase(name: "the child process up to its end", reports: reports, lost: 0, rounds: 1,
                                         roundsWithReports: reports.isEmpty ? 0 : 1)
        let evidence = ConformanceEvidence(configuration: call.configuration, hammer: nil,
                                           threadSanitizer: ThreadSanitizerEvidence(isActive: true, phases: [phase], reportFile: findings.isEmpty ? nil : file),
                                           elapsed: .zero)
        guard let verdict = DataRaceCheck().judge(evidence) else { return verdicts }
        guard let index = verdicts.firstIndex(where: { $0.check.name == name }) else {
            // After the race hammer's check, when it was judged; else first.
            let after = verdicts.firstIndex { $0.check.name == RaceHammerCheck().name }.map { $0 + 1 } ?? 0
            var all = verdicts
            all.insert(verdict, at: after)
            return all
        }
        var all = verdicts
        all[index] = verdict
        return all
    }
}
