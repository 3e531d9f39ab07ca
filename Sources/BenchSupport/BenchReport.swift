import Foundation

/// Everything one `idp-bench` run measured; its JSON form is schema `"idp-bench/1"` (keys in
/// snake_case, documented in the BenchSupport article "idp-bench").
public struct BenchReport: Codable, Sendable, Equatable {
    /// The schema this version writes and reads.
    public static let currentSchema = "idp-bench/1"

    /// The report's schema, ``currentSchema``.
    public var schema = BenchReport.currentSchema
    /// The machine the run measured.
    package var machine: Machine
    /// How the run was set up.
    package var settings: Settings
    /// The provider hot path: one row per strategy and thread count.
    package var providers: [ProviderRow]
    /// The floors, and the IDP section's operations: one row per name and thread count.
    package var floors: [FloorRow]
    /// The end-to-end cells: one row per scenario, loop and level.
    package var flows: [FlowRow]
    /// The labelled locks on the hot path during closed-loop logins: contention and hold times.
    package var contention: [ContentionRow]
    /// Resident memory and threads with many flows parked; `nil` when the section did not run.
    package var memory: MemoryRow?
    /// The targets, evaluated from this run's figures.
    package var targets: [TargetRow]
    /// The `scaling` section: one row per core count the cells ran pinned to; empty when the
    /// section did not run and in older reports.
    package var scaling: [ScalingRow]
    /// A lone login's p50 split into the IDP's work, the hand-back and the engine's share; `nil`
    /// when the flows section did not measure it and in older reports.
    package var loneLoginSplit: LoneLoginSplit?
    /// What the kernel did to the process's threads during the contention run, beside the
    /// profiler's long holds; `nil` when the section did not run and in older reports.
    package var preemption: PreemptionRecord?
    /// How long the machine itself paused threads that had nothing to do but spin, measured right
    /// after the contention run; `nil` when not measured and in older reports.
    package var machinePauses: MachinePauses?
    /// How many times the product noted heavy work (hashing, randomness, rendering, large
    /// allocations) during the contention run, by kind, under a lock or not: each lock's share
    /// is its row's ``ContentionRow/heavyWork``. `nil` when the section did not run and in older
    /// reports.
    package var heavyWorkNoted: [String: UInt64]?

    /// A report of a run.
    /// - Parameters:
    ///   - machine: The machine the run measured.
    ///   - settings: How the run was set up.
    ///   - providers: The provider hot path's rows.
    ///   - floors: The floors' rows.
    ///   - flows: The end-to-end cells.
    ///   - contention: The contention rows.
    ///   - memory: The memory section's row.
    ///   - targets: The evaluated targets.
    ///   - scaling: The scaling section's rows.
    ///   - loneLoginSplit: The lone login's p50 in measured parts.
    ///   - preemption: The kernel's preemptions during the contention run.
    ///   - machinePauses: The machine's own pauses of spinning threads.
    ///   - heavyWorkNoted: The heavy work noted during the contention run, by kind.
    package init(machine: Machine, settings: Settings, providers: [ProviderRow] = [], floors: [FloorRow] = [], flows: [FlowRow] = [],
                contention: [ContentionRow] = [], memory: MemoryRow? = nil, targets: [TargetRow] = [], scaling: [ScalingRow] = [],
                loneLoginSplit: LoneLoginSplit? = nil, preemption: PreemptionRecord? = nil, machinePauses: MachinePauses? = nil,
                heavyWorkNoted: [String: UInt64]? = nil) {
        self.machine = machine
        self.settings = settings
        self.providers = providers
        self.floors = floors
        self.flows = flows
        self.contention = contention
        self.memory = memory
        self.targets = targets
        self.scaling = scaling
        self.loneLoginSplit = loneLoginSplit
        self.preemption = preemption
        self.machinePauses = machinePauses
        self.heavyWorkNoted = heavyWorkNoted
    }

    enum CodingKeys: String, CodingKey {
        case schema, machine, settings, providers, floors, flows, contention, memory, targets, scaling, loneLoginSplit = "lone_login_split"
        case preemption = "contention_preemption", machinePauses = "machine_pauses", heavyWorkNoted = "contention_heavy_work_noted"
    }

