// idp-bench: what a credential provider and its locking cost under load, and how the IdpSdk
// engine, MasterController and in-process IDP behave end to end. `idp-bench --help` explains.
import BenchSupport
import Foundation

/// Prints `message` to stderr and exits with `status`.
func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("idp-bench: \(message)\n".utf8))
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())

switch arguments.first {
case "stress":
    exit(await StressCommand.run(Array(arguments.dropFirst())))
case "compare":
    exit(runCompare(Array(arguments.dropFirst())))
case "show":
    // Renders a saved JSON report in another format: idp-bench show REPORT.json [--format F]
    let rest = Array(arguments.dropFirst())
    guard rest.count == 1 || (rest.count == 3 && rest[1] == "--format"), let data = FileManager.default.contents(atPath: rest[0]) else {
        fail("usage: idp-bench show REPORT.json [--format text|markdown|json|csv] (and the file must be readable)", status: 1)
    }
    guard let format = ReportFormat(rawValue: rest.count == 3 ? rest[2] : "text") else { fail("unknown format '\(rest[2])'", status: 1) }
    do {
        print(render(try BenchReport.decode(from: data), as: format))
        exit(0)
    } catch {
        fail("\(rest[0]): \(error)", status: 1)
    }
case "results":
    // Writes RESULTS.md from a saved JSON report: idp-bench results --from REPORT.json [--output FILE]
    exit(runResults(Array(arguments.dropFirst())))
case "memory-probe":
    // The child process of the memory section: FLOWS LATENCY_MS → one JSON row on stdout.
    guard arguments.count == 3, let flows = Int(arguments[1]), flows > 0, let latency = Int(arguments[2]), latency >= 0 else {
        fail("usage: idp-bench memory-probe FLOWS LATENCY_MS", status: 2)
    }
    do {
        let row = try await memoryProbe(flows: flows, latency: .milliseconds(latency))
        FileHandle.standardOutput.write(try JSONEncoder().encode(row))
        exit(0)
    } catch {
        fail("\(error)", status: 1)
    }
case "scaling-probe":
    // A child process of the scaling section: pins itself, then prints one JSON row on stdout.
    guard let settings = ScalingProbeSettings(arguments.dropFirst()) else {
        fail("usage: idp-bench scaling-probe CORES FLOW_MS CELL_MS PROFILE(0|1) SEED", status: 2)
    }
    do {
        let row = try await scalingProbe(settings)
        FileHandle.standardOutput.write(try JSONEncoder().encode(row))
        exit(0)
    } catch {
        fail("\(error)", status: 1)
    }
default:
    break
}

let options: Options
do {
    options = try Options.parse(arguments)
} catch let error {
    if error.isHelp {
        print(Options.usage)
        exit(0)
    }
    fail("\(error.message)\n\n\(Options.usage)", status: 2)
}

let progress = Progress()
var report = BenchReport(
    machine: currentMachine(),
    settings: Settings(secondsPerCell: options.secondsPerProviderCell, latencyMs: options.latency.timeInterval * 1e3, seed: options.seed,
                       sections: options.sections.map(\.rawValue), threads: options.threads, inFlight: options.inFlight, quick: options.quick),
    providers: [], floors: [], flows: [], contention: [], memory: nil, targets: []
)
do {
    if options.sections.contains(.memory) {
        // First, while this process is small; the probe runs in its own process anyway.
        report.memory = try await runMemorySection(options, progress: progress)
    }
    if options.sections.contains(.scaling) {
        // Also before this process grows: its children have the machine to themselves.
        report.scaling = try await runScalingSection(options, progress: progress)
    }
    if options.sections.contains(.providers) {
        (report.providers, report.floors) = try await runProvidersSection(options, progress: progress)
    }
    if options.sections.contains(.idp) {
        report.floors += try runIdpSection(options, progress: progress)
    }
    if options.sections.contains(.flows) || options.sections.contains(.contention) {
        progress.report("flows: setting up \(max(4_096, options.inFlight.max() ?? 0)) devices", force: true)
        let rig = try await FlowRig(devices: max(4_096, options.inFlight.max() ?? 0), latency: options.latency, seed: options.seed,
                                    workerSpin: options.workerSpin, workerKeepAlive: options.workerKeepAlive,
                                    coresPerPool: options.coresPerPool)
        if options.sections.contains(.flows) {
            report.flows = try await runFlowsSection(options, rig: rig, progress: progress)
            report.loneLoginSplit = LoneLoginSplit(flows: report.flows)
        }
        if options.sections.contains(.contention) {
            (report.contention, report.preemption, report.machinePauses, report.heavyWorkNoted) = try await runContentionSection(options, rig: rig, progress: progress)
        }
    }
} catch {
    progress.finish()
    fail("\(error)", status: 1)
}
report.targets = evaluateTargets(report, latency: options.latency)
progress.report("done", force: true)
progress.finish()

let rendered = render(report, as: options.format)
if let path = options.output {
    do {
        try rendered.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        fail("cannot write \(path): \(error)", status: 1)
    }
} else {
    print(rendered)
}
if let path = options.results {
    do {
        try renderResults(report).write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        fail("cannot write \(path): \(error)", status: 1)
    }
}
if let path = options.svg {
    do {
        try renderSVG(report).write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        fail("cannot write \(path): \(error)", status: 1)
    }
}
