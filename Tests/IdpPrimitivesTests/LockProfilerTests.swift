import Foundation
import IdpPrimitives
import Synchronization
import Testing
import TestSupport

// The profiler is one per process: its tests run one at a time.
@Suite("LockProfiler", .serialized)
struct LockProfilerTests {
    @Test("counts every acquisition of a labelled lock, and the waits of contended ones, from per-thread counters")
    func countsAcquisitionsAndContention() async throws {
        try await LockProfilerTurn.take {
            let label = "LockProfilerTests.\(UUID().uuidString)"
            let counter = LockedValue(0, label: label)
            let unlabelled = LockedValue(0)
            LockProfiler.start()
            // Four OS threads that each hold the lock for a while: most acquisitions find it held.
            let threads = 4, rounds = 200
            await onOSThreads(threads) { _ in
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
            // Every acquisition is one hold.
            #expect(mine.holds.count == mine.acquisitions)

            // Off again: further acquisitions are not counted.
            counter.withLock { $0 += 1 }
            LockProfiler.start()
            let idle = LockProfiler.stop()
            #expect(idle.first { $0.label == label } == nil)
        }
    }

    @Test("a lock held while its holder waits on a semaphore until a deadline shows that hold as its maximum and in its p99")
    func longHoldShows() async {
        await LockProfilerTurn.take {
            #expect(await longHoldProblems() == [])
        }
    }

    @Test("heavy work noted while labelled locks are held counts against each of them, nested or not, with its kind; outside them only in the run's total")
    func heavyWorkCountsAgainstHeldLocks() async throws {
        try await LockProfilerTurn.take {
            // Given two labelled locks, a labelled condition lock and an unlabelled one
            let run = UUID().uuidString
            let outer = LockedValue(0, label: "LockProfilerTests.heavy.outer.\(run)"), inner = LockedValue(0, label: "LockProfilerTests.heavy.inner.\(run)")
            let condition = ConditionLockedValue(0, label: "LockProfilerTests.heavy.condition.\(run)"), unlabelled = LockedValue(0)
            LockProfiler.start()
            // When an OS thread notes heavy work outside them, under one, under both, under the
            // condition lock and under the unlabelled one, and a second thread takes the outer lock
            // without noting any
            await onOSThreads(2) { thread in
                guard thread == 0 else {
                    for _ in 0..<100 { outer.withLock { $0 += 1 } }
                    return
                }
                LockProfiler.noteHeavyWork(.hash)
                outer.withLock { _ in LockProfiler.noteHeavyWork(.random) }
                outer.withLock { _ in inner.withLock { _ in LockProfiler.noteHeavyWork(.render) } }
                outer.withLock { _ in LockProfiler.noteHeavyWork(.render) }
                condition.withLock { _ in LockProfiler.noteHeavyWork(.largeAllocation) }
                unlabelled.withLock { _ in LockProfiler.noteHeavyWork(.hash) }
                // After its holds ended, a note counts against none of them.
                LockProfiler.noteHeavyWork(.largeAllocation)
            }
            let report = LockProfiler.stopReport()
            // Then each lock counts the notes made while it was held, from the record of what
            // the thread did; the run's totals hold every note (other tests may add their own)
            let mine = Dictionary(uniqueKeysWithValues: report.locks.filter { $0.label.hasSuffix(".\(run)") }.map { ($0.label, $0) })
            let outerFigures = try #require(mine["LockProfilerTests.heavy.outer.\(run)"])
            let innerFigures = try #require(mine["LockProfilerTests.heavy.inner.\(run)"])
            let conditionFigures = try #require(mine["LockProfilerTests.heavy.condition.\(run)"])
            #expect(outerFigures.heavyWork == 3)
            #expect(outerFigures.heavyWorkKinds == [.random, .render])
            #expect(innerFigures.heavyWork == 1)
            #expect(innerFigures.heavyWorkKinds == [.render])
            #expect(conditionFigures.heavyWork == 1)
            #expect(conditionFigures.heavyWorkKinds == [.largeAllocation])
            #expect(report.heavyWorkNoted[.hash, default: 0] >= 2 && report.heavyWorkNoted[.random, default: 0] >= 1)
            #expect(report.heavyWorkNoted[.render, default: 0] >= 2 && report.heavyWorkNoted[.largeAllocation, default: 0] >= 2)

            // Off again: a note under the lock is not counted.
            outer.withLock { _ in LockProfiler.noteHeavyWork(.hash) }
            LockProfiler.start()
            let idle = LockProfiler.stopReport()
            #expect(idle.locks.first { $0.label == "LockProfilerTests.heavy.outer.\(run)" } == nil)
        }
    }

    @Test("with hold recording dropped (a fault planted for this test), the long-hold check fails")
    func droppedHoldsAreCaught() async {
        await LockProfilerTurn.take {
            LockProfiler.dropsHolds.store(true, ordering: .relaxed)
            let problems = await longHoldProblems()
            LockProfiler.dropsHolds.store(false, ordering: .relaxed)
            #expect(!problems.isEmpty)
        }
    }

    @Test("a condition wait counts the stretches the lock is held as holds, not the wait between them")
    func conditionWaitIsNotAHold() async throws {
        try await LockProfilerTurn.take {
            // Given: a labelled condition lock, a waiter that waits for a flag, and a setter that
            // sets it once the waiter is waiting and a deadline has passed.
            let label = "LockProfilerTests.condition.\(UUID().uuidString)"
            struct State { var waiting = false, flag = false, waitStarted: ContinuousClock.Instant?, waited: Duration = .zero }
            let state = ConditionLockedValue(State(), label: label)
            LockProfiler.start()
            let results = await onOSThreads(2) { thread -> Bool in
                if thread == 0 {
                    state.wait { state, _ in
                        if state.flag {
                            state.waited = ContinuousClock.now - state.waitStarted!
                            return .done(())
                        }
                        state.waiting = true
                        state.waitStarted = ContinuousClock.now
                        return .wait(timeout: .seconds(600))
                    }
                    return true
                }
                let deadline = ContinuousClock.now + .seconds(600)
                while !state.withLock({ $0.waiting }) {
                    if ContinuousClock.now > deadline { return false }
                    usleep(100)
                }
                // The waiter waits at least this long: a semaphore no one signals, waited on until a deadline.
                _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(50))
                state.withLock { $0.flag = true }
                state.signal()
                return true
            }
            let figures = LockProfiler.stop()
            #expect(results == [true, true])
            let mine = try #require(figures.first { $0.label == label })
            let waited = state.withLock { $0.waited }

            // Then: the waiter's two stretches and the setter's acquisitions are holds, each shorter
            // than the wait the waiter measured between its stretches.
            #expect(mine.holds.count > mine.acquisitions)
            #expect(waited >= .milliseconds(50))
            #expect(Duration.nanoseconds(Int64(mine.holds.maxNanoseconds)) < waited)
        }
    }

