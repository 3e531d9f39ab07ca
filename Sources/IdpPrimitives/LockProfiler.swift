import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts, for every labelled lock, how many acquisitions found it held and how long they waited,
/// and measures how long each acquisition held it: the contention and hold-time figures of
/// `idp-bench`.
///
/// ```swift
/// let table = LockedValue([String: Int](), label: "MyStore.table")
/// LockProfiler.start()
/// // … run the workload …
/// for lock in LockProfiler.stop() {
///     print(lock.label, lock.contendedShare, lock.waitNanoseconds, lock.holds.p99Nanoseconds, lock.holds.maxNanoseconds)
/// }
/// ```
///
/// Off by default; then a labelled lock pays one relaxed atomic load per acquisition (and a test of
/// a word that is 0 when it releases the lock). While on, an
/// acquisition first tries the lock; only when that fails does it read the clock, block, and read
/// the clock again. Then it reads the clock once the lock is taken and once more right before it is
/// released, and counts the difference, the hold, in a log-linear histogram (16 buckets per power
/// of two: a percentile is within 1/16 of the true value, never below it) and in an exact maximum.
/// A hold is long when the work under the lock is long, whatever the number of cores, so hold times
/// show on 2 cores what contention shows only on many. A hold is also long when the kernel switched
/// its thread out before it released the lock: ``CoreWatch`` marks the thread when the hold starts
/// and looks when it ends (one store and one load of a word of the thread's own), and a hold
/// whose thread left its core is counted apart as well, so the longest hold kept on core is the
/// work under the lock without the scheduler's pauses.
///
/// A hold's length shows heavy work under a lock only when it runs long; ``noteHeavyWork(_:)``
/// shows it every time: the product notes each SHA-256, draw of random bytes, rendering and large
/// allocation where it does it, and while profiling is on each note counts against every labelled
/// lock its thread holds then (``Figures/heavyWork``; each thread keeps one bit per label it holds).
///
/// Counters and histograms are per thread (each thread adds to its own slots, relaxed atomics that
/// no other thread writes; a thread's histogram of a label is made at its first hold of that label
/// while profiling), so measuring takes no shared lock and writes no shared cache line; ``stop()``
/// sums them. At most ``capacity`` distinct labels are profiled; later labels are not counted.
@usableFromInline
package enum LockProfiler {
    /// One lock's figures, summed over all threads.
    package struct Figures: Sendable, Equatable {
        /// The label the lock was created with.
        package let label: String
        /// Acquisitions while profiling was on.
        package let acquisitions: UInt64
        /// Acquisitions that found the lock held and had to wait.
        package let contended: UInt64
        /// Total time those acquisitions waited, in nanoseconds.
        package let waitNanoseconds: UInt64
        /// How long the lock was held each time, from taking it to releasing it.
        package let holds: HoldTimes
        /// The holds whose thread the kernel switched out before it released the lock (``CoreWatch``):
        /// preempted, or blocked under the lock; a part of ``holds``, its maximum not kept (0).
        /// `nil` where the watch is unavailable.
        package let holdsThatLeftCore: HoldTimes?
        /// The longest hold whose thread kept its core throughout, in nanoseconds (0 when there was
        /// none): the work under the lock, with the scheduler's pauses left out. `nil` where the
        /// watch is unavailable.
        package let keptCoreMaxNanoseconds: UInt64?

        /// The heavy work (``HeavyWork``) noted while a hold of this lock was open on the noting
        /// thread: how many times, and of which kinds.
        package let heavyWork: UInt64
        package let heavyWorkKinds: Set<HeavyWork>

        /// Figures; the two core-watch figures `nil` (unavailable) unless given.
        package init(label: String, acquisitions: UInt64, contended: UInt64, waitNanoseconds: UInt64, holds: HoldTimes,
                     holdsThatLeftCore: HoldTimes? = nil, keptCoreMaxNanoseconds: UInt64? = nil,
                     heavyWork: UInt64 = 0, heavyWorkKinds: Set<HeavyWork> = []) {
            self.label = label
            self.acquisitions = acquisitions
            self.contended = contended
            self.waitNanoseconds = waitNanoseconds
            self.holds = holds
            self.holdsThatLeftCore = holdsThatLeftCore
            self.keptCoreMaxNanoseconds = keptCoreMaxNanoseconds
            self.heavyWork = heavyWork
            self.heavyWorkKinds = heavyWorkKinds
        }

        /// The share of acquisitions that found the lock held, 0…1.
        package var contendedShare: Double { acquisitions == 0 ? 0 : Double(contended) / Double(acquisitions) }
    }

    /// How long a lock was held, each time, while profiling was on: a histogram of the holds, in
    /// nanoseconds, summed over all threads.
    ///
    /// A hold runs from the moment the lock is taken to the moment right before it is released, so
    /// it includes one read of the clock (tens of nanoseconds), and any time the holding thread
    /// was descheduled while it held the lock (on a machine with more runnable threads than cores,
    /// a time slice: milliseconds); ``Figures/holdsThatLeftCore`` and
    /// ``Figures/keptCoreMaxNanoseconds`` tell those apart where ``CoreWatch`` works. A
    /// ``ConditionLockedValue`` wait
    /// counts each stretch the lock is held between waits as a hold of its own.
    package struct HoldTimes: Sendable, Equatable {
        /// The histogram's buckets: 16 per power of two, exact below 32 ns, up to about 18 minutes.
        package static var scale: LogLinearScale { LogLinearScale(subBucketBits: 4, topBit: 39) }

        /// The number of holds in each bucket of ``scale``.
        let counts: [UInt64]
        /// How many holds were measured.
        package let count: UInt64
        /// The longest hold, exactly, in nanoseconds; 0 when none was measured.
        package let maxNanoseconds: UInt64

        /// Holds from their bucket counts and their exact maximum.
        package init(counts: [UInt64], maxNanoseconds: UInt64) {
            precondition(counts.count == Self.scale.bucketCount, "HoldTimes needs \(Self.scale.bucketCount) bucket counts, got \(counts.count)")
            self.counts = counts
            count = counts.reduce(0, &+)
            self.maxNanoseconds = maxNanoseconds
        }

        /// No holds.
        package static let none = HoldTimes(counts: Array(repeating: 0, count: scale.bucketCount), maxNanoseconds: 0)

        /// The hold at percentile `p`: the highest value of the bucket that holds the
        /// ⌈p% · count⌉-th shortest hold, so never below the true value and at most 1/16 above it;
        /// the exact maximum at 100. 0 when no hold was measured.
        /// - Parameter p: The percentile, 0 … 100.
        /// - Returns: The hold at that percentile, in nanoseconds.
        package func nanoseconds(atPercentile p: Double) -> UInt64 {
            let p = min(100, max(0, p))
            if p == 100 { return maxNanoseconds }
            return Self.scale.value(atPercentile: p, counts: counts, count: count, max: maxNanoseconds)
        }

        /// How many holds lasted at least `threshold` nanoseconds, to the histogram's resolution:
        /// the holds of every bucket from the one `threshold` falls in, so a hold up to 1/16 shorter
        /// than `threshold` may count.
        /// - Parameter threshold: The shortest hold counted, in nanoseconds.
        /// - Returns: The number of such holds.
        package func count(atLeast threshold: UInt64) -> UInt64 {
            var total: UInt64 = 0
            var bucket = Self.scale.index(of: threshold)
            while bucket < counts.count {
                total &+= counts[bucket]
                bucket += 1
            }
            return total
        }

        /// The time the holds shorter than `threshold` held the lock together, in nanoseconds, to
        /// the histogram's resolution: each counted at the highest value of its bucket (never below,
        /// at most 1/16 above), the buckets below the one `threshold` falls in.
        /// - Parameter threshold: The first hold length left out, in nanoseconds.
        /// - Returns: Their total, in nanoseconds.
        package func totalNanoseconds(below threshold: UInt64) -> UInt64 {
            var total: UInt64 = 0
            let end = Swift.min(counts.count, Self.scale.index(of: threshold))
            for bucket in 0..<end where counts[bucket] > 0 {
                total &+= counts[bucket] &* Self.scale.highestValue(in: bucket)
            }
            return total
        }

        /// The median hold, in nanoseconds.
        package var p50Nanoseconds: UInt64 { nanoseconds(atPercentile: 50) }
        /// The 99th-percentile hold, in nanoseconds.
        package var p99Nanoseconds: UInt64 { nanoseconds(atPercentile: 99) }
    }

    /// The most labels profiled at once.
    package static let capacity = 64

    /// Starts counting, from zero.
    package static func start() {
        // The core watch's self-test (which sleeps) runs here, not inside the first profiled hold.
        _ = CoreWatch.isAvailable
        for counters in registry.withLock({ $0.threads }) { counters.reset() }
        Instrumentation.set(Instrumentation.profiling, true)
    }

    /// Stops counting and returns the figures of every label that was acquired while on, busiest
    /// first.
    package static func stop() -> [Figures] { stopReport().locks }

    /// What one profiling run counted: every label's figures, and the heavy work noted anywhere.
    package struct Report: Sendable {
        /// The figures of every label acquired while on, busiest first.
        package let locks: [Figures]
        /// How many times ``noteHeavyWork(_:)`` was called while on, under a lock or not, by kind:
        /// a check of heavy work under locks that saw none noted at all was not exercised.
        package let heavyWorkNoted: [HeavyWork: UInt64]
    }

    /// Stops counting and returns what it counted.
    package static func stopReport() -> Report {
        Instrumentation.set(Instrumentation.profiling, false)
        let (labels, threads) = registry.withLock { ($0.labels, $0.threads) }
        var figures: [Figures] = []
        let watched = CoreWatch.isAvailable
        for (id, label) in labels.enumerated() {
            var acquisitions: UInt64 = 0, contended: UInt64 = 0, wait: UInt64 = 0, longest: UInt64 = 0
            var longestKept: UInt64 = 0, heavy: UInt64 = 0, heavyKinds: UInt64 = 0
            var holds = [UInt64](repeating: 0, count: HoldTimes.scale.bucketCount), leftCore = holds
            for counters in threads {
                let slot = counters.slots[id]
                acquisitions &+= slot.acquisitions.load(ordering: .relaxed)
                contended &+= slot.contended.load(ordering: .relaxed)
                wait &+= slot.waitNanoseconds.load(ordering: .relaxed)
                longest = max(longest, slot.holdMaxNanoseconds.load(ordering: .relaxed))
                longestKept = max(longestKept, slot.keptCoreMaxNanoseconds.load(ordering: .relaxed))
                heavy &+= slot.heavyWork.load(ordering: .relaxed)
                heavyKinds |= slot.heavyWorkKinds.load(ordering: .relaxed)
                slot.addHolds(to: &holds, leftCore: &leftCore)
            }
            if acquisitions > 0 || heavy > 0 {
                figures.append(Figures(label: label, acquisitions: acquisitions, contended: contended, waitNanoseconds: wait,
                                       holds: HoldTimes(counts: holds, maxNanoseconds: longest),
                                       holdsThatLeftCore: watched ? HoldTimes(counts: leftCore, maxNanoseconds: 0) : nil,
                                       keptCoreMaxNanoseconds: watched ? longestKept : nil,
                                       heavyWork: heavy, heavyWorkKinds: HeavyWork.kinds(in: heavyKinds)))
            }
        }
        var noted: [HeavyWork: UInt64] = [:]
        for kind in HeavyWork.allCases {
            let count = threads.reduce(UInt64(0)) { $0 &+ $1.heavyWorkNoted[Int(kind.rawValue)].value.load(ordering: .relaxed) }
            if count > 0 { noted[kind] = count }
        }
        let locks = figures.sorted { ($0.waitNanoseconds, $0.acquisitions) > ($1.waitNanoseconds, $1.acquisitions) }
        return Report(locks: locks, heavyWorkNoted: noted)
    }

    /// Notes that the calling thread is about to do heavy work of `kind` (hash, draw randomness,
    /// render, allocate a large block): while profiling is on, the work is counted against every
    /// labelled lock the thread holds then (``Figures/heavyWork``), and in the run's total
    /// (``Report/heavyWorkNoted``). Off, it costs one relaxed load.
    @inlinable
    package static func noteHeavyWork(_ kind: HeavyWork) {
        if _slowPath(isCounting) { countHeavyWork(kind) }
    }

    @usableFromInline
    static func countHeavyWork(_ kind: HeavyWork) {
        let counters = ThreadCounters.current
        counters.heavyWorkNoted[Int(kind.rawValue)].value.wrappingAdd(1, ordering: .relaxed)
        var open = counters.openHolds.load(ordering: .relaxed)
        while open != 0 {
            let id = open.trailingZeroBitCount
            open &= open &- 1
            counters.slots[id].heavyWork.wrappingAdd(1, ordering: .relaxed)
            counters.slots[id].heavyWorkKinds.bitwiseOr(1 << UInt64(kind.rawValue), ordering: .relaxed)
        }
    }

    /// Where a lock is profiled under its label. ``LockedValue`` keeps one; another lock (an
    /// `NSCondition`, say) can keep one, take its lock through ``acquire(tryLock:lock:)`` and
    /// release it through ``release(_:unlock:)``.
    ///
    /// ```swift
    /// let hold = site.acquire(tryLock: { condition.try() }, lock: { condition.lock() })
    /// defer { site.release(hold) { condition.unlock() } }
    /// ```
    @usableFromInline
    package struct Site: Sendable {
        /// The label's id, or `nil` when ``LockProfiler/capacity`` labels are taken.
        @usableFromInline let id: Int?

        /// Registers a site under `label` (this takes the profiler's lock: make sites once).
        /// - Parameter label: The name the contention figures show.
        package init(label: String) { id = LockProfiler.register(label) }

        /// Takes the lock with `lock`; while profiling is on (`counting`, as the caller read the
        /// instrumentation word), tries `tryLock` first and times the wait when it fails, then
        /// notes when the lock was taken.
        /// - Parameters:
        ///   - counting: Whether profiling is on.
        ///   - tryLock: Takes the lock if it is free; returns whether it did.
        ///   - lock: Takes the lock, waiting as long as it takes.
        /// - Returns: The hold to hand to ``release(_:unlock:)``.
        @inlinable
        package func acquire(counting: Bool = LockProfiler.isCounting, tryLock: () -> Bool, lock: () -> Void) -> Hold {
            if let id, counting {
                return LockProfiler.acquire(id: id, tryLock: tryLock, lock: lock)
            }
            lock()
            return .notProfiled
        }

        /// Releases the lock with `unlock` and counts the hold that ``acquire(tryLock:lock:)``
        /// started: it ends right before `unlock`, and is counted after it, so the counting adds
        /// nothing to the time the lock is held. A hold taken while profiling was off is not counted.
        /// - Parameters:
        ///   - hold: What ``acquire(tryLock:lock:)`` returned.
        ///   - unlock: Releases the lock.
        @inlinable
        package func release(_ hold: Hold, unlock: () -> Void) {
            guard hold.isProfiled else { return unlock() }
            let ended = LockProfiler.end(hold)
            unlock()
            LockProfiler.record(ended)
        }
    }

    /// One acquisition of a profiled lock: which label, and when the lock was taken.
    ///
    /// One word, 0 for an acquisition made while profiling was off, so that carrying it from
    /// taking a lock to releasing it costs the unprofiled path a register and a test.
    @usableFromInline
    package struct Hold: Sendable {
        /// The label's id plus one in the top 8 bits; in the next bit whether the thread had left
        /// its core, since the mark of a hold this one is nested in, when this one began
        /// (``enclosingLeftCore``); and the low 55 bits of the `DispatchTime` nanoseconds when the
        /// lock was taken (55 bits wrap after a year of uptime; a hold is their difference modulo
        /// 2^55). 0: not profiled.
        @usableFromInline let bits: UInt64

        @usableFromInline static let timeMask: UInt64 = (1 << 55) - 1
        @usableFromInline static let enclosingLeftCoreBit: UInt64 = 1 << 55

        @usableFromInline
        init(id: Int, start: UInt64, enclosingLeftCore: Bool) {
            bits = UInt64(id + 1) << 56 | (enclosingLeftCore ? Self.enclosingLeftCoreBit : 0) | start & Self.timeMask
        }

        @inlinable
        init(bits: UInt64) { self.bits = bits }

        /// An acquisition made while profiling was off: its release counts nothing.
        @inlinable
        static var notProfiled: Hold { Hold(bits: 0) }

        /// Whether the acquisition was profiled, so its release counts the hold.
        @inlinable
        var isProfiled: Bool { bits != 0 }

        /// The label's id.
        var id: Int { Int(bits >> 56) - 1 }

        /// Whether the thread's core watch showed a switch when the hold began, after the lock was
        /// taken and before the hold's own mark: a switch during a hold this one is nested in (or
        /// while taking this lock inside it), which that hold's end must still see.
        var enclosingLeftCore: Bool { bits & Self.enclosingLeftCoreBit != 0 }

        /// The nanoseconds from when the lock was taken to `now`.
        func nanoseconds(until now: UInt64) -> UInt64 { (now &- bits) & Self.timeMask }
    }

    /// The id of `label`, or `nil` when ``capacity`` labels are taken.
    static func register(_ label: String) -> Int? {
        registry.withLock { registry in
            if let id = registry.ids[label] { return id }
            guard registry.labels.count < capacity else { return nil }
            registry.labels.append(label)
            registry.ids[label] = registry.labels.count - 1
            return registry.labels.count - 1
        }
    }

    /// Whether acquisitions of labelled locks are being counted: one relaxed atomic load.
    @inlinable
    package static var isCounting: Bool { Instrumentation.current & Instrumentation.profiling != 0 }

    /// Acquires a lock for the label `id`, counting it: `tryLock` first, and if that fails, `lock`
    /// with the wait timed. Returns the hold, started now.
    @usableFromInline
    static func acquire(id: Int, tryLock: () -> Bool, lock: () -> Void) -> Hold {
        let counters = ThreadCounters.current
        let slot = counters.slots[id]
        slot.acquisitions.wrappingAdd(1, ordering: .relaxed)
        counters.open(id)
        if tryLock() { return start(id: id) }
        let start = DispatchTime.now().uptimeNanoseconds
        lock()
        let enclosingLeftCore = CoreWatch.leftCoreSinceMark() == true
        CoreWatch.mark()
        let taken = DispatchTime.now().uptimeNanoseconds
        slot.contended.wrappingAdd(1, ordering: .relaxed)
        slot.waitNanoseconds.wrappingAdd(taken &- start, ordering: .relaxed)
        return Hold(id: id, start: taken, enclosingLeftCore: enclosingLeftCore)
    }

    /// Starts a hold of the label `id` without counting an acquisition: the lock was taken again
    /// after a condition wait.
    @usableFromInline
    static func resume(id: Int) -> Hold {
        ThreadCounters.current.open(id)
        return start(id: id)
    }

    /// Marks the core watch and notes the time: the hold begins.
    private static func start(id: Int) -> Hold {
        let enclosingLeftCore = CoreWatch.leftCoreSinceMark() == true
        CoreWatch.mark()
        return Hold(id: id, start: DispatchTime.now().uptimeNanoseconds, enclosingLeftCore: enclosingLeftCore)
    }

    /// Ends `hold` now: what ``record(_:)`` counts once the lock is released.
    ///
    /// The core watch keeps one mark per thread, and a hold nested in another marks it again: where
    /// the thread had left its core in the enclosing hold before this one began, and has not left
    /// it since, the watch is set back to show that switch (``CoreWatch/markLeft()``), so that the
    /// enclosing hold's end still counts it.
    @usableFromInline
    static func end(_ hold: Hold) -> EndedHold {
        let nanoseconds = hold.nanoseconds(until: DispatchTime.now().uptimeNanoseconds)
        let leftCore = CoreWatch.leftCoreSinceMark() ?? false
        if hold.enclosingLeftCore && !leftCore && !forgetsEnclosingLeaves.load(ordering: .relaxed) { CoreWatch.markLeft() }
        return EndedHold(id: hold.id, nanoseconds: nanoseconds, leftCore: leftCore && !ignoresCoreLeaves.load(ordering: .relaxed))
    }

    /// Counts an ended hold in the calling thread's histogram of its label.
    @usableFromInline
    static func record(_ hold: EndedHold) {
        let counters = ThreadCounters.current
        counters.close(hold.id)
        if dropsHolds.load(ordering: .relaxed) { return }
        counters.slots[hold.id].recordHold(hold.nanoseconds, leftCore: hold.leftCore)
    }

    /// A hold that has ended: its label and length, to be counted after the lock is released.
    @usableFromInline
    struct EndedHold: Sendable {
        let id: Int
        let nanoseconds: UInt64
        /// Whether the holding thread was switched out during the hold (``CoreWatch``).
        let leftCore: Bool
    }

    /// A fault only tests plant: while set, holds are not counted, so the tests of hold times can
    /// show that they fail when hold recording is lost.
    package static let dropsHolds = Atomic<Bool>(false)

    /// A fault only tests plant: while set, every hold counts as one whose thread kept its core,
    /// so the tests of the core watch's figures can show that they fail when the watch is ignored.
    package static let ignoresCoreLeaves = Atomic<Bool>(false)

    /// A fault only tests plant: while set, a nested hold's mark erases the switches of the hold it
    /// is nested in, so the tests of nested holds can show that they fail when those are lost.
    package static let forgetsEnclosingLeaves = Atomic<Bool>(false)

    private struct Registry {
        var labels: [String] = []
        var ids: [String: Int] = [:]
        /// Every thread's counters, kept after the thread ends so its counts are not lost.
        var threads: [ThreadCounters] = []
    }

    // Not labelled itself, so taking it never recurses into the profiler.
    private static let registry = LockedValue(Registry())

    /// One thread's counters for every label.
    private final class ThreadCounters: Sendable {
        final class Slot: Sendable {
            let acquisitions = Atomic<UInt64>(0)
            let contended = Atomic<UInt64>(0)
            let waitNanoseconds = Atomic<UInt64>(0)
            let holdMaxNanoseconds = Atomic<UInt64>(0)
            let keptCoreMaxNanoseconds = Atomic<UInt64>(0)
            /// Heavy work noted while this thread held the label, and its kinds (one bit per
            /// ``HeavyWork`` raw value).
            let heavyWork = Atomic<UInt64>(0)
            let heavyWorkKinds = Atomic<UInt64>(0)
            /// How many holds of the label this thread has open (a hold may nest in another of the
            /// same label); written by the owning thread only, and not reset: a hold open across a
            /// restart still closes.
            let open = Atomic<UInt32>(0)
            /// The hold histogram's counts, one `Atomic<UInt64>` per bucket of ``HoldTimes/scale``.
            private let holdCounts = Histogram()
            /// The histogram of the holds whose thread left its core (``CoreWatch``), a part of
            /// the one above.
            private let leftCoreCounts = Histogram()

            /// Counts one hold; called only by the thread that owns the slot.
            func recordHold(_ nanoseconds: UInt64, leftCore: Bool) {
                let bucket = HoldTimes.scale.index(of: nanoseconds)
                holdCounts.add(at: bucket)
                // Only this thread writes the maxima (``reset()`` aside): no compare-and-swap needed.
                if nanoseconds > holdMaxNanoseconds.load(ordering: .relaxed) { holdMaxNanoseconds.store(nanoseconds, ordering: .relaxed) }
                if leftCore {
                    leftCoreCounts.add(at: bucket)
                } else if nanoseconds > keptCoreMaxNanoseconds.load(ordering: .relaxed) {
                    keptCoreMaxNanoseconds.store(nanoseconds, ordering: .relaxed)
                }
            }

            /// Adds this slot's hold counts to `sums`, and those of its holds that left their core
            /// to `leftCore`, bucket by bucket.
            func addHolds(to sums: inout [UInt64], leftCore: inout [UInt64]) {
                holdCounts.add(to: &sums)
                leftCoreCounts.add(to: &leftCore)
            }

            func reset() {
                acquisitions.store(0, ordering: .relaxed)
                contended.store(0, ordering: .relaxed)
                waitNanoseconds.store(0, ordering: .relaxed)
                holdMaxNanoseconds.store(0, ordering: .relaxed)
                keptCoreMaxNanoseconds.store(0, ordering: .relaxed)
                heavyWork.store(0, ordering: .relaxed)
                heavyWorkKinds.store(0, ordering: .relaxed)
                holdCounts.reset()
                leftCoreCounts.reset()
            }
        }

        /// A histogram of holds that one thread writes: the address of its counts, one
        /// `Atomic<UInt64>` per bucket of ``HoldTimes/scale``; 0 until the thread's first count.
        /// Written once, by the owning thread (releasing, after the counts are initialised), and
        /// never freed: the registry keeps every thread's counters for the life of the process.
        final class Histogram: Sendable {
            private let address = Atomic<UInt>(0)

            /// Adds one to `bucket`; called only by the owning thread.
            func add(at bucket: Int) {
                var counts = address.load(ordering: .relaxed)
                if counts == 0 {
                    let buckets = HoldTimes.scale.bucketCount
                    let made = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: buckets)
                    for index in 0..<buckets { (made + index).initialize(to: Atomic(0)) }
                    counts = UInt(bitPattern: made)
                    address.store(counts, ordering: .releasing)
                }
                Self.counts(at: counts)[bucket].wrappingAdd(1, ordering: .relaxed)
            }

            /// Adds the counts to `sums`, bucket by bucket.
            func add(to sums: inout [UInt64]) {
                let counts = address.load(ordering: .acquiring)
                guard counts != 0 else { return }
                for bucket in sums.indices { sums[bucket] &+= Self.counts(at: counts)[bucket].load(ordering: .relaxed) }
            }

            func reset() {
                let counts = address.load(ordering: .acquiring)
                guard counts != 0 else { return }
                for bucket in 0..<HoldTimes.scale.bucketCount { Self.counts(at: counts)[bucket].store(0, ordering: .relaxed) }
            }

            private static func counts(at address: UInt) -> UnsafeMutablePointer<Atomic<UInt64>> {
                // Never 0 here: the callers checked.
                UnsafeMutablePointer(bitPattern: address)!
            }
        }

        let slots: [Slot] = (0..<LockProfiler.capacity).map { _ in Slot() }
        /// One bit per label of which this thread has a profiled hold open (``LockProfiler/capacity``
        /// is 64); written by the owning thread only.
        let openHolds = Atomic<UInt64>(0)
        /// ``LockProfiler/noteHeavyWork(_:)`` calls while profiling, one counter per kind.
        let heavyWorkNoted: [Counter] = HeavyWork.allCases.map { _ in Counter() }

        final class Counter: Sendable {
            let value = Atomic<UInt64>(0)
        }

        func reset() {
            for slot in slots { slot.reset() }
            for noted in heavyWorkNoted { noted.value.store(0, ordering: .relaxed) }
        }

        /// A profiled hold of label `id` begins on this thread (its owner).
        func open(_ id: Int) {
            let slot = slots[id]
            slot.open.store(slot.open.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
            openHolds.store(openHolds.load(ordering: .relaxed) | 1 << UInt64(id), ordering: .relaxed)
        }

        /// A profiled hold of label `id` ended on this thread (its owner).
        func close(_ id: Int) {
            let slot = slots[id]
            let left = slot.open.load(ordering: .relaxed)
            slot.open.store(left &- (left > 0 ? 1 : 0), ordering: .relaxed)
            if left <= 1 { openHolds.store(openHolds.load(ordering: .relaxed) & ~(1 << UInt64(id)), ordering: .relaxed) }
        }

        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            let status = pthread_key_create(&key, nil)
            precondition(status == 0, "pthread_key_create failed: \(status)")
            return key
        }()

        /// The calling thread's counters, registered on first use. The registry keeps them alive,
        /// so the thread-specific pointer is never left dangling.
        static var current: ThreadCounters {
            if let pointer = pthread_getspecific(key) {
                return Unmanaged<ThreadCounters>.fromOpaque(pointer).takeUnretainedValue()
            }
            let counters = ThreadCounters()
            registry.withLock { $0.threads.append(counters) }
            pthread_setspecific(key, Unmanaged.passUnretained(counters).toOpaque())
            return counters
        }
    }
}
