import Foundation

/// Everything one `idp-bench` run measured; its JSON form is schema `"idp-bench/1"` (keys in
/// snake_case, documented in the BenchSupport article "idp-bench").
public struct BenchReport: Codable, Sendable, Equatable {
    public static let currentSchema = "idp-bench/1"

    public var schema = BenchReport.currentSchema
    public var machine: Machine
    public var settings: Settings
    public var providers: [ProviderRow]
    public var floors: [FloorRow]
    public var flows: [FlowRow]
    public var contention: [ContentionRow]
    public var memory: MemoryRow?
    public var targets: [TargetRow]

    public init(machine: Machine, settings: Settings, providers: [ProviderRow] = [], floors: [FloorRow] = [], flows: [FlowRow] = [],
                contention: [ContentionRow] = [], memory: MemoryRow? = nil, targets: [TargetRow] = []) {
        self.machine = machine
        self.settings = settings
        self.providers = providers
        self.floors = floors
        self.flows = flows
        self.contention = contention
        self.memory = memory
        self.targets = targets
    }

    /// The report as pretty-printed JSON with sorted keys.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain structs of numbers and strings cannot fail.
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    /// Reads a report written by ``json()``.
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
            return try JSONDecoder().decode(BenchReport.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw BenchReportError("missing key '\(key.stringValue)' at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch {
            throw BenchReportError("unreadable report: \(error)")
        }
    }
}

/// Why a report could not be read.
public struct BenchReportError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The machine a run measured.
public struct Machine: Codable, Sendable, Equatable {
    /// The processors the run could use.
    public var cores: Int
    /// The operating system, as the system names it.
    public var os: String
    /// The Swift language version the benchmark was compiled with.
    public var swift: String
    /// When the run started, ISO 8601.
    public var date: String
    /// The processor's model name (`/proc/cpuinfo` on Linux); `nil` where unknown and in reports
    /// written without it.
    public var cpu: String?

    /// A machine as a run saw it.
    /// - Parameters:
    ///   - cores: The processors the run could use.
    ///   - os: The operating system.
    ///   - swift: The Swift language version.
    ///   - date: When the run started, ISO 8601.
    ///   - cpu: The processor's model name, if known.
    public init(cores: Int, os: String, swift: String, date: String, cpu: String? = nil) {
        self.cores = cores
        self.os = os
        self.swift = swift
        self.date = date
        self.cpu = cpu
    }

