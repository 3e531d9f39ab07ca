import Foundation
import IdpHarness

/// `idp-bench stress`: the whole system under the controlled scheduler with faults, for a run
/// count or a time, reported in the bench's formats.
enum StressCommand {
    static let usage = """
    usage: idp-bench stress [options]
           idp-bench stress --replay REPRODUCER [--times N] [scenario options]
           idp-bench stress merge REPORT.json… [--format F] [--output FILE]

    Runs the IdpSdk engine, MasterControllers and the in-process IDP under IdpHarness's controlled
    scheduler (PCT by default) with faults from one seed, and judges the system's invariants
    against the stress's own record of what it did: every flow completes exactly once, no
    cross-talk, codes single-use and bound to their PKCE challenge, lockout counts exact, one
    refresh per expiry, a logout stays a logout, no flow stuck past the watchdog, errors delivered
    unchanged, a login gives its user a token. A failure prints its reproducer, is replayed twice
    and shrunk; exit status 1. An invariant whose trigger happened in a run but that was never
    judged there is "not exercised", a failure of the stress: exit status 1. Every invariant held:
    0. Bad usage: 2.

    Options:
      --duration S      stop starting runs after S seconds (default 30)
      --runs N          at most N runs (default 1000000 with --duration, else 100)
      --seed N          seeds the schedules, the faults and the scenario (default 1)
      --shard K/N       make only the campaign's runs K, K+N, K+2N, … (each with the seeds the
                        unsharded campaign gives it): N runners with one seed and one budget
                        explore together what one would with N times the budget; put their
                        --format json reports together with `idp-bench stress merge`
      --flows N         participants per run (apps on devices, flows in flight; default 4)
      --users N         users at the IDP (default 3; fewer than flows: devices share users)
      --steps N         steps each participant plays after activating (default 3)
      --mix LIST        step=weight,… of login, add-user, offline-login, restart, logout-all,
                        logout-access-and-refresh, logout-offline, refresh, lockout, cancel
                        (default: all, login 4, refresh 2, the rest 1)
      --faults LIST     default | none | name=rate,… (names: transport.delay, transport.drop,
                        transport.duplicate, transport.retryInFlight, transport.reorder,
                        transport.connectionLost, transport.5xx, transport.timeout,
                        provider.slow, provider.hang, provider.fail, clock.codeExpiry,
                        refresh.storm, refresh.logoutRace, code.wrongVerifier, code.replay)
      --strategy S      pct:DEPTH:STEPS (default pct:3:100) | walk | free (no control, no replay;
                        a failure prints what the participants it names did)
      --until NAME      stop at the first run that reaches an interleaving and print its
                        reproducer (names: lock-lifted, exchange-other-user, second-expiry,
                        cancel-after-end, reuse-revoked)
      --format F        text, markdown, json or csv (default text)
      --output FILE     write the report to FILE instead of stdout
      --replay R        replay reproducer R (as a failure printed it) --times N times (default 10)

    merge: reads the --format json reports of one campaign's shards (same seed and options, each
    shard once) and writes them as one: every count summed, the earliest failure in the campaign's
    run order with its reproducer and the shard that found it, the longest shard's time. Exit
    status as a stress run's; 2 when a report cannot be read or the reports do not merge.
    """

    typealias Summary = StressSummary

    /// What `idp-bench stress`'s command line asks for.
    struct Invocation {
        /// The stress's options, as the flags set them.
        var options: SystemStress.Options
        /// The report's format: text, markdown, json or csv.
        var format = "text"
        /// The file the report is written to; `nil`: standard output.
        var output: String?
        /// The reproducer to replay instead of running the stress; `nil`: run the stress.
        var replay: String?
        /// How many times the reproducer is replayed.
        var times = 10
        /// The reports to merge instead of running the stress (`merge`); `nil`: run the stress.
        var merge: [String]?
        /// Whether `--runs` was given.
        var runsGiven = false
        /// Whether `--duration` was given.
        var durationGiven = false
    }

