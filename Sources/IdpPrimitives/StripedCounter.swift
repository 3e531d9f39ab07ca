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
package final class StripedCounter: Sendable {
    private let cells = SpacedAtomics(count: ThreadStripe.count)

    /// A count of zero, striped over ``ThreadStripe/count`` stripes.
    package init() {}

    /// Adds `delta` (negative to subtract) on the calling thread's stripe.
    /// - Parameter delta: The change.
    package func add(_ delta: Int) {
        cells.add(delta, at: ThreadStripe.current & (cells.count - 1))
    }

    /// The sum of every stripe.
    package var value: Int {
        (0..<cells.count).reduce(0) { $0 &+ cells.load(at: $1) }
    }
}