    /// The model name of this machine's processor, from `/proc/cpuinfo`; `nil` where that file
    /// does not exist or names none.
    public static func processorModel() -> String? {
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
public struct Settings: Codable, Sendable, Equatable {
    public var secondsPerCell: Double
    public var latencyMs: Double
    public var seed: UInt64
    public var sections: [String]
    public var threads: [Int]
    public var inFlight: [Int]
    public var quick: Bool

    public init(secondsPerCell: Double, latencyMs: Double, seed: UInt64, sections: [String], threads: [Int], inFlight: [Int], quick: Bool) {
        self.secondsPerCell = secondsPerCell
        self.latencyMs = latencyMs
        self.seed = seed
        self.sections = sections
        self.threads = threads
        self.inFlight = inFlight
        self.quick = quick
    }

    enum CodingKeys: String, CodingKey {
        case secondsPerCell = "seconds_per_cell", latencyMs = "latency_ms", seed, sections, threads, inFlight = "in_flight", quick
    }
}

/// One provider strategy at one thread count.
public struct ProviderRow: Codable, Sendable, Equatable {
    public var strategy: String
    /// `"product"` (a provider of CredentialProviders) or `"peer"` (another SDK's pattern).
    public var kind: String
    /// Whether this is the recommended provider (`CredentialStore`).
    public var recommended: Bool
    public var threads: Int
    /// Wall-clock nanoseconds per call of all threads together.
    public var nsPerCall: Double
    public var calls: UInt64

    public init(strategy: String, kind: String, recommended: Bool, threads: Int, nsPerCall: Double, calls: UInt64) {
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
public struct FloorRow: Codable, Sendable, Equatable {
    /// The name prefix of the rows of idp-bench's `idp` section (the IDP's own operations, set
    /// against the Mutex floor measured with them), which are shown in a table of their own.
    public static let idpPrefix = "IDP: "
    /// The floor the `idp` section's operations are set against.
    public static let idpFloor = idpPrefix + "Mutex + dictionary lookup"

    /// Whether this row belongs to the `idp` section.
    public var isIdpOperation: Bool { name.hasPrefix(Self.idpPrefix) }

    public var name: String
    public var threads: Int
    public var nsPerOp: Double
    public var ops: UInt64

    public init(name: String, threads: Int, nsPerOp: Double, ops: UInt64) {
        self.name = name
        self.threads = threads
        self.nsPerOp = nsPerOp
        self.ops = ops
    }

    enum CodingKeys: String, CodingKey { case name, threads, nsPerOp = "ns_per_op", ops }
}

/// Latency percentiles, in microseconds.
public struct Percentiles: Codable, Sendable, Equatable {
    public var p0, p25, p50, p75, p90, p99, p999, p100: Double

    public init(p0: Double, p25: Double, p50: Double, p75: Double, p90: Double, p99: Double, p999: Double, p100: Double) {
        (self.p0, self.p25, self.p50, self.p75, self.p90, self.p99, self.p999, self.p100) = (p0, p25, p50, p75, p90, p99, p999, p100)
    }

    /// The eight values with their names, in order.
    public var named: [(name: String, value: Double)] {
        [("p0", p0), ("p25", p25), ("p50", p50), ("p75", p75), ("p90", p90), ("p99", p99), ("p999", p999), ("p100", p100)]
    }
}

/// One end-to-end cell: a scenario at one in-flight level (closed loop) or arrival rate (open).
public struct FlowRow: Codable, Sendable, Equatable {
    /// `"activation"` or `"login"`.
    public var scenario: String
    /// `"closed"` or `"open"`.
    public var mode: String
    public var inFlight: Int
    /// The open loop's arrival rate; `nil` for the closed loop.
    public var offeredPerS: Double?
    public var throughputPerS: Double
    public var completed: Int
    public var errors: Int
    public var latencyUs: Percentiles
    /// The process's CPU time (user + system) over a round's measurement window divided by the
    /// flows completed in it, in µs (the median round's); what a flow costs whatever else the
    /// machine runs. `nil` in reports from before it was measured.
    public var cpuUsPerFlow: Double?
    /// The `Mutex` + dictionary lookup floor on one thread, measured for 20 ms right before each
    /// round of this closed-loop cell: the median, in ns. The unit the row's figures are judged
    /// in, measured beside them. `nil` for the open loop and in older reports.
    public var floorNs: Double?
    /// For a closed-loop cell at 1 in flight: the p50 of ``measureHandBack(samples:before:after:)``
    /// in a child task, as the closed loop's workers are, measured right before each round (the
    /// median of rounds), in µs. The thread wake-up a lone flow pays to hand its result back to
    /// the caller's task on Swift's pool, which no engine work shortens; `nil` at other levels
    /// and in older reports.
    public var handBackUs: Double?

    public init(scenario: String, mode: String, inFlight: Int, offeredPerS: Double?, throughputPerS: Double, completed: Int, errors: Int, latencyUs: Percentiles,
                cpuUsPerFlow: Double? = nil, floorNs: Double? = nil, handBackUs: Double? = nil) {
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
    }

    enum CodingKeys: String, CodingKey {
        case scenario, mode, inFlight = "in_flight", offeredPerS = "offered_per_s", throughputPerS = "throughput_per_s", completed, errors
        case latencyUs = "latency_us", cpuUsPerFlow = "cpu_us_per_flow", floorNs = "floor_ns", handBackUs = "hand_back_us"
    }
}

/// One lock's contention during the contention run.
public struct ContentionRow: Codable, Sendable, Equatable {
    public var lock: String
    public var acquisitions: UInt64
    public var contended: UInt64
    public var contendedShare: Double
    public var waitMs: Double

    public init(lock: String, acquisitions: UInt64, contended: UInt64, contendedShare: Double, waitMs: Double) {
        self.lock = lock
        self.acquisitions = acquisitions
        self.contended = contended
        self.contendedShare = contendedShare
        self.waitMs = waitMs
    }

    enum CodingKeys: String, CodingKey { case lock, acquisitions, contended, contendedShare = "contended_share", waitMs = "wait_ms" }
}

/// Memory and threads with many flows parked at the IDP.
public struct MemoryRow: Codable, Sendable, Equatable {
    public var parkedFlows: Int
    public var bytesPerFlow: Double
    public var threads: Int
    /// The SDK's `maximumWorkerThreads`.
    public var poolLimit: Int
    public var rssBeforeBytes: UInt64
    public var rssParkedBytes: UInt64

    public init(parkedFlows: Int, bytesPerFlow: Double, threads: Int, poolLimit: Int, rssBeforeBytes: UInt64, rssParkedBytes: UInt64) {
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
public struct TargetRow: Codable, Sendable, Equatable {
    public var name: String
    public var value: Double
    public var limit: Double
    public var met: Bool
    public var detail: String

    public init(name: String, value: Double, limit: Double, met: Bool, detail: String) {
        self.name = name
        self.value = value
        self.limit = limit
        self.met = met
        self.detail = detail
    }
}
