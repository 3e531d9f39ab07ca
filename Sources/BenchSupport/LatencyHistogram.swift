import IdpPrimitives

/// An HDR-style log-linear histogram of nanosecond values: exact below 256 ns, and above that 128
/// linear sub-buckets per power of two, so every recorded value is known to within 1/128 (0.8%).
///
/// ```swift
/// var histogram = LatencyHistogram()          // one per thread: recording takes no lock
/// histogram.record(elapsedNanoseconds)
/// merged.merge(histogram)                     // at the end
/// let p99 = merged.value(atPercentile: 99)
/// ```
///
/// Values from 0 to 2^48 ns (about 78 hours) are kept; larger ones count in the top bucket and
/// raise ``max`` exactly. Recording is a few instructions: a leading-zero count, a shift, an add.
/// The counts are allocated once, at init (43 KB).
package struct LatencyHistogram: Sendable {
    /// 128 sub-buckets per power of two; values up to 2^48 - 1. Made where it is read (two words).
    static var scale: LogLinearScale { LogLinearScale(subBucketBits: 7, topBit: 47) }
    static var bucketCount: Int { scale.bucketCount }

    private var counts: [UInt64]
    /// How many values were recorded.
    package private(set) var count: UInt64 = 0
    /// The smallest value recorded, exactly; 0 when empty.
    package var min: UInt64 { count == 0 ? 0 : smallest }
    /// The largest value recorded, exactly; 0 when empty.
    package private(set) var max: UInt64 = 0
    private var smallest = UInt64.max

    /// An empty histogram.
    package init() {
        counts = Array(repeating: 0, count: Self.bucketCount)
    }

    /// Adds one value.
    /// - Parameter value: The latency, in nanoseconds.
    package mutating func record(_ value: UInt64) {
        counts[Self.index(of: value)] &+= 1
        count &+= 1
        if value < smallest { smallest = value }
        if value > max { max = value }
    }

    /// Adds every value of `other`.
    /// - Parameter other: Another thread's histogram.
    package mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        for index in counts.indices where other.counts[index] != 0 { counts[index] &+= other.counts[index] }
        count &+= other.count
        smallest = Swift.min(smallest, other.smallest)
        max = Swift.max(max, other.max)
    }

    /// The value at percentile `p` (0…100): the exact minimum at 0, the exact maximum at 100, and
    /// otherwise the highest value that falls in the same bucket as the ⌈p% · count⌉-th smallest
    /// recorded value (so it is never below the true value and at most 0.8% above it), capped by
    /// the maximum. 0 when empty.
    /// - Parameter p: The percentile, 0 … 100.
    /// - Returns: The value at that percentile, in nanoseconds.
    package func value(atPercentile p: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let p = Swift.min(100, Swift.max(0, p))
        if p == 0 { return min }
        if p == 100 { return max }
        return Self.scale.value(atPercentile: p, counts: counts, count: count, min: min, max: max)
    }

    /// The report's eight percentiles, in microseconds.
    package func percentiles() -> Percentiles {
        func micro(_ p: Double) -> Double { Double(value(atPercentile: p)) / 1_000 }
        return Percentiles(p0: micro(0), p25: micro(25), p50: micro(50), p75: micro(75), p90: micro(90), p99: micro(99),
                           p999: micro(99.9), p100: micro(100))
    }

    /// The bucket of `value`: the value itself below 2 · 128; above, 128 buckets per power of two.
    static func index(of value: UInt64) -> Int { scale.index(of: value) }

    /// The highest value that lands in bucket `index`.
    static func highestValue(in index: Int) -> UInt64 { scale.highestValue(in: index) }
}
