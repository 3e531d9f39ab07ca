import Foundation
import IdpPrimitives
import Synchronization
import Testing
import TestSupport

/// Sleeps `microseconds` with `nanosleep`, which switches the calling thread out.
private func sleepSwitchingOut(microseconds: Int) {
    var pause = timespec(tv_sec: 0, tv_nsec: microseconds * 1_000), left = timespec()
    while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
}

/// Spins on the calling thread until `nanoseconds` have passed on the monotonic clock.
private func spin(nanoseconds: UInt64) {
    let start = DispatchTime.now().uptimeNanoseconds
    while DispatchTime.now().uptimeNanoseconds &- start < nanoseconds {}
}

@Suite("CoreWatch")
struct CoreWatchTests {
    @Test("on Linux x86-64 the watch passes its self-test; a kernel that never rewrites the word, or only after a move, is refused")
    func selfTest() {
        #if os(Linux) && arch(x86_64)
        #expect(CoreWatch.isAvailable)
        #expect(CoreWatch.selfTest() != nil)
        #else
        #expect(!CoreWatch.isAvailable)
        #endif
        // The same checks, reading the word after each sleep as such a kernel would have left it.
        #expect(CoreWatch.selfTest(kernel: .neverRewrites) == nil)
        #expect(CoreWatch.selfTest(kernel: .rewritesOnlyOnMove) == nil)
    }

    @Test("a sleep between mark and read shows as leaving the core; a stretch with no switch does not")
    func tellsSwitchesApart() async throws {
        let run = await onOSThreads(1) { _ -> (slept: Bool?, stayed: Bool?) in
            CoreWatch.mark()
            sleepSwitchingOut(microseconds: 200)
            let slept = CoreWatch.leftCoreSinceMark()
            // A stretch of a few instructions: kept its core at least once in five tries (a try
            // may be preempted).
            var stayed: Bool?
            for _ in 0..<5 where stayed != false {
                CoreWatch.mark()
                stayed = CoreWatch.leftCoreSinceMark()
            }
            return (slept, stayed)
        }
        let answers = try #require(run)
        if CoreWatch.isAvailable {
            #expect(answers[0].slept == true)
            #expect(answers[0].stayed == false)
        } else {
            #expect(answers[0].slept == nil && answers[0].stayed == nil)
        }
    }
}

extension LockProfilerTests {
    /// What is wrong with the profiler's core-watch figures, holding a labelled lock once across a
    /// 3 ms sleep (its thread leaves its core) and across spins of 300 µs (it keeps its core, unless
    /// preempted: up to 200 tries, for a machine whose every core is busy), or nothing.
    static func coreWatchProblems() async -> [String] {
        let label = "LockProfilerTests.coreWatch.\(UUID().uuidString)"
        let lock = LockedValue(0, label: label)
        LockProfiler.start()
        let spun = await onOSThreads(1) { _ -> Bool in
            lock.withLock { _ in sleepSwitchingOut(microseconds: 3_000) }
            for _ in 0..<200 {
                let left = lock.withLock { _ -> Bool? in
                    CoreWatch.mark()
                    spin(nanoseconds: 300_000)
                    return CoreWatch.leftCoreSinceMark()
                }
                if left == false { return true }
            }
            return false
        }
        let figures = LockProfiler.stop()
        guard let keptSpin = spun else { return ["the thread did not finish"] }
        guard let mine = figures.first(where: { $0.label == label }) else { return ["no figures for the lock"] }
        guard CoreWatch.isAvailable else {
            return mine.holdsThatLeftCore == nil && mine.keptCoreMaxNanoseconds == nil ? [] : ["core-watch figures given without the watch"]
        }
        var problems: [String] = []
        guard keptSpin[0] else { return ["every 300 µs spin was preempted"] }
        let left = mine.holdsThatLeftCore?.count ?? 0, kept = mine.keptCoreMaxNanoseconds ?? 0
        if left < 1 { problems.append("the hold across the sleep did not count as leaving its core (\(left))") }
        if kept >= 3_000_000 { problems.append("the hold across the sleep counts as kept on core: longest kept \(kept) ns") }
        if kept < 300_000 { problems.append("a 300 µs spin on core is missing from the longest kept hold: \(kept) ns") }
        if mine.holds.maxNanoseconds < 3_000_000 { problems.append("the longest hold of all, \(mine.holds.maxNanoseconds) ns, is shorter than the sleep") }
        return problems
    }

    @Test("a hold across a sleep counts as leaving its core and stays out of the longest hold kept on core; a long spin on core stays in")
    func coreWatchSplitsHolds() async {
        await LockProfilerTurn.take {
            let problems = await Self.coreWatchProblems()
            #expect(problems == [])
        }
    }