    /// What reading the command line came to.
    enum Parsed {
        /// Run as the invocation says.
        case run(Invocation)
        /// Exit at once with this status: the usage was printed, or bad usage reported.
        case exit(Int32)
    }

    /// Runs `idp-bench stress` with `arguments`, the words after `stress`.
    /// - Returns: The exit status: 0 when every invariant held, 1 when one broke or was not
    ///   exercised, 2 on bad usage.
    static func run(_ arguments: [String]) async -> Int32 {
        let invocation: Invocation
        switch parse(arguments) {
        case .exit(let status): return status
        case .run(let parsed): invocation = parsed
        }
        if let replay = invocation.replay {
            return await replayReproducer(replay, invocation: invocation)
        }
        if let reports = invocation.merge {
            return merge(reports, invocation: invocation)
        }
        return await runStress(invocation)
    }

    /// Says on standard error what is wrong, then the usage.
    /// - Returns: The exit status of bad usage, 2.
    static func bad(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("idp-bench stress: \(message)\n\n\(usage)\n".utf8))
        return 2
    }

    /// Reads the command line, each flag with its value in turn.
    /// - Returns: What to run, or the status to exit with at once.
    static func parse(_ arguments: [String]) -> Parsed {
        var invocation = Invocation(options: SystemStress.Options(runs: 1_000_000, duration: .seconds(30)))
        invocation.options.faultRates = SystemStress.Options.defaultFaultRates
        var index = 0
        func value() -> String? {
            index += 1
            return index < arguments.count ? arguments[index] : nil
        }
        if arguments.first == "merge" {
            invocation.merge = []
            index = 1
        }
        while index < arguments.count {
            let flag = arguments[index]
            let problem: String?
            switch flag {
            case _ where invocation.merge != nil && !flag.hasPrefix("-"):
                invocation.merge?.append(flag)
                problem = nil
            case _ where invocation.merge != nil && !["--format", "--output", "--help", "-h"].contains(flag):
                problem = "merge takes report files, --format and --output; not '\(flag)'"
            case "--shard":
                problem = readShard(value(), into: &invocation.options)
            case "--help", "-h":
                print(usage)
                return .exit(0)
            case "--duration", "--runs", "--seed", "--flows", "--users", "--steps", "--times":
                problem = readNumber(flag, value(), into: &invocation)
            case "--mix":
                problem = readMix(value(), into: &invocation.options)
            case "--faults":
                problem = readFaults(value(), into: &invocation.options)
            case "--strategy":
                problem = readStrategy(value(), into: &invocation.options)
            case "--until":
                problem = readUntil(value(), into: &invocation.options)
            case "--format", "--output", "--replay":
                problem = readCommand(flag, value(), into: &invocation)
            default:
                problem = "unknown option '\(flag)'"
            }
            if let problem { return .exit(bad(problem)) }
            index += 1
        }
        if invocation.runsGiven && !invocation.durationGiven { invocation.options.duration = nil }
        if invocation.merge?.isEmpty == true { return .exit(bad("merge needs at least one report file")) }
        return .run(invocation)
    }

    /// Reads the value of a flag that takes a number: `--duration`, `--runs`, `--seed`, `--flows`,
    /// `--users`, `--steps` or `--times`.
    /// - Returns: What is wrong with the value, or `nil`.
    static func readNumber(_ flag: String, _ text: String?, into invocation: inout Invocation) -> String? {
        switch flag {
        case "--duration":
            guard let text, let seconds = Double(text), seconds > 0 else { return "--duration needs seconds > 0" }
            invocation.options.duration = .milliseconds(Int64(seconds * 1_000))
            invocation.durationGiven = true
        case "--runs":
            guard let text, let runs = Int(text), runs > 0 else { return "--runs needs a count > 0" }
            invocation.options.runs = runs
            invocation.runsGiven = true
        case "--seed":
            guard let text, let seed = UInt64(text) else { return "--seed needs an unsigned integer" }
            invocation.options.seed = seed
        default:
            guard let text, let count = Int(text), count > 0, count <= 1_000 else { return "\(flag) needs a count from 1 to 1000" }
            switch flag {
            case "--flows": invocation.options.flows = count
            case "--users": invocation.options.users = count
            case "--steps": invocation.options.stepsPerFlow = count
            default: invocation.times = count
            }
        }
        return nil
    }

    /// Reads `--shard`'s `K/N`.
    /// - Returns: What is wrong with the value, or `nil`.
    static func readShard(_ text: String?, into options: inout SystemStress.Options) -> String? {
        do {
            options.shard = try SystemStress.Shard(parsing: text ?? "")
            return nil
        } catch {
            return "--shard: \(error)"
        }
    }

    /// Reads `--mix`'s `step=weight,…`.
    /// - Returns: What is wrong with the value, or `nil`.
    static func readMix(_ text: String?, into options: inout SystemStress.Options) -> String? {
        guard let text else { return "--mix needs step=weight,…" }
        var mix: [SystemStress.Step: Int] = [:]
        for item in text.split(separator: ",") {
            let pair = item.split(separator: "=")
            guard pair.count == 2, let step = SystemStress.Step(rawValue: String(pair[0])), let weight = Int(pair[1]), weight >= 0 else {
                return "--mix item '\(item)' is not step=weight with a known step"
            }
            mix[step] = weight
        }
        guard mix.values.contains(where: { $0 > 0 }) else { return "--mix needs at least one step of weight > 0" }
        options.mix = mix
        return nil
    }

    /// Reads `--faults`' `default`, `none` or `name=rate,…`.
    /// - Returns: What is wrong with the value, or `nil`.
    static func readFaults(_ text: String?, into options: inout SystemStress.Options) -> String? {
        guard let text else { return "--faults needs default, none or name=rate,…" }
        switch text {
        case "default": options.faultRates = SystemStress.Options.defaultFaultRates
        case "none": options.faultRates = [:]
        default:
            var rates: [SystemStress.Fault: Double] = [:]
            for item in text.split(separator: ",") {
                let pair = item.split(separator: "=")
                guard pair.count == 2, let rate = Double(pair[1]), (0...1).contains(rate) else {
                    return "--faults item '\(item)' is not name=rate with a rate from 0 to 1"
                }
                do {
                    rates[try SystemStress.Fault(parsing: String(pair[0]))] = rate
                } catch {
                    return "--faults item '\(item)': \(error)"
                }
            }
            options.faultRates = rates
        }
        return nil
    }

    /// Reads `--strategy`'s `pct:DEPTH:STEPS`, `walk` or `free`.
    /// - Returns: What is wrong with the value, or `nil`.
    static func readStrategy(_ text: String?, into options: inout SystemStress.Options) -> String? {
        guard let text else { return "--strategy needs pct:DEPTH:STEPS, walk or free" }
        let parts = text.split(separator: ":")
        switch parts.first {
        case "walk" where parts.count == 1: options.strategy = .randomWalk
        case "free" where parts.count == 1: options.strategy = nil
        case "pct" where parts.count == 3:
            guard let depth = Int(parts[1]), let steps = Int(parts[2]), depth >= 1, steps >= 1 else { return "pct needs a depth and steps of at least 1" }
            options.strategy = .pct(depth: depth, steps: steps)
        default: return "--strategy must be pct:DEPTH:STEPS, walk or free"
        }
        return nil
    }

    /// Reads `--until`'s interleaving name.
    /// - Returns: What is wrong with the value, or `nil`.
    static func readUntil(_ text: String?, into options: inout SystemStress.Options) -> String? {
        guard let text, let wanted = SystemStress.Interleaving(name: text) else {
            return "--until needs one of \(SystemStress.Interleaving.allCases.map(\.name).joined(separator: ", "))"
        }
        options.stopAt = wanted
        return nil
    }

    /// Reads the value of a flag that says what the command does with its result: `--format` and
    /// `--output` for the report, or `--replay` to replay a reproducer instead of running the stress.
    /// - Returns: What is wrong with the value, or `nil`.
    static func readCommand(_ flag: String, _ text: String?, into invocation: inout Invocation) -> String? {
        switch flag {
        case "--format":
            guard let text, ["text", "markdown", "json", "csv"].contains(text) else { return "--format must be text, markdown, json or csv" }
            invocation.format = text
        case "--output":
            guard let text else { return "--output needs a file" }
            invocation.output = text
        default:
            guard let text else { return "--replay needs a reproducer string" }
            invocation.replay = text
        }
        return nil
    }

    /// Replays `reproducer` ``Invocation/times`` times and prints what each replay broke and reached.
    /// - Returns: 0 when no replay broke an invariant, 1 when one did, 2 when the reproducer is
    ///   malformed.
    static func replayReproducer(_ reproducer: String, invocation: Invocation) async -> Int32 {
        do {
            let runs = try await SystemStress.replayRuns(reproducer, options: invocation.options, times: invocation.times)
            let failing = runs.filter { !$0.violations.isEmpty }
            print("replayed \(runs.count) times: \(failing.count) broke an invariant")
            for (number, run) in runs.enumerated() {
                if !run.violations.isEmpty {
                    print("  replay \(number + 1): \(run.violations.joined(separator: "; "))")
                    if number == 0 { print("  what happened (oldest first):\n" + run.eventLog.map { "    \($0)" }.joined(separator: "\n")) }
                }
                if !run.interleavings.isEmpty {
                    print("  replay \(number + 1) reached: " + run.interleavings.keys.sorted().map { "\($0.rawValue) ×\(run.interleavings[$0]!)" }.joined(separator: ", "))
                }
            }
            return failing.isEmpty ? 0 : 1
        } catch {
            return bad("the reproducer is malformed: \(error)")
        }
    }

    /// Runs the stress as `invocation` says and writes its report.
    /// - Returns: 0 when every invariant held, 1 when one broke or was not exercised, 2 when the
    ///   report cannot be written.
    static func runStress(_ invocation: Invocation) async -> Int32 {
        let options = invocation.options
        FileHandle.standardError.write(Data("idp-bench stress: \(options.flows) flows × \(options.stepsPerFlow) steps per run, \(options.duration.map { "for \($0)" } ?? "\(options.runs) runs")…\n".utf8))
        let report = await SystemStress.run(options)
        let text = rendered(report, summary(of: report, options: options), format: invocation.format)
        if let output = invocation.output {
            guard FileManager.default.createFile(atPath: output, contents: Data((text + "\n").utf8)) else { return bad("cannot write \(output)") }
        } else {
            print(text)
        }
        return report.passed ? 0 : 1
    }

    /// The figures of a stress `report` run with `options`, as the json, csv and markdown formats
    /// show them.
    static func summary(of report: SystemStress.Report, options: SystemStress.Options) -> Summary {
        Summary(report, options: options)
    }

    /// The report in `format`: json, csv or markdown from `summary`, text from the report itself.
    static func rendered(_ report: SystemStress.Report, _ summary: Summary, format: String) -> String {
        switch format {
        case "json":
            return summary.json
        case "csv":
            return csv(summary)
        case "markdown":
            return markdown(summary)
        default:
            return report.description
        }
    }

    /// Tidy rows: one measure per row.
    static func csv(_ summary: Summary) -> String {
        var rows = ["measure,name,value"]
        func quote(_ text: String) -> String { "\"\(text.replacingOccurrences(of: "\"", with: "\"\""))\"" }
        for (name, value) in [("runs", summary.runs), ("flows", summary.flows), ("mc_events", summary.mcEvents), ("decisions", summary.decisions),
                              ("partially_controlled_runs", summary.partiallyControlledRuns)] {
            rows.append("total,\(name),\(value)")
        }
        rows.append("total,seconds,\(String(format: "%.2f", summary.seconds))")
        for name in summary.faultsInjected.keys.sorted() { rows.append("fault_injected,\(quote(name)),\(summary.faultsInjected[name]!)") }
        for name in summary.checks.keys.sorted() { rows.append("invariant_checked,\(quote(name)),\(summary.checks[name]!)") }
        for name in summary.triggers.keys.sorted() { rows.append("invariant_triggered,\(quote(name)),\(summary.triggers[name]!)") }
        for name in summary.excused.keys.sorted() { rows.append("invariant_excused,\(quote(name)),\(summary.excused[name]!)") }
        for name in summary.verdicts.keys.sorted() where summary.verdicts[name]!.hasPrefix("not exercised") { rows.append("invariant_not_exercised,\(quote(name)),1") }
        for line in summary.unexercised { rows.append("unexercised,\(quote(line)),1") }
        for name in summary.interleavings.keys.sorted() { rows.append("interleaving_reached,\(quote(name)),\(summary.interleavings[name]!)") }
        for violation in summary.violations { rows.append("violation,\(quote(violation)),1") }
        if let shrunk = summary.shrunk { rows.append("reproducer,\(quote(shrunk)),\(summary.replaysFailingTheSameWay ?? 0)") }
        return rows.joined(separator: "\n")
    }

    static func markdown(_ summary: Summary) -> String {
        var lines = ["#### idp-bench stress (seed \(summary.seed), \(summary.strategy))", "",
                     "| measure | value |", "|---|---:|",
                     "| runs | \(summary.runs) |", "| participants per run × steps | \(summary.flowsPerRun) × \(summary.stepsPerFlow) |",
                     "| getAuthorizationCode flows | \(summary.flows) |", "| MC events | \(summary.mcEvents) |",
                     "| scheduler decisions | \(summary.decisions) |",
                     "| partially controlled runs | \(summary.partiallyControlledRuns)\(summary.partialControlExample.map { " (first: \($0))" } ?? "") |",
                     "| seconds | \(String(format: "%.1f", summary.seconds)) |", "",
                     "| fault | injected |", "|---|---:|"]
        lines += summary.faultsInjected.keys.sorted().map { "| \($0) | \(summary.faultsInjected[$0]!) |" }
        lines += ["", "| invariant | verdict | triggered | judged | excused |", "|---|---|---:|---:|---:|"]
        lines += summary.verdicts.keys.sorted().map {
            "| \($0) | \(summary.verdicts[$0]!) | \(summary.triggers[$0] ?? 0) | \(summary.checks[$0] ?? 0) | \(summary.excused[$0] ?? 0) |"
        }
        if !summary.interleavings.isEmpty {
            lines += ["", "| interleaving reached | times |", "|---|---:|"]
            lines += summary.interleavings.keys.sorted().map { "| \($0) | \(summary.interleavings[$0]!) |" }
        }
        lines.append("")
        if !summary.unexercised.isEmpty {
            lines.append("**Not exercised** where their trigger happened (a failure of the stress itself): " + summary.unexercised.joined(separator: "; "))
            lines.append("")
        }
        if summary.violations.isEmpty {
            lines.append(summary.unexercised.isEmpty ? "Every invariant held; nothing lost." : "No invariant broken.")
        } else {
            lines.append("**Broken:** " + summary.violations.joined(separator: "; "))
            lines.append("")
            lines.append("Shrunk reproducer (\(summary.replaysFailingTheSameWay ?? 0) of \(summary.replays ?? 0) replays failed the same way): `\(summary.shrunk ?? "")`")
            if !summary.eventLog.isEmpty {
                lines += ["", "What happened, oldest first:", ""] + summary.eventLog.map { "- \($0)" }
            }
        }
        return lines.joined(separator: "\n")
    }
}
