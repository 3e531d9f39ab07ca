/// The buckets of an HDR-style log-linear histogram of nanosecond values: each value exact below
/// `2 · 2^subBucketBits`, and above that `2^subBucketBits` linear sub-buckets per power of two, so
/// a value is known to within `1 / 2^subBucketBits` of itself. Values up to `2^(topBit + 1) - 1`
/// have buckets of their own; larger ones fall in the top bucket.
///
/// ```swift
/// let scale = LogLinearScale(subBucketBits: 4, topBit: 39)
/// var counts = [UInt64](repeating: 0, count: scale.bucketCount)
/// counts[scale.index(of: 1_234)] += 1
/// let p99 = scale.value(atPercentile: 99, counts: counts, count: 1, max: 1_234)
/// ```
///
/// The bucket arithmetic of the benchmark's latency histogram and of ``LockProfiler``'s hold
/// times: a leading-zero count, a shift and an add per value.
package struct LogLinearScale: Sendable, Equatable {
    /// log2 of the linear sub-buckets per power of two.
    package let subBucketBits: Int
    /// The largest exponent with buckets of its own.
    package let topBit: Int

    /// A scale with `2^subBucketBits` sub-buckets per power of two, up to `2^(topBit + 1) - 1`.
    @inlinable
    package init(subBucketBits: Int, topBit: Int) {
        precondition(subBucketBits >= 1 && topBit > subBucketBits && topBit < 63, "LogLinearScale(\(subBucketBits), \(topBit)) is out of range")
        self.subBucketBits = subBucketBits
        self.topBit = topBit
    }

    /// The sub-buckets per power of two.
    @inlinable
    package var subBucketCount: Int { 1 << subBucketBits }

    /// How many buckets the scale has.
    @inlinable
    package var bucketCount: Int { (topBit - subBucketBits + 1) * subBucketCount + subBucketCount }

    /// The bucket of `value`: the value itself below `2 · subBucketCount`; above, `subBucketCount`
    /// buckets per power of two.
    @inlinable
    package func index(of value: UInt64) -> Int {
        let value = Swift.min(value, (1 << UInt64(topBit + 1)) - 1)
        let exponent = 63 - value.leadingZeroBitCount    // of the highest set bit; -1 for 0
        guard exponent > subBucketBits else { return Int(value) }
        let shift = exponent - subBucketBits             // ≥ 1
        return shift * subBucketCount + Int(value >> UInt64(shift))
    }

    /// The highest value that lands in bucket `index`.
    @inlinable
    package func highestValue(in index: Int) -> UInt64 {
        guard index >= 2 * subBucketCount else { return UInt64(index) }
        let shift = index / subBucketCount - 1
        let subBucket = UInt64(index - shift * subBucketCount)   // in subBucketCount ..< 2 · subBucketCount
        return ((subBucket + 1) << UInt64(shift)) - 1
    }

    /// The value at percentile `p` (0 < p < 100) of the values counted in `counts` (one count per
    /// bucket of this scale): the highest value of the bucket that holds the ⌈p% · count⌉-th
    /// smallest value (never below the true value, at most `1 / subBucketCount` above it), capped
    /// by `max` and raised to `min`. 0 when `count` is 0.
    /// - Parameters:
    ///   - p: The percentile, above 0 and below 100 (the extremes are `min` and `max` themselves).
    ///   - counts: The count of each bucket.
    ///   - count: The sum of `counts`.
    ///   - min: The smallest value counted, or 0 when unknown.
    ///   - max: The largest value counted.
    /// - Returns: The value at that percentile.
    package func value(atPercentile p: Double, counts: [UInt64], count: UInt64, min: UInt64 = 0, max: UInt64) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = Swift.max(1, UInt64((p / 100 * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for index in 0..<counts.count where counts[index] != 0 {
            seen += counts[index]
            if seen >= rank { return Swift.min(max, Swift.max(min, highestValue(in: index))) }
        }
        return max
    }
}
