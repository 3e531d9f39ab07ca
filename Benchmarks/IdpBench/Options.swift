import BenchSupport
import Foundation

/// The sections of a run, in the order they run.
enum Section: String, CaseIterable, Sendable {
    case providers, idp, flows, contention, memory, scaling
}

/// What a run measures and how it reports; parsed from the command line.
struct Options: Sendable {
    var sections: [Section] = Section.allCases
    var threads = [1, 2, 4, 8, 16]
    var inFlight = [1, 16, 256, 1_024, 4_096]
    /// Measuring time of one run of a provider cell (one strategy at one thread count).
    var secondsPerProviderCell = 0.1
    /// Runs per provider cell, interleaved; the cell reports their median.
    var rounds = 3
    /// Measuring time of one flow cell (one scenario at one in-flight level), after a warm-up.
    var secondsPerFlowCell = 2.0
    /// Simulated IDP round trip per request in the flow sections.
    var latency: Duration = .zero
    /// The SDK's worker spin in the flows and contention sections; `nil`: the SDK's default.
    var workerSpin: Duration?
    /// How long an idle SDK thread lives in flows/contention; `nil`: the SDK's own.
    var workerKeepAlive: Duration?
    /// Cores per SDK worker pool in flows/contention (`nil`: the SDK's own).
    var coresPerPool: Int?
    /// Open-loop arrival rate; `nil`: half the closed-loop login throughput measured at 256 in flight.
    var openLoopRate: Double?
    /// Measuring time of one flow cell in a scaling child, after its warm-up.
    var secondsPerScalingFlowCell = 0.4
    /// Run of one provider cell in a scaling child, split over 3 interleaved runs.
    var secondsPerScalingProviderCell = 0.15
    var parkedFlows = 100_000
    var parkedLatencyMilliseconds = 100
    var seed: UInt64 = 1
    var format: ReportFormat = .text
    var output: String?
    var svg: String?
    /// Where to write `RESULTS.md` (the run's figures for people, generated) as well.
    var results: String?
    var quick = false

