@testable import BenchSupport
import Foundation
import Testing

@Suite("CPU topology: physical cores from sysfs, and the order a scaling run pins CPUs in")
struct CPUTopologyTests {
    typealias Core = CPUTopology.Core

    /// A sysfs-like tree under a fresh directory: for each CPU, its socket and core id (`nil`:
    /// no files), or raw text for the core id.
    static func tree(_ cpus: [Int: (socket: String, core: String)?]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("idp-topology-\(UUID().uuidString)").path
        for (cpu, ids) in cpus {
            let directory = "\(root)/cpu\(cpu)/topology"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            guard let ids else { continue }
            try "\(ids.socket)\n".write(toFile: "\(directory)/physical_package_id", atomically: true, encoding: .utf8)
            try "\(ids.core)\n".write(toFile: "\(directory)/core_id", atomically: true, encoding: .utf8)
        }
        return root
    }

    @Test("a core's two threads numbered next to each other (0 and 1): one thread of every core comes first")
    func siblingsNumberedTogether() throws {
        let root = try Self.tree([0: ("0", "0"), 1: ("0", "0"), 2: ("0", "1"), 3: ("0", "1"), 4: ("0", "2"), 5: ("0", "2")])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let topology = try #require(CPUTopology.read(cpus: [0, 1, 2, 3, 4, 5], root: root))
        #expect(topology.physicalCores(of: [0, 1, 2, 3, 4, 5]) == 3)
        #expect(topology.physicalCores(of: [0, 1]) == 1, "two threads of one core are one core")
        #expect(topology.spread([0, 1, 2, 3, 4, 5]) == [0, 2, 4, 1, 3, 5])
        #expect(Array(topology.spread([0, 1, 2, 3, 4, 5]).prefix(2)) == [0, 2], "2 CPUs pinned are 2 cores")
    }

    @Test("threads numbered apart (0 and 4 share a core): the order is the CPU numbers'")
    func siblingsNumberedApart() throws {
        let root = try Self.tree([0: ("0", "0"), 1: ("0", "1"), 2: ("0", "2"), 3: ("0", "3"), 4: ("0", "0"), 5: ("0", "1"), 6: ("0", "2"), 7: ("0", "3")])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let topology = try #require(CPUTopology.read(cpus: Array(0..<8), root: root))
        #expect(topology.spread(Array(0..<8)) == Array(0..<8))
        #expect(topology.physicalCores(of: Array(0..<8)) == 4)
        #expect(topology.physicalCores(of: [0, 1, 2, 3]) == 4)
    }

    @Test("the same core id on two sockets is two cores")
    func coresOfTwoSockets() throws {
        let root = try Self.tree([0: ("0", "0"), 1: ("1", "0"), 2: ("0", "0"), 3: ("1", "0")])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let topology = try #require(CPUTopology.read(cpus: [0, 1, 2, 3], root: root))
        #expect(topology.physicalCores(of: [0, 1, 2, 3]) == 2)
        #expect(topology.spread([3, 2, 1, 0]) == [0, 1, 2, 3], "input order does not matter; each CPU once")
    }

    @Test("a CPU whose files are missing or hold no number: no topology at all")
    func unreadableTopology() throws {
        let missing = try Self.tree([0: ("0", "0"), 1: nil])
        let garbage = try Self.tree([0: ("0", "0"), 1: ("0", "one")])
        defer {
            try? FileManager.default.removeItem(atPath: missing)
            try? FileManager.default.removeItem(atPath: garbage)
        }
        #expect(CPUTopology.read(cpus: [0, 1], root: missing) == nil)
        #expect(CPUTopology.read(cpus: [0, 1], root: garbage) == nil)
        #expect(CPUTopology.read(cpus: [0], root: "/nonexistent-\(UUID().uuidString)") == nil)
    }

    @Test("a CPU the topology does not know counts as a core of its own, after the known cores' first threads")
    func unknownCPUs() {
        let topology = CPUTopology(coreOf: [0: Core(socket: 0, core: 0), 1: Core(socket: 0, core: 0), 2: Core(socket: 0, core: 1)])
        #expect(topology.spread([0, 1, 2, 9]) == [0, 2, 9, 1])
        #expect(topology.physicalCores(of: [0, 1, 2, 9]) == 3)
        #expect(topology.spread([]) == [])
    }

    @Test("the report names the physical cores only where they are fewer than the CPUs, and reads reports written without them")
    func describedInTheReport() throws {
        var machine = Machine(cores: 16, os: "Linux", swift: "6.3", date: "2026-11-27", cpu: "x", physicalCores: 8)
        #expect(machine.coresDescription == "16 (8 physical cores)")
        machine.physicalCores = 16
        #expect(machine.coresDescription == "16")
        machine.physicalCores = nil
        #expect(machine.coresDescription == "16")
        let old = #"{"cores":2,"os":"Linux","swift":"6.3","date":"2026-11-27"}"#
        let decoded = try JSONDecoder().decode(Machine.self, from: Data(old.utf8))
        #expect(decoded.physicalCores == nil)
        #expect(scalingColumnTitle(ScalingRow(cores: 16, flows: [], loneLoginP50Us: 1, providers: [], physicalCores: 8)) == "16 cores (8 physical)")
        #expect(scalingColumnTitle(ScalingRow(cores: 1, flows: [], loneLoginP50Us: 1, providers: [], physicalCores: 1)) == "1 core")
    }

    @Test("the scaling note says how the columns were pinned: one CPU per core first where the report records physical cores, the first N CPUs in an older report")
    func pinningNamedByTheReport() {
        var report = sampleReport()
        report.scaling = scalingRows([1, 2])
        let old = render(report, as: .text)
        #expect(old.contains("pinned (sched_setaffinity) to the first N allowed CPUs"))
        #expect(!old.contains("one per physical core"))
        report.scaling = report.scaling.map { row in
            var row = row
            row.physicalCores = row.cores
            return row
        }
        let new = render(report, as: .text)
        #expect(new.contains("one per physical core before any core's second thread"))
        #expect(!new.contains("the first N allowed CPUs"))
    }
}