    /// Reads a report; `scaling`, `lone_login_split`, `contention_preemption`, `machine_pauses`
    /// and `contention_heavy_work_noted`, absent from older reports, default to none.
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` when a key present in every report is missing or mistyped.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        schema = try container.decode(String.self, forKey: .schema)
        machine = try container.decode(Machine.self, forKey: .machine)
        settings = try container.decode(Settings.self, forKey: .settings)
        providers = try container.decode([ProviderRow].self, forKey: .providers)
        floors = try container.decode([FloorRow].self, forKey: .floors)
        flows = try container.decode([FlowRow].self, forKey: .flows)
        contention = try container.decode([ContentionRow].self, forKey: .contention)
        memory = try container.decodeIfPresent(MemoryRow.self, forKey: .memory)
        targets = try container.decode([TargetRow].self, forKey: .targets)
        scaling = try container.decodeIfPresent([ScalingRow].self, forKey: .scaling) ?? []
        loneLoginSplit = try container.decodeIfPresent(LoneLoginSplit.self, forKey: .loneLoginSplit)
        preemption = try container.decodeIfPresent(PreemptionRecord.self, forKey: .preemption)
        machinePauses = try container.decodeIfPresent(MachinePauses.self, forKey: .machinePauses)
        heavyWorkNoted = try container.decodeIfPresent([String: UInt64].self, forKey: .heavyWorkNoted)
    }

    /// The report as pretty-printed JSON with sorted keys; a figure that is not a finite number
    /// is written as the string "nan", "inf" or "-inf", and ``decode(from:)`` reads it back.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            // Numbers (finite or not), strings and flags always encode; this names the impossible.
            return "{\"error\": \"the report could not be encoded: \(String(describing: error).replacingOccurrences(of: "\"", with: "'"))\"}"
        }
    }

    /// Reads a report written by ``json()``.
    /// - Parameter data: The JSON, as `idp-bench --format json` writes it.
    /// - Returns: The report.
    /// - Throws: ``BenchReportError`` naming the problem: not JSON, another schema, a missing key.
    public static func decode(from data: Data) throws(BenchReportError) -> BenchReport {
        struct SchemaOnly: Decodable { let schema: String? }
        guard let probe = try? JSONDecoder().decode(SchemaOnly.self, from: data) else {
            throw BenchReportError("not an idp-bench JSON report (not a JSON object)")
        }
        guard probe.schema == currentSchema else {
            throw BenchReportError("schema is '\(probe.schema ?? "missing")', expected '\(currentSchema)'")
        }
        do {
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            return try decoder.decode(BenchReport.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw BenchReportError("missing key '\(key.stringValue)' at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch {
            throw BenchReportError("unreadable report: \(error)")
        }
    }
}

/// Why a report could not be read.
public struct BenchReportError: Error, CustomStringConvertible, Equatable {
    /// What is wrong with the input.
    public let description: String
    /// An error that says `description`.
    /// - Parameter description: What is wrong with the input.
    public init(_ description: String) { self.description = description }
}

/// The machine a run measured.
package struct Machine: Codable, Sendable, Equatable {
    /// The processors the run could use.
    package var cores: Int
    /// The operating system, as the system names it.
    package var os: String
    /// The Swift language version the benchmark was compiled with.
    package var swift: String
    /// When the run started, ISO 8601.
    package var date: String
    /// The processor's model name (`/proc/cpuinfo` on Linux); `nil` where unknown and in reports
    /// written without it.
    package var cpu: String?
    /// The physical cores those processors are on (fewer where a core runs two or more of them,
    /// simultaneous multithreading); `nil` where the topology is unknown and in reports written
    /// without it.
    package var physicalCores: Int?

    /// A machine as a run saw it.
    /// - Parameters:
    ///   - cores: The processors the run could use.
    ///   - os: The operating system.
    ///   - swift: The Swift language version.
    ///   - date: When the run started, ISO 8601.
    ///   - cpu: The processor's model name, if known.
    ///   - physicalCores: The physical cores of those processors, if known.
    package init(cores: Int, os: String, swift: String, date: String, cpu: String? = nil, physicalCores: Int? = nil) {
        self.cores = cores
        self.os = os
        self.swift = swift
        self.date = date
        self.cpu = cpu
        self.physicalCores = physicalCores
    }

    /// The processors, and the physical cores they are on where those are fewer:
    /// "16 (8 physical cores)".
    package var coresDescription: String {
        guard let physicalCores, physicalCores < cores else { return "\(cores)" }
        return "\(cores) (\(physicalCores) physical core\(physicalCores == 1 ? "" : "s"))"
    }

    /// The model name of this machine's processor, from `/proc/cpuinfo`; `nil` where that file
    /// does not exist or names none.
    package static func processorModel() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { return name }
        }
        return nil
    }
}

/// How a run was set up.
package struct Settings: Codable, Sendable, Equatable {
    /// The measuring time of one run of a provider cell, in seconds.
    package var secondsPerCell: Double
    /// The simulated IDP round trip per request, in ms.
    package var latencyMs: Double
    /// The seed of the generated user names and passwords.
    package var seed: UInt64
    /// The sections the run measured, in the order they ran.
    package var sections: [String]
    /// The provider thread counts.
    package var threads: [Int]
    /// The closed loop's in-flight levels.
    package var inFlight: [Int]
    /// Whether this was a `--quick` smoke run.
    package var quick: Bool
    /// What the end-to-end flows went through, where it is not the engine, the IDP and a
    /// MasterController (`idp-bench`'s path); `nil` for that path.
    package var flowPath: String?

    /// Settings as a run used them.
    /// - Parameters:
    ///   - secondsPerCell: The measuring time of one run of a provider cell, in seconds.
    ///   - latencyMs: The simulated IDP round trip per request, in ms.
    ///   - seed: The seed of the generated users.
    ///   - sections: The sections that ran.
    ///   - threads: The provider thread counts.
    ///   - inFlight: The closed loop's in-flight levels.
    ///   - quick: Whether this was a `--quick` smoke run.
    ///   - flowPath: What the end-to-end flows went through, where not idp-bench's path.
    package init(secondsPerCell: Double, latencyMs: Double, seed: UInt64, sections: [String], threads: [Int], inFlight: [Int], quick: Bool,
                 flowPath: String? = nil) {
        self.secondsPerCell = secondsPerCell
        self.latencyMs = latencyMs
        self.seed = seed
        self.sections = sections
        self.threads = threads
        self.inFlight = inFlight
        self.quick = quick
        self.flowPath = flowPath
    }

    enum CodingKeys: String, CodingKey {
        case secondsPerCell = "seconds_per_cell", latencyMs = "latency_ms", seed, sections, threads, inFlight = "in_flight", quick
        case flowPath = "flow_path"
    }
}

/// One provider strategy at one thread count.
package struct ProviderRow: Codable, Sendable, Equatable {
    /// The strategy's name (a provider, or another SDK's pattern).
    package var strategy: String
    /// `"product"` (a provider of CredentialProviders) or `"peer"` (another SDK's pattern).
    package var kind: String
    /// Whether this is the recommended provider (`CredentialStore`).
    package var recommended: Bool
    /// The OS threads calling at once.
    package var threads: Int
    /// Wall-clock nanoseconds per call of all threads together.
    package var nsPerCall: Double
    /// The calls all threads made in the measured time.
    package var calls: UInt64

    /// A provider row.
    /// - Parameters:
    ///   - strategy: The strategy's name.
    ///   - kind: `"product"` or `"peer"`.
    ///   - recommended: Whether this is the recommended provider.
    ///   - threads: The OS threads calling at once.
    ///   - nsPerCall: Wall-clock nanoseconds per call of all threads together.
    ///   - calls: The calls all threads made.
    package init(strategy: String, kind: String, recommended: Bool, threads: Int, nsPerCall: Double, calls: UInt64) {
        self.strategy = strategy
        self.kind = kind
        self.recommended = recommended
        self.threads = threads
        self.nsPerCall = nsPerCall
        self.calls = calls
    }

    enum CodingKeys: String, CodingKey { case strategy, kind, recommended, threads, nsPerCall = "ns_per_call", calls }
}

/// One floor (the cheapest synchronized operation of its kind) at one thread count.
package struct FloorRow: Codable, Sendable, Equatable {
    /// The name prefix of the rows of idp-bench's `idp` section (the IDP's own operations, set
    /// against the Mutex floor measured with them), which are shown in a table of their own.
    package static let idpPrefix = "IDP: "
    /// The floor the `idp` section's operations are set against.
    package static let idpFloor = idpPrefix + "Mutex + dictionary lookup"

    /// Whether this row belongs to the `idp` section.
    package var isIdpOperation: Bool { name.hasPrefix(Self.idpPrefix) }

    /// The floor's or the operation's name.
    package var name: String
    /// The OS threads running it at once.
    package var threads: Int
    /// Wall-clock nanoseconds per operation of all threads together.
    package var nsPerOp: Double
    /// The operations all threads made in the measured time.
    package var ops: UInt64

    /// A floor row.
    /// - Parameters:
    ///   - name: The floor's or the operation's name.
    ///   - threads: The OS threads running it at once.
    ///   - nsPerOp: Wall-clock nanoseconds per operation of all threads together.
    ///   - ops: The operations all threads made.
    package init(name: String, threads: Int, nsPerOp: Double, ops: UInt64) {
        self.name = name
        self.threads = threads
        self.nsPerOp = nsPerOp
        self.ops = ops
    }

    enum CodingKeys: String, CodingKey { case name, threads, nsPerOp = "ns_per_op", ops }
}

/// Latency percentiles, in microseconds.
package struct Percentiles: Codable, Sendable, Equatable {
    /// The percentiles p0 (the fastest) … p100 (the slowest), in µs.
    package var p0, p25, p50, p75, p90, p99, p999, p100: Double

    /// Percentiles from their values, in µs.
    /// - Parameters:
    ///   - p0: The fastest.
    ///   - p25: The 25th percentile.
    ///   - p50: The median.
    ///   - p75: The 75th percentile.
    ///   - p90: The 90th percentile.
    ///   - p99: The 99th percentile.
    ///   - p999: The 99.9th percentile.
    ///   - p100: The slowest.
    package init(p0: Double, p25: Double, p50: Double, p75: Double, p90: Double, p99: Double, p999: Double, p100: Double) {
        (self.p0, self.p25, self.p50, self.p75, self.p90, self.p99, self.p999, self.p100) = (p0, p25, p50, p75, p90, p99, p999, p100)
    }

    /// The eight values with their names, in order.
    package var named: [(name: String, value: Double)] {
        [("p0", p0), ("p25", p25), ("p50", p50), ("p75", p75), ("p90", p90), ("p99", p99), ("p999", p999), ("p100", p100)]
    }
}

/// One end-to-end cell: a scenario at one in-flight level (closed loop) or arrival rate (open).
package struct FlowRow: Codable, Sendable, Equatable {
    /// `"activation"` or `"login"`.
    package var scenario: String
    /// `"closed"` or `"open"`.
    package var mode: String
    /// Flows in flight: the closed loop's level, or the open loop's rate × p50.
    package var inFlight: Int
    /// The open loop's arrival rate; `nil` for the closed loop.
    package var offeredPerS: Double?
    /// Flows completed per second.
    package var throughputPerS: Double
    /// Flows completed in the measured time.
    package var completed: Int
    /// Flows that ended with an error.
    package var errors: Int
    /// The flows' latency percentiles, in µs.
    package var latencyUs: Percentiles
    /// The process's CPU time (user + system) over a round's measurement window divided by the
    /// flows completed in it, in µs (the median round's); what a flow costs whatever else the
    /// machine runs. `nil` in reports from before it was measured.
    package var cpuUsPerFlow: Double?
    /// The `Mutex` + dictionary lookup floor on one thread, measured for 20 ms right before each
    /// round of this closed-loop cell: the median, in ns. The unit the row's figures are judged
    /// in, measured beside them. `nil` for the open loop and in older reports.
    package var floorNs: Double?
    /// For a closed-loop cell at 1 in flight: the p50 of ``measureHandBack(samples:before:after:)``
    /// in a child task, as the closed loop's workers are, measured right before each round (the
    /// median of rounds), in µs. The thread wake-up a lone flow pays to hand its result back to
    /// the caller's task on Swift's pool, which no engine work shortens; `nil` at other levels
    /// and in older reports.
    package var handBackUs: Double?
    /// For the closed-loop login cell at 1 in flight: the IDP handling one login's requests
    /// (authorize, credentials, token) directly through `IdpServer.handle`, one login at a time on
    /// one OS thread, 200 of them right before each round: the median of the rounds' p50s, in µs.
    /// The IDP's own share of the lone login; `nil` elsewhere and in older reports.
    package var idpUs: Double?

    /// A flow row.
    /// - Parameters:
    ///   - scenario: `"activation"` or `"login"`.
    ///   - mode: `"closed"` or `"open"`.
    ///   - inFlight: Flows in flight.
    ///   - offeredPerS: The open loop's arrival rate; `nil` for the closed loop.
    ///   - throughputPerS: Flows completed per second.
    ///   - completed: Flows completed.
    ///   - errors: Flows that ended with an error.
    ///   - latencyUs: The latency percentiles, in µs.
    ///   - cpuUsPerFlow: CPU time per flow, in µs.
    ///   - floorNs: The 1-thread `Mutex` floor measured beside the cell, in ns.
    ///   - handBackUs: The p50 hand-back to the caller's task at 1 in flight, in µs.
    ///   - idpUs: The IDP's own work on one login's requests, at 1 in flight, in µs.
    package init(scenario: String, mode: String, inFlight: Int, offeredPerS: Double?, throughputPerS: Double, completed: Int, errors: Int, latencyUs: Percentiles,
                cpuUsPerFlow: Double? = nil, floorNs: Double? = nil, handBackUs: Double? = nil, idpUs: Double? = nil) {
        self.scenario = scenario
        self.mode = mode
        self.inFlight = inFlight
        self.offeredPerS = offeredPerS
        self.throughputPerS = throughputPerS
        self.completed = completed
        self.errors = errors
        self.latencyUs = latencyUs
        self.cpuUsPerFlow = cpuUsPerFlow
        self.floorNs = floorNs
        self.handBackUs = handBackUs
        self.idpUs = idpUs
    }

    enum CodingKeys: String, CodingKey {
        case scenario, mode, inFlight = "in_flight", offeredPerS = "offered_per_s", throughputPerS = "throughput_per_s", completed, errors
        case latencyUs = "latency_us", cpuUsPerFlow = "cpu_us_per_flow", floorNs = "floor_ns", handBackUs = "hand_back_us", idpUs = "idp_us"
    }
}

/// One lock's contention and hold times during the contention run.
package struct ContentionRow: Codable, Sendable, Equatable {
    /// The lock's label.
    package var lock: String
    /// How often the lock was taken.
    package var acquisitions: UInt64
    /// How often it was found held.
    package var contended: UInt64
    /// `contended` ÷ `acquisitions`.
    package var contendedShare: Double
    /// The total time threads waited for it, in ms.
    package var waitMs: Double
    /// Acquisitions per login the run made while the locks were profiled; `nil` in older reports.
    /// A lock taken at least ``flowPathAcquisitionsPerLogin`` times per login is a flow-path lock
    /// (``isFlowPath``).
    package var perLogin: Double?
    /// The median time an acquisition held the lock, in µs; `nil` in older reports.
    package var holdP50Us: Double?
    /// The 99th-percentile time an acquisition held the lock, in µs; `nil` in older reports.
    package var holdP99Us: Double?
    /// The longest time an acquisition held the lock, in µs; `nil` in older reports.
    package var holdMaxUs: Double?
    /// How many acquisitions held the lock at least ``HoldTimeTargets/maxUs`` (to the hold
    /// histogram's resolution of 1/16); `nil` in older reports.
    package var longHolds: UInt64?
    /// The holds shorter than ``HoldTimeTargets/maxUs`` together, in ms (each to the histogram's
    /// resolution): the time the lock was held while its holders ran; `nil` in older reports.
    package var shortHoldMs: Double?
    /// The longest hold whose thread kept its core throughout (the kernel never switched it out
    /// before it released the lock), in µs: the work under the lock without the scheduler's pauses;
    /// `nil` where the profiler's core watch is unavailable, and in older reports.
    package var holdMaxOnCoreUs: Double?
    /// How many holds' threads the kernel switched out before they released the lock (preempted,
    /// or blocked under it); `nil` where the core watch is unavailable, and in older reports.
    package var holdsLeftCore: UInt64?
    /// How many holds of at least ``HoldTimeTargets/maxUs`` kept their core throughout (to the
    /// histogram's resolution): long while their threads ran; `nil` where the core watch is
    /// unavailable, and in older reports.
    package var longHoldsOnCore: UInt64?
    /// How many times the product noted heavy work (``heavyWorkKinds``) while a thread held this
    /// lock; `nil` in older reports.
    package var heavyWork: UInt64?
    /// The kinds of that work, by name; `nil` in older reports.
    package var heavyWorkKinds: [String]?

    /// How often per login a flow-path lock is taken at least: once per two logins. A lock logins
    /// take as they run is taken about once per login or more (the IDP's, the engine's); one that
    /// caches per thread (`CredentialStore`'s) a little less; a lock taken only now and then (a timer
    /// driver's, a registry's at setup) a handful of times in a whole run.
    package static let flowPathAcquisitionsPerLogin = 0.5

    /// Whether the lock is on the flow path: taken, during the run, at least
    /// ``flowPathAcquisitionsPerLogin`` times per login on average, so its hold times are ones
    /// logins wait behind. `false` in older reports, which do not say.
    package var isFlowPath: Bool { (perLogin ?? 0) >= Self.flowPathAcquisitionsPerLogin }

    /// A contention row.
    /// - Parameters:
    ///   - lock: The lock's label.
    ///   - acquisitions: How often the lock was taken.
    ///   - contended: How often it was found held.
    ///   - contendedShare: `contended` ÷ `acquisitions`.
    ///   - waitMs: The total wait, in ms.
    ///   - perLogin: Acquisitions per login run while profiling.
    ///   - holdP50Us: The median hold, in µs.
    ///   - holdP99Us: The 99th-percentile hold, in µs.
    ///   - holdMaxUs: The longest hold, in µs.
    ///   - longHolds: The holds of at least the max target.
    ///   - shortHoldMs: The holds shorter than the max target together, in ms.
    ///   - holdMaxOnCoreUs: The longest hold whose thread kept its core, in µs.
    ///   - holdsLeftCore: The holds whose thread was switched out.
    ///   - longHoldsOnCore: The holds of at least the max target whose thread kept its core.
    ///   - heavyWork: The heavy work noted under the lock.
    ///   - heavyWorkKinds: Its kinds, by name.
    package init(lock: String, acquisitions: UInt64, contended: UInt64, contendedShare: Double, waitMs: Double, perLogin: Double? = nil,
                holdP50Us: Double? = nil, holdP99Us: Double? = nil, holdMaxUs: Double? = nil, longHolds: UInt64? = nil, shortHoldMs: Double? = nil,
                holdMaxOnCoreUs: Double? = nil, holdsLeftCore: UInt64? = nil, longHoldsOnCore: UInt64? = nil,
                heavyWork: UInt64? = nil, heavyWorkKinds: [String]? = nil) {
        self.lock = lock
        self.acquisitions = acquisitions
        self.contended = contended
        self.contendedShare = contendedShare
        self.waitMs = waitMs
        self.perLogin = perLogin
        self.holdP50Us = holdP50Us
        self.holdP99Us = holdP99Us
        self.holdMaxUs = holdMaxUs
        self.longHolds = longHolds
        self.shortHoldMs = shortHoldMs
        self.holdMaxOnCoreUs = holdMaxOnCoreUs
        self.holdsLeftCore = holdsLeftCore
        self.longHoldsOnCore = longHoldsOnCore
        self.heavyWork = heavyWork
        self.heavyWorkKinds = heavyWorkKinds
    }

    enum CodingKeys: String, CodingKey {
        case lock, acquisitions, contended, contendedShare = "contended_share", waitMs = "wait_ms", perLogin = "per_login"
        case holdP50Us = "hold_p50_us", holdP99Us = "hold_p99_us", holdMaxUs = "hold_max_us", longHolds = "long_holds"
        case shortHoldMs = "short_hold_ms", holdMaxOnCoreUs = "hold_max_on_core_us", holdsLeftCore = "holds_left_core"
        case longHoldsOnCore = "long_holds_on_core", heavyWork = "heavy_work", heavyWorkKinds = "heavy_work_kinds"
    }
}

/// The kernel's side of the contention run: how often it took a running thread of the process off
/// its core, against how long the flow-path locks were held while their holders ran.
///
/// A thread preempted while it holds a lock holds it until it runs again, milliseconds on a
/// machine with more runnable threads than cores, however short its critical section. Had every
/// preemption fallen at a random moment of the threads' running time, about
/// ``expectedPreemptedHolds`` of them would have landed inside a flow-path hold (the time inside
/// holds is that of the holds shorter than the max target: a long one's length is mostly the wait
/// to run again, not running time). It is an upper bound: a thread preempted on a wake-up is
/// preempted right after it woke another, which the product does after releasing its lock.
/// ``longHolds``, counted by the lock profiler, is what the run saw. The two come from separate
/// records: the kernel's count of involuntary context switches (`getrusage`) and the profiler's
/// hold histograms. The fields are constants, so the bound always agrees with the figures it was
/// computed from. ``holdsLeftCore`` is the profiler's own count, hold by hold, of the flow-path
/// holds whose thread was switched out (where its core watch is available).
package struct PreemptionRecord: Codable, Sendable, Equatable {
    /// Involuntary context switches of the process's threads during the run.
    package let involuntarySwitches: UInt64
    /// The process's CPU time during the run (user and system), in ms.
    package let cpuMs: Double
    /// The time the flow-path locks were held during the run by holds shorter than the max
    /// target, in ms.
    package let flowPathHoldMs: Double
    /// The flow-path holds of at least ``HoldTimeTargets/maxUs``.
    package let longHolds: UInt64
    /// `involuntarySwitches × flowPathHoldMs ÷ cpuMs`: the preemptions that would land inside a
    /// flow-path hold if they fell at random moments of running time; an upper bound.
    package let expectedPreemptedHolds: Double
    /// The flow-path holds whose thread the kernel switched out before it released the lock;
    /// `nil` where the core watch is unavailable, and in older reports.
    package let holdsLeftCore: UInt64?

    /// A record; the expected preempted holds are computed from the others.
    /// - Parameters:
    ///   - involuntarySwitches: The involuntary context switches during the run.
    ///   - cpuMs: The process's CPU time during the run, in ms.
    ///   - flowPathHoldMs: The flow-path locks' short holds together, in ms.
    ///   - longHolds: The flow-path holds of at least the max target.
    ///   - holdsLeftCore: The flow-path holds whose thread was switched out; `nil`: not watched.
    package init(involuntarySwitches: UInt64, cpuMs: Double, flowPathHoldMs: Double, longHolds: UInt64, holdsLeftCore: UInt64? = nil) {
        self.involuntarySwitches = involuntarySwitches
        self.cpuMs = cpuMs
        self.flowPathHoldMs = flowPathHoldMs
        self.longHolds = longHolds
        self.holdsLeftCore = holdsLeftCore
        expectedPreemptedHolds = cpuMs > 0 ? Double(involuntarySwitches) * min(flowPathHoldMs, cpuMs) / cpuMs : 0
    }

    /// The record of a run's flow-path rows.
    /// - Parameters:
    ///   - rows: The contention rows (only flow-path rows with hold figures count).
    ///   - involuntarySwitches: The involuntary context switches during the run.
    ///   - cpuMs: The process's CPU time during the run, in ms.
    package init(rows: [ContentionRow], involuntarySwitches: UInt64, cpuMs: Double) {
        let flowPath = rows.filter(\.isFlowPath)
        self.init(involuntarySwitches: involuntarySwitches, cpuMs: cpuMs, flowPathHoldMs: flowPath.reduce(0) { $0 + ($1.shortHoldMs ?? 0) },
                  longHolds: flowPath.reduce(0) { $0 + ($1.longHolds ?? 0) },
                  holdsLeftCore: flowPath.isEmpty || flowPath.contains { $0.holdsLeftCore == nil } ? nil : flowPath.reduce(0) { $0 + ($1.holdsLeftCore ?? 0) })
    }

    enum CodingKeys: String, CodingKey {
        case involuntarySwitches = "involuntary_switches", cpuMs = "cpu_ms", flowPathHoldMs = "flow_path_hold_ms", longHolds = "long_holds"
        case expectedPreemptedHolds = "expected_preempted_holds", holdsLeftCore = "holds_left_core"
    }
}

/// Memory and threads with many flows parked at the IDP.
package struct MemoryRow: Codable, Sendable, Equatable {
    /// The flows parked at the IDP at once.
    package var parkedFlows: Int
    /// Resident bytes per parked flow.
    package var bytesPerFlow: Double
    /// The process's OS threads while the flows were parked.
    package var threads: Int
    /// The SDK's `maximumWorkerThreads`.
    package var poolLimit: Int
    /// Resident bytes before the flows started.
    package var rssBeforeBytes: UInt64
    /// Resident bytes with every flow parked.
    package var rssParkedBytes: UInt64

    /// A memory row.
    /// - Parameters:
    ///   - parkedFlows: The flows parked at once.
    ///   - bytesPerFlow: Resident bytes per parked flow.
    ///   - threads: The OS threads while they were parked.
    ///   - poolLimit: The SDK's worker thread limit.
    ///   - rssBeforeBytes: Resident bytes before.
    ///   - rssParkedBytes: Resident bytes with every flow parked.
    package init(parkedFlows: Int, bytesPerFlow: Double, threads: Int, poolLimit: Int, rssBeforeBytes: UInt64, rssParkedBytes: UInt64) {
        self.parkedFlows = parkedFlows
        self.bytesPerFlow = bytesPerFlow
        self.threads = threads
        self.poolLimit = poolLimit
        self.rssBeforeBytes = rssBeforeBytes
        self.rssParkedBytes = rssParkedBytes
    }

    enum CodingKeys: String, CodingKey {
        case parkedFlows = "parked_flows", bytesPerFlow = "bytes_per_flow", threads, poolLimit = "pool_limit"
        case rssBeforeBytes = "rss_before_bytes", rssParkedBytes = "rss_parked_bytes"
    }
}

/// One target of the benchmark (a limit the engine is held to), as measured in this run.
package struct TargetRow: Codable, Sendable, Equatable {
    /// The target's name.
    package var name: String
    /// The measured figure.
    package var value: Double
    /// The limit the figure is held to.
    package var limit: Double
    /// Whether the figure is within the limit.
    package var met: Bool
    /// How the figure was computed, in words.
    package var detail: String
    /// The cores the target needs, set only where the machine had fewer: the figure is shown, but
    /// judged on a machine with that many (``verdict`` is "n/a: needs N cores"), not against this one.
    package var needsCores: Int?

    /// A target row.
    /// - Parameters:
    ///   - name: The target's name.
    ///   - value: The measured figure.
    ///   - limit: The limit.
    ///   - met: Whether the figure is within the limit.
    ///   - detail: How the figure was computed.
    ///   - needsCores: The cores the target needs, where the machine had fewer; `nil` otherwise.
    package init(name: String, value: Double, limit: Double, met: Bool, detail: String, needsCores: Int? = nil) {
        self.name = name
        self.value = value
        self.limit = limit
        self.met = met
        self.detail = detail
        self.needsCores = needsCores
    }

    /// "met", "MISSED", or "n/a: needs N cores" where the machine had fewer cores than the target needs.
    package var verdict: String {
        if let needsCores { return "n/a: needs \(needsCores) cores" }
        return met ? "met" : "MISSED"
    }

    /// Whether the figure missed a limit this machine could meet.
    package var missed: Bool { needsCores == nil && !met }

    enum CodingKeys: String, CodingKey {
        case name, value, limit, met, detail, needsCores = "needs_cores", verdict
    }

    /// Reads a row; `needs_cores` may be absent (older reports, or a machine with the cores).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        value = try container.decode(Double.self, forKey: .value)
        limit = try container.decode(Double.self, forKey: .limit)
        met = try container.decode(Bool.self, forKey: .met)
        detail = try container.decode(String.self, forKey: .detail)
        needsCores = try container.decodeIfPresent(Int.self, forKey: .needsCores)
    }

    /// Writes the row with its verdict, as the text and RESULTS.md show it.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(value, forKey: .value)
        try container.encode(limit, forKey: .limit)
        try container.encode(met, forKey: .met)
        try container.encode(detail, forKey: .detail)
        try container.encodeIfPresent(needsCores, forKey: .needsCores)
        try container.encode(verdict, forKey: .verdict)
    }
}
