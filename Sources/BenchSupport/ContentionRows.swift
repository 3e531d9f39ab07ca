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
