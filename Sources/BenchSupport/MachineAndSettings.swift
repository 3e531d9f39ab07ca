import Foundation

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