    @Test("hold-time percentiles match the exact ones of the recorded values: never below, at most 1/16 above")
    func holdPercentilesMatchExactOnes() {
        var random = SeededRandom(seed: 7)
        let sets: [[UInt64]] = [
            Array(0...200),
            (0..<20_000).map { _ in UInt64.random(in: 20...5_000, using: &random) },
            // Mostly short, a long tail: what a lock's holds look like.
            (0..<20_000).map { index in index % 97 == 0 ? UInt64.random(in: 10_000...50_000_000, using: &random) : UInt64.random(in: 30...400, using: &random) },
        ]
        for values in sets {
            var counts = [UInt64](repeating: 0, count: LockProfiler.HoldTimes.scale.bucketCount)
            for value in values { counts[LockProfiler.HoldTimes.scale.index(of: value)] += 1 }
            let holds = LockProfiler.HoldTimes(counts: counts, maxNanoseconds: values.max()!)
            let sorted = values.sorted()
            #expect(holds.count == UInt64(values.count))
            for p in [1, 25, 50, 75, 90, 99, 99.9, 100] {
                // The ⌈p% · n⌉-th smallest value, computed from the sorted values.
                let exact = sorted[max(1, Int((p / 100 * Double(sorted.count)).rounded(.up))) - 1]
                let estimate = holds.nanoseconds(atPercentile: p)
                #expect(estimate >= exact, "p\(p): \(estimate) < \(exact)")
                #expect(Double(estimate - exact) <= Double(exact) / 16, "p\(p): \(estimate) vs \(exact)")
            }
            #expect(holds.p50Nanoseconds == holds.nanoseconds(atPercentile: 50))
            #expect(holds.p99Nanoseconds == holds.nanoseconds(atPercentile: 99))
            #expect(holds.nanoseconds(atPercentile: 100) == sorted.last)
        }
        #expect(LockProfiler.HoldTimes.none.count == 0 && LockProfiler.HoldTimes.none.p99Nanoseconds == 0)
    }

