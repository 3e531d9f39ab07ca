import Synchronization

/// A count that many threads change at once without sharing a cache line: one atomic per
/// ``ThreadStripe``, each on a cache line of its own, summed when read.
///
/// ``add(_:)`` writes only the calling thread's stripe; ``value`` reads every stripe, so it is
/// for occasional reads (a statistic), not for deciding on the hot path. A read while others
/// change the count sees each stripe at some moment during the read.
///
/// ```swift
/// let inFlight = StripedCounter()
/// inFlight.add(1)     // a flow starts
/// inFlight.add(-1)    // and ends, perhaps on another thread
/// print(inFlight.value)
/// ```
public final class StripedCounter: Sendable {
    /// Atomics between two stripes' atomics: 128 bytes (two cache lines, against the adjacent-line
    /// prefetcher) apart.
    private static let spacing = 16
    private let stripes: Int
    // Sound as `Sendable`: the pointer is set once in `init` and freed in `deinit`; every access
    // in between goes through an `Atomic`.
    nonisolated(unsafe) private let cells: UnsafeMutablePointer<Atomic<Int>>

    /// A count of zero, striped over ``ThreadStripe/count`` stripes.
    public init() {
        stripes = ThreadStripe.count
        let raw = UnsafeMutableRawPointer.allocate(byteCount: stripes * Self.spacing * MemoryLayout<Atomic<Int>>.stride, alignment: 128)
        cells = raw.bindMemory(to: Atomic<Int>.self, capacity: stripes * Self.spacing)
        for stripe in 0..<stripes { (cells + stripe * Self.spacing).initialize(to: Atomic(0)) }
    }

    deinit {
        for stripe in 0..<stripes { _ = (cells + stripe * Self.spacing).deinitialize(count: 1) }
        UnsafeMutableRawPointer(cells).deallocate()
    }

    /// Adds `delta` (negative to subtract) on the calling thread's stripe.
    /// - Parameter delta: The change.
    public func add(_ delta: Int) {
        (cells + (ThreadStripe.current & (stripes - 1)) * Self.spacing).pointee.wrappingAdd(delta, ordering: .relaxed)
    }

    /// The sum of every stripe.
    public var value: Int {
        (0..<stripes).reduce(0) { $0 &+ (cells + $1 * Self.spacing).pointee.load(ordering: .relaxed) }
    }
}
