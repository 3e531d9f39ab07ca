import BenchSupport
import Dispatch
import Testing

@Suite("measureHandBack: the wake-up of a task resumed from a busy OS thread")
struct HandBackTests {
    @Test("every sample is one resumption, measured from it: the count is the samples asked, and no value exceeds the measurement's own wall time")
    func countsEachResumptionOnce() async {
        let start = DispatchTime.now().uptimeNanoseconds
        let histogram = await measureHandBack(samples: 25, before: .microseconds(20), after: .microseconds(20))
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        #expect(histogram.count == 25)
        #expect(histogram.max < elapsed)
        // Each sample spins 20 µs before its resumption and 20 µs after it (overlapping the next
        // one's wait at most), so the run takes at least 25 × 20 µs.
        #expect(elapsed >= 25 * 20_000)
    }

    @Test("one sample with no spinning is still measured, and a negative spin counts as none")
    func oneSample() async {
        #expect(await measureHandBack(samples: 1, before: .zero, after: .zero).count == 1)
        #expect(await measureHandBack(samples: 1, before: .microseconds(-5), after: .seconds(-1)).count == 1)
    }
}
