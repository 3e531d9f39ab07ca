import BenchSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import IdpPrimitives

/// CPU affinity: read through ``Processors/allowedCPUs()``, set through glibc's
/// `sched_setaffinity`, looked up at run time (the Glibc module does not import it).
enum Affinity {
    private typealias Set = @convention(c) (pid_t, Int, UnsafePointer<cpu_set_t>) -> Int32

    private static let set: Set? = dlsym(nil, "sched_setaffinity").map { unsafeBitCast($0, to: Set.self) }

    /// The CPUs the calling thread may run on, in ascending order; every online CPU where the
    /// mask cannot be read.
    static func allowed() -> [Int] {
        Processors.allowedCPUs() ?? Array(0..<ProcessInfo.processInfo.activeProcessorCount)
    }

    /// The environment variable that marks the run of `idp-bench` that ``pinAndRestart(to:)``
    /// started.
    static let restartedMarker = "IDP_BENCH_PINNED"

    /// Pins this process to `cpus` and runs this program again in it, with the same arguments:
    /// the mask survives `exec`, so what the new run sizes from the cores when it starts (the SDK's
    /// worker pools, the IDP's shards, the thread stripes: ``Processors/available``) is sized for
    /// `cpus`. Returns at once in the run it started (``restartedMarker`` is set there).
    /// - Throws: ``BenchFailure`` when pinning or running the program again failed.
    static func pinAndRestart(to cpus: [Int]) throws(BenchFailure) {
        #if os(Linux)
        guard getenv(restartedMarker) == nil else { return }
        try pinProcess(to: cpus)
        setenv(restartedMarker, "1", 1)
        var argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) } + [nil]
        execv("/proc/self/exe", &argv)
        throw BenchFailure("scaling: could not run idp-bench again, pinned: errno \(errno)")
        #endif
    }

    /// Pins every thread of this process (those in `/proc/self/task`, and the caller) to `cpus`;
    /// threads created later inherit the mask from their creator.
    /// - Throws: ``BenchFailure`` when the calling thread could not be pinned.
    static func pinProcess(to cpus: [Int]) throws(BenchFailure) {
        guard let set else { throw BenchFailure("scaling: sched_setaffinity is not available") }
        var mask = cpu_set_t()
        withUnsafeMutableBytes(of: &mask) { bytes in
            for cpu in cpus where cpu / 8 < bytes.count { bytes[cpu / 8] |= UInt8(1 << (cpu % 8)) }
        }
        let status = set(0, MemoryLayout<cpu_set_t>.size, &mask)
        guard status == 0 else { throw BenchFailure("scaling: sched_setaffinity(\(cpus)) failed: errno \(errno)") }
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            // A thread that exited meanwhile fails with ESRCH; the rest cannot fail once the
            // caller's mask was accepted.
            if let id = pid_t(task) { _ = set(id, MemoryLayout<cpu_set_t>.size, &mask) }
        }
    }
}

/// The provider cells the scaling probe runs at as many threads as cores, by their names in the
/// providers section.
let scalingProviderCells = [nothingSharedFloorName, "CredentialStore", "StaticCredentials", "FieldMappingProvider(CredentialStore)", "NSLock store"]

/// What one scaling child measures: `idp-bench scaling-probe CORES FLOW_MS CELL_MS PROFILE SEED`.
struct ScalingProbeSettings: Sendable {
    var cores: Int
    /// The measuring window of each closed-loop flow cell.
    var flowSeconds: Double
    /// The run of each provider cell.
    var cellSeconds: Double
    /// Whether to profile the locks in an extra login cell at 1,024 in flight.
    var profileLocks: Bool
    var seed: UInt64

    var arguments: [String] {
        ["scaling-probe", String(cores), String(Int(flowSeconds * 1e3)), String(Int(cellSeconds * 1e3)), profileLocks ? "1" : "0", String(seed)]
    }

    init(cores: Int, flowSeconds: Double, cellSeconds: Double, profileLocks: Bool, seed: UInt64) {
        (self.cores, self.flowSeconds, self.cellSeconds, self.profileLocks, self.seed) = (cores, flowSeconds, cellSeconds, profileLocks, seed)
    }

