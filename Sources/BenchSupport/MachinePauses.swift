import Dispatch
import IdpPrimitives

/// How long the machine paused threads that had nothing to do but spin: the pauses no code under
/// a lock can avoid, measured with the same core watch the lock profiler uses.
///
/// ``MachinePauseProbe/measure(threads:seconds:)`` runs one OS thread per core, each reading the
/// monotonic clock in a tight loop for a while. A gap between two reads is a pause: one during
/// which the kernel switched the thread out counts in ``switchedOut``; one during which the thread
/// kept its core (an interrupt, the hypervisor taking the virtual CPU away) is an *on-core* pause,
/// and the longest of those is ``longestOnCoreUs``. A lock held across such a pause is held that
/// long however little work is under it, so a hold-time limit below that figure cannot be met on
/// the machine every run.
///
/// `idp-bench` measures them right after its contention run, not before: a second of every core
/// spinning can leave a virtual machine slower for a while after it.
package struct MachinePauses: Codable, Sendable, Equatable {
    /// The spinning threads.
    package var threads: Int
    /// How long each spun, in seconds.
    package var seconds: Double
    /// The longest pause during which a thread kept its core, in µs.
    package var longestOnCoreUs: Double
    /// The on-core pauses of at least ``HoldTimeTargets/maxUs``.
    package var onCoreOverLimit: UInt64
    /// The pauses during which the kernel switched a thread out.
    package var switchedOut: UInt64

    /// A record of pauses.
    /// - Parameters:
    ///   - threads: The spinning threads.
    ///   - seconds: How long each spun.
    ///   - longestOnCoreUs: The longest on-core pause, in µs.
    ///   - onCoreOverLimit: The on-core pauses of at least the max hold target.
    ///   - switchedOut: The pauses during which a thread was switched out.
    package init(threads: Int, seconds: Double, longestOnCoreUs: Double, onCoreOverLimit: UInt64, switchedOut: UInt64) {
        self.threads = threads
        self.seconds = seconds
        self.longestOnCoreUs = longestOnCoreUs
        self.onCoreOverLimit = onCoreOverLimit
        self.switchedOut = switchedOut
    }

    enum CodingKeys: String, CodingKey {
        case threads, seconds, longestOnCoreUs = "longest_on_core_us", onCoreOverLimit = "on_core_over_limit", switchedOut = "switched_out"
    }
}

/// Measures ``MachinePauses``.
package enum MachinePauseProbe {
    /// Spins `threads` OS threads for `seconds` each, reading the clock, and returns the pauses
    /// they saw; `nil` where the core watch is unavailable (an on-core pause cannot be told from
    /// a switch there) or `threads` is not positive.
    ///
    /// - Parameters:
    ///   - threads: How many threads spin at once; one per core measures every core.
    ///   - seconds: How long each spins.
    ///   - injectedPause: What a thread does once, half-way through its spin,
    ///     between two reads of the clock (a pause the probe must report).
    /// - Returns: The pauses, or `nil`.
    package static func measure(threads: Int, seconds: Double, injectedPause: (@Sendable () -> Void)? = nil) async -> MachinePauses? {
        guard CoreWatch.isAvailable, threads > 0 else { return nil }
        let span = UInt64(max(0, seconds) * 1e9)
        let limit = UInt64(HoldTimeTargets.maxUs * 1e3)
        let spun = await OSThreads.run(threads, together: true) { _ -> (longest: UInt64, over: UInt64, switched: UInt64) in
            var longest: UInt64 = 0, over: UInt64 = 0, switched: UInt64 = 0
            var pending = injectedPause
            let start = DispatchTime.now().uptimeNanoseconds
            CoreWatch.mark()
            var last = start
            while true {
                if let pause = pending, last &- start >= span / 2 {
                    pending = nil
                    pause()
                }
                let now = DispatchTime.now().uptimeNanoseconds
                if CoreWatch.leftCoreSinceMark() == true {
                    switched += 1
                    CoreWatch.mark()
                    last = DispatchTime.now().uptimeNanoseconds
                } else {
                    let gap = now &- last
                    longest = max(longest, gap)
                    if gap >= limit { over += 1 }
                    last = now
                }
                if last &- start >= span { break }
            }
            return (longest, over, switched)
        }
        return MachinePauses(threads: threads, seconds: seconds, longestOnCoreUs: Double(spun.map(\.longest).max() ?? 0) / 1e3,
                             onCoreOverLimit: spun.reduce(0) { $0 + $1.over }, switchedOut: spun.reduce(0) { $0 + $1.switched })
    }
}
