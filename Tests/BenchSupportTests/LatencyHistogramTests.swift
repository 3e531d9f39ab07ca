@testable import BenchSupport
import Foundation
import IdpPrimitives
import Testing

/// The exact percentile by the same rank rule as the histogram: the ⌈p% · n⌉-th smallest value.
func exactPercentile(_ sorted: [UInt64], _ p: Double) -> UInt64 {
    if p == 0 { return sorted.first! }
    let rank = max(1, Int((p / 100 * Double(sorted.count)).rounded(.up)))
    return sorted[rank - 1]
}

@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    static let percentiles = [0, 1, 25, 50, 75, 90, 99, 99.9, 99.99, 100]

    func check(_ values: [UInt64]) {
        var histogram = LatencyHistogram()
        for value in values { histogram.record(value) }
        verify(histogram, values.sorted())
    }

    /// Checks a large data set: made, recorded and sorted on an OS thread (under ThreadSanitizer
    /// that takes seconds, which a Swift concurrency thread must not spend), then judged here.
    func check(_ values: @escaping @Sendable () -> [UInt64]) async {
        let (histogram, sorted) = await OSThreads.run {
            let made = values()
            var histogram = LatencyHistogram()
            for value in made { histogram.record(value) }
            return (histogram, made.sorted())
        }
        verify(histogram, sorted)
    }

    func verify(_ histogram: LatencyHistogram, _ sorted: [UInt64]) {
        #expect(histogram.count == UInt64(sorted.count))
        #expect(histogram.min == sorted.first && histogram.max == sorted.last)
        for p in Self.percentiles {
            let exact = exactPercentile(sorted, p)
            let estimate = histogram.value(atPercentile: p)
            // Never below the true value, at most 1/128 above it.
            #expect(estimate >= exact, "p\(p): \(estimate) < \(exact)")
            #expect(Double(estimate - exact) <= Double(exact) / 128, "p\(p): \(estimate) vs \(exact)")
        }
    }

    @Test("percentiles of uniform data are within 0.8% of the exact ones, never below")
    func uniform() async {
        await check {
            var random = SeededRandom(seed: 1)
            return (0..<100_000).map { _ in UInt64(random.below(5_000_001)) }
        }
    }

    @Test("percentiles of long-tailed (log-normal-like) latencies are within 0.8%")
    func longTailed() async {
        await check {
            var random = SeededRandom(seed: 2)
            return (0..<100_000).map { _ in
                var normal = -6.0
                for _ in 0..<12 { normal += random.unit() }   // Irwin–Hall: close to a standard normal
                return UInt64(exp(11 + 1.5 * normal))   // median ~60 µs, tail to seconds
            }
        }
    }

    @Test("small values are exact, huge ones land in the top bucket with an exact maximum")
    func edges() {
        check(Array(0...600))
        var histogram = LatencyHistogram()
        histogram.record(0)
        histogram.record(UInt64.max)
        #expect(histogram.min == 0)
        #expect(histogram.max == UInt64.max)
        #expect(histogram.value(atPercentile: 50) == 0)
        #expect(histogram.value(atPercentile: 100) == UInt64.max)
        #expect(histogram.value(atPercentile: 75) == (1 << 48) - 1)
    }

    @Test("an empty histogram reports zeros")
    func empty() {
        let histogram = LatencyHistogram()
        #expect(histogram.count == 0 && histogram.min == 0 && histogram.max == 0)
        #expect(histogram.value(atPercentile: 99) == 0)
        #expect(histogram.percentiles() == Percentiles(p0: 0, p25: 0, p50: 0, p75: 0, p90: 0, p99: 0, p999: 0, p100: 0))
    }

    @Test("merging two halves gives what recording everything into one gives")
    func mergeEqualsWhole() {
        var random = SeededRandom(seed: 3)
        let values = (0..<20_000).map { _ in 1 + UInt64(random.below(1_000_000_000)) }
        var whole = LatencyHistogram(), first = LatencyHistogram(), second = LatencyHistogram()
        for value in values { whole.record(value) }
        for value in values.prefix(7_000) { first.record(value) }
        for value in values.dropFirst(7_000) { second.record(value) }
        first.merge(second)
        #expect(first.count == whole.count && first.min == whole.min && first.max == whole.max)
        for p in Self.percentiles { #expect(first.value(atPercentile: p) == whole.value(atPercentile: p)) }
        #expect(first.percentiles() == whole.percentiles())
    }

    @Test("bucket boundaries: each bucket's highest value maps back to it and the next value to the next bucket")
    func bucketBoundaries() {
        let misplaced = (0..<(LatencyHistogram.bucketCount - 1)).filter { index in
            let highest = LatencyHistogram.highestValue(in: index)
            return LatencyHistogram.index(of: highest) != index || LatencyHistogram.index(of: highest + 1) != index + 1
        }
        #expect(misplaced.isEmpty)
        #expect(LatencyHistogram.highestValue(in: LatencyHistogram.bucketCount - 1) == (1 << 48) - 1)
    }
}
