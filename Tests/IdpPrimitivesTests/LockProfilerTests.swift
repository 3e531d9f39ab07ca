import Foundation
import IdpPrimitives
import Testing

@Suite("LockProfiler")
struct LockProfilerTests {
    @Test("counts every acquisition of a labelled lock, and the waits of contended ones, from per-thread counters")
    func countsAcquisitionsAndContention() async throws {
        let label = "LockProfilerTests.\(UUID().uuidString)"
        let counter = LockedValue(0, label: label)
        let unlabelled = LockedValue(0)
        LockProfiler.start()
        // Four OS threads that each hold the lock for a while: most acquisitions find it held.
        let threads = 4, rounds = 200
        await OSThreads.run(threads) { _ in
            for _ in 0..<rounds {
                counter.withLock { value in
                    value += 1
                    usleep(20)
                }
                unlabelled.withLock { $0 += 1 }
            }
        }
        let figures = LockProfiler.stop()
        let mine = try #require(figures.first { $0.label == label })
        #expect(mine.acquisitions == UInt64(threads * rounds))
        #expect(mine.contended > 0)
        #expect(mine.contended <= mine.acquisitions)
        #expect(mine.waitNanoseconds > 0)
        #expect(mine.contendedShare > 0 && mine.contendedShare <= 1)
        #expect(counter.withLock { $0 } == threads * rounds)

        // Off again: further acquisitions are not counted.
        counter.withLock { $0 += 1 }
        LockProfiler.start()
        let idle = LockProfiler.stop()
        #expect(idle.first { $0.label == label } == nil)
    }
}
