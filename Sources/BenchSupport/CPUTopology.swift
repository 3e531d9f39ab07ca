import Foundation

/// Which CPUs share a physical core, read from Linux's `sysfs`
/// (`cpuN/topology/physical_package_id` and `core_id`).
///
/// A machine with simultaneous multithreading shows each physical core as two or more CPUs. Two
/// threads of one core share its execution units and caches, so "2 cores" pinned to two threads of
/// one core measure about one core's work: a scaling run that takes the first N CPUs in number
/// order measures something else on a machine that numbers a core's threads next to each other
/// (0 and 1) than on one that numbers them apart (0 and 8). ``spread(_:)`` orders the CPUs one per
/// physical core first, so the first N cover N cores wherever the machine has them.
package struct CPUTopology: Sendable, Equatable {
    /// A physical core: its socket (physical package) and its core number there.
    package struct Core: Hashable, Sendable, Comparable {
        package var socket: Int
        package var core: Int

        package init(socket: Int, core: Int) {
            self.socket = socket
            self.core = core
        }

        package static func < (lhs: Core, rhs: Core) -> Bool {
            (lhs.socket, lhs.core) < (rhs.socket, rhs.core)
        }
    }

    /// Each CPU's physical core.
    package let coreOf: [Int: Core]

    package init(coreOf: [Int: Core]) {
        self.coreOf = coreOf
    }

    /// The topology of `cpus`, read under `root`; `nil` when any CPU's files are missing or do not
    /// hold a number (not Linux, or a kernel that does not say).
    package static func read(cpus: [Int], root: String = "/sys/devices/system/cpu") -> CPUTopology? {
        var coreOf: [Int: Core] = [:]
        for cpu in cpus {
            let directory = "\(root)/cpu\(cpu)/topology"
            guard let socket = number(at: "\(directory)/physical_package_id"),
                  let core = number(at: "\(directory)/core_id") else { return nil }
            coreOf[cpu] = Core(socket: socket, core: core)
        }
        return CPUTopology(coreOf: coreOf)
    }

    private static func number(at path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// How many physical cores `cpus` are on (a CPU the topology does not know counts as a core of
    /// its own).
    package func physicalCores(of cpus: [Int]) -> Int {
        var cores = Set<Core>()
        var unknown = 0
        for cpu in cpus {
            if let core = coreOf[cpu] { cores.insert(core) } else { unknown += 1 }
        }
        return cores.count + unknown
    }

    /// `cpus` in the order a scaling run takes them: the first thread of every physical core (in
    /// core order), then the second thread of every core that has one, and so on; within a core,
    /// its threads in CPU number order. A CPU the topology does not know counts as a core of its
    /// own. Every CPU of `cpus` appears once.
    package func spread(_ cpus: [Int]) -> [Int] {
        var threads: [Core: [Int]] = [:]
        var unknown: [Int] = []
        for cpu in Set(cpus).sorted() {
            if let core = coreOf[cpu] { threads[core, default: []].append(cpu) } else { unknown.append(cpu) }
        }
        // A CPU of unknown core sorts as a core of its own, after the known ones.
        var columns: [[Int]] = threads.keys.sorted().map { threads[$0] ?? [] }
        columns += unknown.map { [$0] }
        let total = columns.reduce(0) { $0 + $1.count }
        var order: [Int] = []
        order.reserveCapacity(total)
        var rank = 0
        while order.count < total {
            for column in columns where rank < column.count { order.append(column[rank]) }
            rank += 1
        }
        return order
    }
}