    @Test("holds of at least a threshold and the total hold time, against the values they were counted from")
    func longHoldsAndTotal() {
        var random = SeededRandom(seed: 11)
        // Mostly short, a long tail, as a lock's holds are.
        let values: [UInt64] = (0..<20_000).map { index in
            UInt64(index % 89 == 0 ? 10_000 + random.below(50_000_000) : 30 + random.below(400))
        }
        var counts = [UInt64](repeating: 0, count: LockProfiler.HoldTimes.scale.bucketCount)
        for value in values { counts[LockProfiler.HoldTimes.scale.index(of: value)] += 1 }
        let holds = LockProfiler.HoldTimes(counts: counts, maxNanoseconds: values.max()!)
        for threshold: UInt64 in [1, 100, 100_000, 1_000_000, 40_000_000] {
            // Exact from the values; the histogram may also count holds up to 1/16 shorter.
            let exact = UInt64(values.filter { $0 >= threshold }.count)
            let loose = UInt64(values.filter { $0 >= threshold - threshold / 16 }.count)
            let counted = holds.count(atLeast: threshold)
            #expect(counted >= exact && counted <= loose, "\(threshold) ns: \(counted), exactly \(exact), at most \(loose)")
        }
        for threshold: UInt64 in [100, 100_000, .max] {
            // Exact from the values below the threshold's bucket, which the histogram counts at
            // most 1/16 high.
            let bucketStart = threshold == .max ? threshold : threshold - threshold / 16
            let below = values.filter { $0 < bucketStart }.reduce(0, +)
            let within = values.filter { $0 < threshold }.reduce(0, +)
            let total = holds.totalNanoseconds(below: threshold)
            #expect(total >= below && Double(total) <= Double(within) * 17 / 16, "below \(threshold) ns: \(total), exactly \(below) to \(within)")
        }
        #expect(LockProfiler.HoldTimes.none.totalNanoseconds(below: .max) == 0 && LockProfiler.HoldTimes.none.count(atLeast: 1) == 0)
    }

    @Test("hold-time buckets: each bucket's highest value maps back to it and the next value to the next bucket")
    func holdBucketBoundaries() {
        let scale = LockProfiler.HoldTimes.scale
        let misplaced = (0..<(scale.bucketCount - 1)).filter { index in
            let highest = scale.highestValue(in: index)
            return scale.index(of: highest) != index || scale.index(of: highest + 1) != index + 1
        }
        #expect(misplaced.isEmpty)
        #expect(scale.index(of: .max) == scale.bucketCount - 1)
    }

    /// Profiles a labelled lock taken 60 times briefly by four OS threads and once by a thread that
    /// holds it while waiting on a semaphore until a deadline 20 ms away (no one signals it), and
    /// returns what the figures get wrong: the long hold must be the maximum, and, being more than
    /// 1% of the holds, the p99.
    func longHoldProblems() async -> [String] {
        let label = "LockProfilerTests.hold.\(UUID().uuidString)"
        let lock = LockedValue(0, label: label)
        let longHold = LockedValue<Duration>(.zero)
        LockProfiler.start()
        await onOSThreads(5) { thread in
            if thread == 4 {
                lock.withLock { value in
                    let taken = ContinuousClock.now
                    _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(20))
                    value += 1
                    longHold.withLock { $0 = ContinuousClock.now - taken }
                }
                return
            }
            for _ in 0..<15 { lock.withLock { $0 += 1 } }
        }
        let figures = LockProfiler.stop()
        guard let mine = figures.first(where: { $0.label == label }) else { return ["no figures for the lock"] }
        let held = longHold.withLock { $0 }
        var problems: [String] = []
        if mine.holds.count != 61 { problems.append("\(mine.holds.count) holds counted, not 61") }
        if held < .milliseconds(20) { problems.append("the holder held the lock only \(held)") }
        if Duration.nanoseconds(Int64(mine.holds.maxNanoseconds)) < held { problems.append("max hold \(mine.holds.maxNanoseconds) ns is below the \(held) held") }
        if Duration.nanoseconds(Int64(mine.holds.p99Nanoseconds)) < held { problems.append("p99 hold \(mine.holds.p99Nanoseconds) ns is below the \(held) held") }
        return problems
    }
}