    static let usage = """
    usage: idp-bench [options]
           idp-bench compare BASE.json NEW.json [--threshold PERCENT]
           idp-bench compare --base BASE.json… --new NEW.json… [--threshold PERCENT]
           idp-bench show REPORT.json [--format text|markdown|json|csv]
           idp-bench results --from REPORT.json [--output FILE]   (RESULTS.md from a saved report)
           idp-bench stress [--duration S] [--faults …] [--help]   (system stress, controlled scheduling)

    Measures, in one run, what a credential provider and its locking cost under load, and how the
    IdpSdk engine, the MasterController and the in-process IDP behave end to end. Defaults finish in
    about a minute on 2 cores; progress goes to stderr, the report to stdout (or --output).

    Sections (all by default):
      providers    ns per provideCredentials call at each thread count, for every provider of
                   CredentialProviders, the floors (a bare Mutex-protected dictionary lookup, a
                   LockedValue one, a relaxed Atomic add) and the peer patterns of other SDKs
                   (serial DispatchQueue.sync, NSLock, Task + semaphore into an actor)
      idp          the IDP's own hot path on 1 and 2 threads, each next to a Mutex-protected
                   dictionary lookup measured in the same runs: one step form rendered, one parsed
                   (XHTMLForm), one SecureRandom.token(), one authorize + authenticate login step
      flows        activation and login flows through IdpSdk, MasterController and the IDP:
                   closed loop at each in-flight level (a device and user per flow in flight),
                   the login levels between 1 and the deepest again over the deepest level's
                   users, then an open loop at a fixed arrival rate (latency counted from each
                   flow's scheduled start: no coordinated omission)
      contention   for each lock on the hot path, the share of acquisitions that found it held,
                   the time spent waiting, and how long each acquisition held it (p50, p99, max),
                   during closed-loop logins at the highest in-flight level
      memory       resident bytes per flow and OS threads with many flows parked on IDP latency
                   (in a child process, so the other sections do not distort it)
      scaling      the flow cells (logins at 1024 and 4096 in flight, activations at 1024, a
                   lone login before and after them) and the provider cells (floor: nothing
                   shared, CredentialStore,
                   StaticCredentials, FieldMappingProvider, NSLock) again in child processes
                   pinned to 1, 2, 4 … all allowed cores: throughput, speed-up over 1 core,
                   efficiency; at the highest count, the most contended flow-path lock

    Options:
      --sections LIST      comma-separated sections to run (default: all)
      --threads LIST       thread counts for providers (default 1,2,4,8,16)
      --in-flight LIST     flows in flight for the closed loop (default 1,16,256,1024,4096)
      --cell-ms N          measuring time of one run of a provider cell, ms (default 100)
      --rounds N           runs per provider cell and per closed-loop flow cell, interleaved
                           with the other cells; the median is reported (default 3)
      --flow-seconds S     measuring time per flow cell, seconds, may be fractional, split over
                           its rounds (default 2)
      --latency MS         simulated IDP round trip per request in flows/contention (default 0)
      --worker-spin US     how long an SDK thread out of work watches for the next job in
                           flows/contention, µs (default: the SDK's own, 250)
      --worker-keep-alive MS
                           how long an idle SDK thread lives in flows/contention, ms, at
                           least 1 (default: the SDK's own, 2000)
      --cores-per-pool N   cores per SDK worker pool (its own lock, queue and threads) in
                           flows/contention on more than 3 cores, at least 1 (default: the
                           SDK's own, 1; up to 3 cores one pool serves them all)
      --rate N             open-loop arrivals per second (default: half the lowest closed-loop
                           login throughput with more than one flow in flight)
      --parked N           flows parked in the memory section (default 100000)
      --parked-latency MS  their simulated IDP latency, ms (default 100)
      --seed N             seed for the generated user names and passwords (default 1)
      --format F           text, markdown, json or csv (default text)
      --output FILE        write the report to FILE instead of stdout
      --results FILE       also write the run's figures as RESULTS.md (machine, toolchain, date,
                           tables, targets), as Benchmarks/RESULTS.md is written
      --svg FILE           also draw latency against flows in flight and ns/call against threads
      --quick              a smoke run: threads 1,2,4; in flight 1,64,1024; short cells (also
                           in the scaling children); 10000 parked flows
      --help               this text

    compare BASE.json NEW.json prints every figure's change and exits 2 when one regressed by more
    than the threshold (default 10 percent), 0 otherwise, 1 on unreadable input. With several runs
    a side (--base, --new) it compares medians, and a move counts only where every new run lies
    beyond every base run.
    """

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var explicit = Set<String>()
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws(UsageError) -> String {
            guard let text = iterator.next() else { throw UsageError("\(flag) needs a value") }
            return text
        }
        func number(_ flag: String, minimum: Int = 0) throws(UsageError) -> Int {
            let text = try value(flag)
            guard let number = Int(text), number >= minimum else { throw UsageError("\(flag) needs a whole number ≥ \(minimum), not '\(text)'") }
            return number
        }
        func list(_ flag: String) throws(UsageError) -> [Int] {
            let text = try value(flag)
            let numbers = text.split(separator: ",").compactMap { Int($0) }
            guard !numbers.isEmpty, numbers.count == text.split(separator: ",", omittingEmptySubsequences: false).count,
                  numbers.allSatisfy({ $0 >= 1 && $0 <= 100_000 }) else {
                throw UsageError("\(flag) needs a comma-separated list of whole numbers from 1 to 100000, not '\(text)'")
            }
            return numbers
        }
        while let argument = iterator.next() {
            explicit.insert(argument)
            switch argument {
            case "--sections":
                let text = try value(argument)
                var sections: [Section] = []
                for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let section = Section(rawValue: String(name)) else {
                        throw UsageError("unknown section '\(name)'; sections are \(Section.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    if !sections.contains(section) { sections.append(section) }
                }
                options.sections = Section.allCases.filter(sections.contains)
            case "--threads": options.threads = try list(argument)
            case "--in-flight": options.inFlight = try list(argument)
            case "--cell-ms": options.secondsPerProviderCell = Double(try number(argument, minimum: 1)) / 1e3
            case "--rounds": options.rounds = try number(argument, minimum: 1)
            case "--flow-seconds":
                let text = try value(argument)
                guard let seconds = Double(text), seconds > 0, seconds <= 3_600 else { throw UsageError("--flow-seconds needs a number of seconds above 0, not '\(text)'") }
                options.secondsPerFlowCell = seconds
            case "--latency": options.latency = .milliseconds(try number(argument))
            case "--worker-spin": options.workerSpin = .microseconds(try number(argument))
            case "--worker-keep-alive": options.workerKeepAlive = .milliseconds(try number(argument, minimum: 1))
            case "--cores-per-pool": options.coresPerPool = try number(argument, minimum: 1)
            case "--rate": options.openLoopRate = Double(try number(argument, minimum: 1))
            case "--parked": options.parkedFlows = try number(argument, minimum: 1)
            case "--parked-latency": options.parkedLatencyMilliseconds = try number(argument)
            case "--seed":
                let text = try value(argument)
                guard let seed = UInt64(text) else { throw UsageError("--seed needs a whole number ≥ 0, not '\(text)'") }
                options.seed = seed
            case "--format":
                let text = try value(argument)
                guard let format = ReportFormat(rawValue: text) else {
                    throw UsageError("unknown format '\(text)'; formats are \(ReportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                options.format = format
            case "--output": options.output = try value(argument)
            case "--svg": options.svg = try value(argument)
            case "--results": options.results = try value(argument)
            case "--quick": options.quick = true
            case "--help", "-h": throw UsageError.help
            default: throw UsageError("unknown argument '\(argument)'")
            }
        }
        if options.quick {
            // Quick settings fill in only what the command line did not set.
            if !explicit.contains("--threads") { options.threads = [1, 2, 4] }
            if !explicit.contains("--in-flight") { options.inFlight = [1, 64, 1_024] }
            if !explicit.contains("--cell-ms") { options.secondsPerProviderCell = 0.02 }
            if !explicit.contains("--flow-seconds") { options.secondsPerFlowCell = 0.4 }
            if !explicit.contains("--parked") { options.parkedFlows = 10_000 }
            options.secondsPerScalingFlowCell = 0.15
            options.secondsPerScalingProviderCell = 0.06
        }
        return options
    }
}

/// A command-line mistake, or a request for the usage text.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
    static let help = UsageError("")
    var isHelp: Bool { message.isEmpty }
}