    /// Reads the arguments after `scaling-probe`; `nil` when they are malformed.
    init?(_ arguments: ArraySlice<String>) {
        let values = Array(arguments)
        guard values.count == 5, let cores = Int(values[0]), cores > 0, let flowMs = Int(values[1]), flowMs > 0,
              let cellMs = Int(values[2]), cellMs > 0, let seed = UInt64(values[4]), values[3] == "0" || values[3] == "1" else { return nil }
        self.init(cores: cores, flowSeconds: Double(flowMs) / 1e3, cellSeconds: Double(cellMs) / 1e3, profileLocks: values[3] == "1", seed: seed)
    }
}

/// The scaling probe, run in a child process pinned to `cores` of the allowed CPUs (one per
/// physical core first, ``CPUTopology/spread(_:)``) before any other work: a lone login, the flow
/// cells (logins at 1,024 and 4,096 in flight, activations at 1,024), a lone login again, then the provider cells at
/// `cores` threads, and with `profileLocks` one more login cell at 1,024 in flight with the lock
/// profiler on (a cell of its own, so the profiler's counting does not slow the throughput
/// measured).
func scalingProbe(_ settings: ScalingProbeSettings) async throws(BenchFailure) -> ScalingRow {
    let allowed = Affinity.allowed()
    guard allowed.count >= settings.cores else { throw BenchFailure("scaling: \(settings.cores) cores asked, \(allowed.count) allowed") }
    // One CPU per physical core before any core's second thread: N columns measure N cores
    // wherever the machine has them, however it numbers a core's threads.
    let topology = CPUTopology.read(cpus: allowed)
    let chosen = Array((topology?.spread(allowed) ?? allowed).prefix(settings.cores))
    try Affinity.pinAndRestart(to: chosen)
    try Affinity.pinProcess(to: chosen)
    guard Affinity.allowed().count == settings.cores else {
        throw BenchFailure("scaling: pinned to \(settings.cores) CPUs, but this thread may still run on \(Affinity.allowed().count)")
    }

    let rig: FlowRig
    do {
        rig = try await FlowRig(devices: 4_096, latency: .zero, seed: settings.seed)
    } catch {
        throw BenchFailure("scaling: setting up the flow rig: \(error)")
    }
    // A lone login first, in a process that has run nothing heavy yet, and again after the heavy
    // cells: a lone login slower after them than before shows what those cells left behind.
    let (before, _, _, beforeParts) = await closedLoop(rig, .login, inFlight: 1, seconds: settings.flowSeconds, notingPhases: true)
    try checkScaling(before, "a lone login before the heavy cells")
    var flows: [ScalingFlow] = []
    for cell in scalingFlowCells {
        guard let scenario = FlowRig.Scenario(rawValue: cell.scenario) else { continue }
        let (measured, seconds, _, _) = await closedLoop(rig, scenario, inFlight: cell.inFlight, seconds: settings.flowSeconds)
        try checkScaling(measured, "\(cell.scenario) at \(cell.inFlight) in flight")
        flows.append(ScalingFlow(scenario: cell.scenario, inFlight: cell.inFlight, throughputPerS: Double(measured.completed) / seconds))
    }
    let (lone, _, _, loneParts) = await closedLoop(rig, .login, inFlight: 1, seconds: settings.flowSeconds, notingPhases: true)
    try checkScaling(lone, "a lone login")

    let data = HotPathData(userCount: 1_000, seed: settings.seed)
    let strategies = await strategies(data)
    try await verify(strategies, data)
    let cells = hotPathCells(strategies: strategies, floors: floors(data), data: data).filter { scalingProviderCells.contains($0.name) }
    let cores = settings.cores
    // As in the providers section, the races block this thread (nothing else runs in the child),
    // and each cell is the median of 3 runs interleaved with the other cells.
    for cell in cells { _ = race(threads: 1, seconds: settings.cellSeconds / 4, makeOperation: cell.makeOperations(1)) }
    var runs = Array(repeating: [RaceResult](), count: cells.count)
    for _ in 0..<3 {
        for (index, cell) in cells.enumerated() {
            runs[index].append(race(threads: cores, seconds: settings.cellSeconds / 3, makeOperation: cell.makeOperations(cores)))
        }
    }
    let providers = zip(cells, runs).map { cell, results in
        ScalingProvider(name: cell.isFloor ? "floor: \(cell.name)" : cell.name, nsPerCall: results.median(by: \.nanosecondsPerOperation).nanosecondsPerOperation)
    }

    var lock: ScalingLock?
    if settings.profileLocks {
        LockProfiler.start()
        let (profiled, _, _, _) = await closedLoop(rig, .login, inFlight: 1_024, seconds: settings.flowSeconds)
        let figures = LockProfiler.stop()
        try checkScaling(profiled, "profiled logins at 1024 in flight")
        // The flow-path locks, as in the contention section (a lock taken a handful of times says
        // nothing about its share).
        let logins = Double(max(1, profiled.flowsRun))
        let flowPath = figures.filter { Double($0.acquisitions) / logins >= ContentionRow.flowPathAcquisitionsPerLogin }
        if let worst = flowPath.max(by: { $0.contendedShare < $1.contendedShare }) {
            lock = ScalingLock(label: worst.label, contendedShare: worst.contendedShare, acquisitions: worst.acquisitions)
        }
    }
    var row = ScalingRow(cores: cores, flows: flows, loneLoginP50Us: Double(lone.histogram.value(atPercentile: 50)) / 1_000,
                         providers: providers, lock: lock, physicalCores: topology?.physicalCores(of: chosen))
    row.loneLoginParts = loneParts.figures
    row.loneLoginBeforeP50Us = Double(before.histogram.value(atPercentile: 50)) / 1_000
    row.loneLoginBeforeParts = beforeParts.figures
    return row
}

