import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How many processors this process may run on: what the SDK's worker pools, the IDP's shards and
/// the thread stripes are sized from.
///
/// `ProcessInfo.activeProcessorCount` counts the machine's processors, whatever CPU set the
/// process was started in (`taskset`, a container's cpuset): a process pinned to 2 of 16 CPUs
/// would size itself for 16. On Linux this is the number of CPUs in the process's affinity mask
/// (`sched_getaffinity`), and never more than `activeProcessorCount` (which follows a container's
/// CPU quota); elsewhere `activeProcessorCount`.
package enum Processors {
    /// The count when the process first asked: sizes chosen at start stay as they were chosen.
    package static let available: Int = allowedNow()

    /// The processors the calling thread may run on now, at least 1.
    package static func allowedNow() -> Int {
        let active = max(1, ProcessInfo.processInfo.activeProcessorCount)
        guard let allowed = allowedCPUs() else { return active }
        return max(1, min(active, allowed.count))
    }

    /// The CPUs the calling thread may run on, in ascending order: its affinity mask on Linux;
    /// `nil` where there is none to read.
    package static func allowedCPUs() -> [Int]? {
        #if os(Linux)
        var mask = cpu_set_t()
        guard let getAffinity, getAffinity(0, MemoryLayout<cpu_set_t>.size, &mask) == 0 else { return nil }
        return withUnsafeBytes(of: &mask) { bytes in
            var cpus: [Int] = []
            for index in 0..<bytes.count where bytes[index] != 0 {
                for bit in 0..<8 where bytes[index] & (1 << bit) != 0 { cpus.append(index * 8 + bit) }
            }
            return cpus
        }
        #else
        return nil
        #endif
    }

    /// The CPU the calling thread runs on now (it may move right after); `nil` where the system
    /// does not say (glibc's `sched_getcpu` elsewhere than Linux, or a failed call).
    package static func currentCPU() -> Int? {
        #if os(Linux)
        guard let getCPU else { return nil }
        let cpu = getCPU()
        return cpu >= 0 ? Int(cpu) : nil
        #else
        return nil
        #endif
    }

    #if os(Linux)
    private typealias GetCPU = @convention(c) () -> Int32

    /// glibc's `sched_getcpu`, looked up at run time: the Glibc module does not import it.
    private static let getCPU: GetCPU? = dlsym(nil, "sched_getcpu").map { unsafeBitCast($0, to: GetCPU.self) }

    private typealias GetAffinity = @convention(c) (pid_t, Int, UnsafeMutablePointer<cpu_set_t>) -> Int32

    /// glibc's `sched_getaffinity`, looked up at run time: the Glibc module does not import it.
    private static let getAffinity: GetAffinity? = dlsym(nil, "sched_getaffinity").map { unsafeBitCast($0, to: GetAffinity.self) }
    #endif
}
