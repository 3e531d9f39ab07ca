import IdpPrimitives
import Synchronization
import Testing
import TestSupport

@Suite("ThreadStripe and StripedCounter")
struct StripedCounterTests {
    @Test("a thread keeps its stripe number; threads alive at once get different numbers")
    func stripesPerThread() async {
        let numbers = LockedValue<[Int: [Int]]>([:])
        await onOSThreads(8) { index in
            let first = ThreadStripe.current
            let again = (0..<100).map { _ in ThreadStripe.current }
            numbers.withLock { $0[index] = [first] + again }
        }
        let all = numbers.withLock { $0 }
        #expect(all.count == 8)
        #expect(all.values.allSatisfy { Set($0).count == 1 })
        // The eight threads ran at once (OSThreads.run waits for all): eight distinct numbers.
        #expect(Set(all.values.map { $0[0] }).count == 8)
        #expect(ThreadStripe.count >= 8 && ThreadStripe.count & (ThreadStripe.count - 1) == 0)
    }

    @Test("adds and subtracts from 8 OS threads at once, some ending what others started, sum exactly")
    func sumsExactly() async {
        let counter = StripedCounter()
        await onOSThreads(8) { index in
            for _ in 0..<10_000 { counter.add(index % 2 == 0 ? 3 : -1) }
        }
        #expect(counter.value == 4 * 10_000 * 3 - 4 * 10_000)
        await onOSThreads(8) { index in
            for _ in 0..<10_000 { counter.add(index % 2 == 0 ? -3 : 1) }
        }
        #expect(counter.value == 0)
    }
}