    @Test("with the core watch ignored (a fault planted for this test), the core-watch check fails", .enabled(if: CoreWatch.isAvailable))
    func ignoredCoreWatchIsCaught() async {
        await LockProfilerTurn.take {
            LockProfiler.ignoresCoreLeaves.store(true, ordering: .relaxed)
            let problems = await Self.coreWatchProblems()
            LockProfiler.ignoresCoreLeaves.store(false, ordering: .relaxed)
            #expect(!problems.isEmpty)
        }
    }
}

extension LockProfilerTests {
    /// What is wrong with the core-watch figures of a hold with another nested in it, or nothing:
    /// an outer hold whose thread sleeps before it takes the inner lock, and an outer hold whose
    /// thread blocks taking an inner lock another thread holds across a sleep. Both outer holds
    /// left their core before the inner hold marked the watch again.
    static func nestedCoreWatchProblems() async -> [String] {
        let run = UUID().uuidString
        let sleptLabel = "LockProfilerTests.nested.slept.\(run)", blockedLabel = "LockProfilerTests.nested.blocked.\(run)"
        let slept = LockedValue(0, label: sleptLabel), blocked = LockedValue(0, label: blockedLabel)
        let inner = LockedValue(0, label: "LockProfilerTests.nested.inner.\(run)")
        let sleptDone = Atomic<Bool>(false), innerHeld = Atomic<Bool>(false), takingInner = Atomic<Bool>(false)
        /// Waits for `flag` (a yielding loop with a 10 s deadline); whether it was set.
        @Sendable func waitFor(_ flag: borrowing Atomic<Bool>) -> Bool {
            let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
            while !flag.load(ordering: .acquiring) {
                guard DispatchTime.now().uptimeNanoseconds < deadline else { return false }
                sched_yield()
            }
            return true
        }
        LockProfiler.start()
        let finished = await onOSThreads(2) { index -> Bool in
            if index == 1 {
                guard waitFor(sleptDone) else { return false }
                // Held until the other thread, inside its outer hold, is about to take it, and
                // 5 ms more: that thread blocks on it, or was switched out meanwhile; either way
                // its outer hold leaves its core before the nested hold marks the watch again.
                return inner.withLock { _ -> Bool in
                    innerHeld.store(true, ordering: .releasing)
                    guard waitFor(takingInner) else { return false }
                    sleepSwitchingOut(microseconds: 5_000)
                    return true
                }
            }
            slept.withLock { _ in
                sleepSwitchingOut(microseconds: 3_000)
                inner.withLock { _ in }
            }
            sleptDone.store(true, ordering: .releasing)
            guard waitFor(innerHeld) else { return false }
            blocked.withLock { _ in
                takingInner.store(true, ordering: .releasing)
                inner.withLock { _ in }
            }
            return true
        }
        let figures = LockProfiler.stop()
        guard let done = finished, done.allSatisfy({ $0 }) else { return ["the threads did not finish"] }
        guard CoreWatch.isAvailable else { return [] }
        var problems: [String] = []
        for (label, what) in [(sleptLabel, "slept before its nested hold"), (blockedLabel, "blocked taking its nested lock")] {
            guard let outer = figures.first(where: { $0.label == label }) else {
                problems.append("no figures for the hold that \(what)")
                continue
            }
            if (outer.holdsThatLeftCore?.count ?? 0) < 1 { problems.append("the hold that \(what) did not count as leaving its core") }
            if outer.holds.maxNanoseconds >= 2_000_000, (outer.keptCoreMaxNanoseconds ?? 0) >= 2_000_000 {
                problems.append("the hold that \(what) counts as kept on core: \(outer.keptCoreMaxNanoseconds ?? 0) ns")
            }
        }
        return problems
    }

    @Test("a hold whose thread left its core before a hold nested in it began counts as leaving its core")
    func nestedHoldsKeepTheEnclosingLeave() async {
        await LockProfilerTurn.take {
            let problems = await Self.nestedCoreWatchProblems()
            #expect(problems == [])
        }
    }

    @Test("with a nested hold erasing the enclosing hold's leave (a fault planted for this test), the nested-hold check fails",
          .enabled(if: CoreWatch.isAvailable))
    func erasedEnclosingLeaveIsCaught() async {
        await LockProfilerTurn.take {
            // A thread switched out after the nested hold began shows a leave of its own, which hides
            // the fault in that attempt: each case must be caught in one of up to 5 attempts.
            LockProfiler.forgetsEnclosingLeaves.store(true, ordering: .relaxed)
            var problems: [String] = []
            for _ in 0..<5 where !(problems.contains { $0.contains("slept before") } && problems.contains { $0.contains("blocked taking") }) {
                problems += await Self.nestedCoreWatchProblems()
            }
            LockProfiler.forgetsEnclosingLeaves.store(false, ordering: .relaxed)
            #expect(problems.contains { $0.contains("slept before") }, "\(problems)")
            #expect(problems.contains { $0.contains("blocked taking") }, "\(problems)")
        }
    }
}
