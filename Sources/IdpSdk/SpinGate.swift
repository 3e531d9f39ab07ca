import Dispatch
import Foundation
import IdpPrimitives
import Synchronization

/// Whether an idle pool thread may spin: only while the process leaves a core idle. A pure value:
/// it is given clock readings and keeps its own arithmetic, so tests drive it without threads.
///
/// Once per `interval` (20 ms) at most, a reading of the wall clock and the process's CPU time
/// gives the share of the cores the process kept busy since the last one, not counting the CPU
/// time spent spinning (which would otherwise stop the spin by itself: at one flow in flight the
/// spinner alone keeps a core half busy). At `busyShare` or more, spins stop until a later
/// reading shows a core idle again. By default `busyShare` is (cores − 1) ÷ cores, the share above
/// which no core is left idle on average: ½ on 2 cores, ¾ on 4 (one core stops spinning after
/// its first reading). The interval is tens of milliseconds because the kernel adds a running
/// thread's time to the process's total at its clock ticks: over one millisecond the busy share
/// reads low.
struct SpinGate: Sendable {
    /// A moment: monotonic wall-clock and process CPU time, in nanoseconds.
    struct Reading: Sendable, Equatable {
        var wall: UInt64
        var cpu: UInt64

        /// The clocks now (two `clock_gettime` calls; the CPU time is a system call).
        static func now() -> Reading {
            var cpu = timespec()
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu)
            return Reading(wall: wallNow(), cpu: nanoseconds(cpu))
        }

        /// The calling thread's CPU time (a system call).
        static func threadCPUNow() -> UInt64 {
            var cpu = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
            return nanoseconds(cpu)
        }

        /// The monotonic clock alone (no system call on Linux: the vDSO answers).
        static func wallNow() -> UInt64 {
            var wall = timespec()
            clock_gettime(CLOCK_MONOTONIC, &wall)
            return nanoseconds(wall)
        }

        private static func nanoseconds(_ time: timespec) -> UInt64 { UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec) }
    }

    let cores: Int
    let busyShare: Double
    let interval: UInt64
    private var last: (reading: Reading, spun: UInt64)?
    /// Nanoseconds spent spinning, in all.
    private var spun: UInt64 = 0
    /// What the last reading decided; spins are allowed until a reading says otherwise.
    private var allowed = true

    /// Whether a spin might be allowed at wall time `now`: the last reading allowed it, or a new
    /// reading is due (then ``allowsSpin(_:)`` decides).
    func mayAllow(at now: UInt64) -> Bool {
        guard !allowed, let last else { return true }
        return now &- last.reading.wall >= interval
    }

    init(cores: Int, busyShare: Double? = nil, interval: Duration = .milliseconds(20)) {
        self.cores = max(1, cores)
        self.busyShare = busyShare ?? Double(max(1, cores) - 1) / Double(max(1, cores))
        self.interval = UInt64(interval.components.seconds) &* 1_000_000_000 &+ UInt64(interval.components.attoseconds / 1_000_000_000)
    }

    /// Takes `reading` into account (if `interval` has passed since the last one) and says
    /// whether a spin may start now.
    mutating func allowsSpin(_ reading: Reading) -> Bool {
        guard let last else {
            self.last = (reading, spun)
            return allowed
        }
        let elapsed = reading.wall &- last.reading.wall
        guard reading.wall > last.reading.wall, elapsed >= interval else { return allowed }
        let cpu = reading.cpu >= last.reading.cpu ? reading.cpu - last.reading.cpu : 0
        let working = cpu - min(cpu, spun &- last.spun)
        allowed = Double(working) < busyShare * Double(elapsed) * Double(cores)
        self.last = (reading, spun)
        return allowed
    }

    /// Counts `nanoseconds` of CPU time spent spinning.
    mutating func spent(_ nanoseconds: UInt64) { spun &+= nanoseconds }
}