private func checkScaling(_ cell: FlowCell, _ what: String) throws(BenchFailure) {
    if cell.errors > 0 { throw BenchFailure("scaling: \(cell.errors) flows failed (\(what)); first: \(cell.firstError ?? "-")") }
    if cell.completed == 0 { throw BenchFailure("scaling: no flow completed (\(what))") }
}

/// Runs the scaling section: one child process (`idp-bench scaling-probe`) per core count, one
/// after another, each pinned to N of the CPUs this process may use (one per physical core first);
/// the highest count also profiles the locks.
func runScalingSection(_ options: Options, progress: Progress) async throws(BenchFailure) -> [ScalingRow] {
    let allowed = Affinity.allowed().count
    let counts = scalingCoreCounts(allowed: allowed)
    var rows: [ScalingRow] = []
    for cores in counts {
        progress.report("scaling: cells pinned to \(cores) of \(allowed) cores, in a child process", force: true)
        let settings = ScalingProbeSettings(cores: cores, flowSeconds: options.secondsPerScalingFlowCell, cellSeconds: options.secondsPerScalingProviderCell,
                                            profileLocks: cores == counts.last, seed: options.seed)
        rows.append(try await runChild(settings.arguments, as: ScalingRow.self, what: "scaling probe at \(cores) cores"))
    }
    return rows
}

/// Runs `idp-bench ARGUMENTS` in a child process and decodes the JSON it prints on stdout.
func runChild<Row: Decodable & Sendable>(_ arguments: [String], as: Row.Type, what: String) async throws(BenchFailure) -> Row {
    let executable = FileManager.default.fileExists(atPath: "/proc/self/exe") ? "/proc/self/exe" : CommandLine.arguments[0]
    let child = Process()
    child.executableURL = URL(fileURLWithPath: executable)
    child.arguments = arguments
    let output = Pipe()
    child.standardOutput = output
    do { try child.run() } catch { throw BenchFailure("\(what): could not start \(executable): \(error)") }
    // Reading to the end and waiting block: do it on an OS thread, not a Swift concurrency one.
    let (data, status) = await OSThreads.run { () -> (Data, Int32) in
        let data = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        return (data, child.terminationStatus)
    }
    guard status == 0 else { throw BenchFailure("\(what) exited with status \(status)") }
    do {
        return try JSONDecoder().decode(Row.self, from: data)
    } catch {
        throw BenchFailure("\(what): unreadable result '\(String(decoding: data, as: UTF8.self))': \(error)")
    }
}
