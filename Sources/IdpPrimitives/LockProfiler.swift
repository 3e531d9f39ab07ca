import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts, for every labelled lock, how many acquisitions found it held and how long they waited:
/// the contention figures of `idp-bench`.
///
/// ```swift
/// let table = LockedValue([String: Int](), label: "MyStore.table")
/// LockProfiler.start()
/// // … run the workload …
/// for lock in LockProfiler.stop() { print(lock.label, lock.contendedShare, lock.waitNanoseconds) }
/// ```
///
/// Off by default; then a labelled lock pays one relaxed atomic load per acquisition. While on, an
/// acquisition first tries the lock; only when that fails does it read the clock, block, and read
/// the clock again. Counters are per thread (each thread adds to its own slots, relaxed atomics
/// that no other thread writes), so measuring takes no shared lock; ``stop()`` sums them.
/// At most ``capacity`` distinct labels are profiled; later labels are not counted.
public enum LockProfiler {
    /// One lock's figures, summed over all threads.
    public struct Figures: Sendable, Equatable {
        /// The label the lock was created with.
        public let label: String
        /// Acquisitions while profiling was on.
        public let acquisitions: UInt64
        /// Acquisitions that found the lock held and had to wait.
        public let contended: UInt64
        /// Total time those acquisitions waited, in nanoseconds.
        public let waitNanoseconds: UInt64

        /// The share of acquisitions that found the lock held, 0…1.
        public var contendedShare: Double { acquisitions == 0 ? 0 : Double(contended) / Double(acquisitions) }
    }

    /// The most labels profiled at once.
    public static let capacity = 64

    /// Starts counting, from zero.
    public static func start() {
        for counters in registry.withLock({ $0.threads }) { counters.reset() }
        isOn.store(true, ordering: .releasing)
    }

    /// Stops counting and returns the figures of every label that was acquired while on, busiest
    /// first.
    public static func stop() -> [Figures] {
        isOn.store(false, ordering: .releasing)
        let (labels, threads) = registry.withLock { ($0.labels, $0.threads) }
        var figures: [Figures] = []
        for (id, label) in labels.enumerated() {
            var acquisitions: UInt64 = 0, contended: UInt64 = 0, wait: UInt64 = 0
            for counters in threads {
                let slot = counters.slots[id]
                acquisitions &+= slot.acquisitions.load(ordering: .relaxed)
                contended &+= slot.contended.load(ordering: .relaxed)
                wait &+= slot.waitNanoseconds.load(ordering: .relaxed)
            }
            if acquisitions > 0 {
                figures.append(Figures(label: label, acquisitions: acquisitions, contended: contended, waitNanoseconds: wait))
            }
        }
        return figures.sorted { ($0.waitNanoseconds, $0.acquisitions) > ($1.waitNanoseconds, $1.acquisitions) }
    }

    /// Where a lock is profiled under its label. ``LockedValue`` keeps one; another lock (an
    /// `NSCondition`, say) can keep one and take its lock through ``acquire(tryLock:lock:)``.
    public struct Site: Sendable {
        /// The label's id, or `nil` when ``LockProfiler/capacity`` labels are taken.
        @usableFromInline let id: Int?

        /// Registers a site under `label` (this takes the profiler's lock: make sites once).
        /// - Parameter label: The name the contention figures show.
        public init(label: String) { id = LockProfiler.register(label) }

        /// Takes the lock with `lock`; while profiling is on, tries `tryLock` first and times the
        /// wait when it fails.
        @inlinable
        public func acquire(tryLock: () -> Bool, lock: () -> Void) {
            if let id, LockProfiler.isCounting {
                LockProfiler.acquire(id: id, tryLock: tryLock, lock: lock)
            } else {
                lock()
            }
        }
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
    public static var isCounting: Bool { isOn.load(ordering: .relaxed) }

    /// Acquires a lock for the label `id`, counting it: `tryLock` first, and if that fails, `lock`
    /// with the wait timed.
    @usableFromInline
    static func acquire(id: Int, tryLock: () -> Bool, lock: () -> Void) {
        let slot = ThreadCounters.current.slots[id]
        slot.acquisitions.wrappingAdd(1, ordering: .relaxed)
        if tryLock() { return }
        let start = DispatchTime.now().uptimeNanoseconds
        lock()
        let waited = DispatchTime.now().uptimeNanoseconds &- start
        slot.contended.wrappingAdd(1, ordering: .relaxed)
        slot.waitNanoseconds.wrappingAdd(waited, ordering: .relaxed)
    }

    @usableFromInline
    static let isOn = Atomic<Bool>(false)

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
        }

        let slots: [Slot] = (0..<LockProfiler.capacity).map { _ in Slot() }

        func reset() {
            for slot in slots {
                slot.acquisitions.store(0, ordering: .relaxed)
                slot.contended.store(0, ordering: .relaxed)
                slot.waitNanoseconds.store(0, ordering: .relaxed)
            }
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
