import Dispatch
import Foundation
@testable import IdpSdk
import IdpPrimitives
import Testing
import TestSupport

/// The worker pool's spin phase: a thread that ran out of work watches for a job before it sleeps.
/// These tests give it a long spin, so "while it spins" is a state they wait for, not a race:
/// under ThreadSanitizer on a loaded machine, seconds pass between two steps of a test.
@Suite struct WorkerPoolTests {
    /// A keep-alive longer than any run of the suite, for tests that count the pool's threads:
    /// under ThreadSanitizer with the whole suite in parallel, one of these tests has taken 95 s,
    /// and with a 60 s keep-alive its idle thread exited and the next job started a second one.
    static let keepsThreads: Duration = .seconds(3600)

    /// A pool whose thread spins once, the first time it runs out of work, until a job comes (for
    /// at most ``keepsThreads``, longer than any run of the suite), and never again: its gate counts any work
    /// as busy, so every later reading refuses. It sleeps 200 µs between looks at the queue, so a
    /// spin that lasts while the test waits its turn leaves the cores to the rest of the suite.
    static func spinningOnce(maximumThreads: Int = 4, concurrency: Int = 2) -> WorkerPool {
        WorkerPool(maximumThreads: maximumThreads, keepAlive: keepsThreads, concurrency: concurrency, spin: keepsThreads,
                   spinGate: SpinGate(cores: 2, busyShare: 0, interval: .nanoseconds(1)), spinSleepMicroseconds: 200)
    }

    @Test func aJobSubmittedWhileAThreadSpinsRunsOnItWithoutANewThread() async {
        // Given a pool whose one thread has finished its job and spins
        let pool = Self.spinningOnce()
        let ran = LockedValue<[String]>([])
        pool.submit { ran.withLock { $0.append(SDKThreadMarker.currentName ?? "?") } }
        #expect(await eventuallyOnOSThread { pool.snapshot.spinning == 1 })

        // When a job is submitted
        pool.submit { ran.withLock { $0.append(SDKThreadMarker.currentName ?? "?") } }

        // Then the spinning thread runs it: no thread was started or woken for it
        #expect(await eventuallyOnOSThread { ran.withLock { $0.count } == 2 })
        #expect(ran.withLock { $0 } == ["IdpSdk-1", "IdpSdk-1"])
        #expect(pool.statistics.started == 1)
        #expect(pool.snapshot.signalled == 0)
    }

    @Test func moreJobsThanSpinnersStillGetThreads() async {
        // Given a pool whose one thread spins
        let pool = Self.spinningOnce(maximumThreads: 8, concurrency: 4)
        let done = Gate()
        pool.submit { done.open() }
        #expect(await OSThreads.run { done.wait(timeout: stuckRunDeadline) })
        #expect(await eventuallyOnOSThread { pool.snapshot.spinning == 1 })

        // When three jobs that each wait for the others are submitted at once
        let arrived = LockedValue(0)
        let allThree = Gate()
        for _ in 0..<3 {
            pool.submit {
                pool.mayBlock {
                    if arrived.withLock({ $0 += 1; return $0 }) == 3 { allThree.open() }
                    _ = allThree.wait(timeout: stuckRunDeadline)
                }
            }
        }

        // Then all three run at once: the spinner took one, and the others got threads of their own
        #expect(await eventuallyOnOSThread { arrived.withLock { $0 } == 3 })
    }

    @Test func aSpinningThreadBlockedByItsJobDoesNotStrandTheNext() async {
        // Given a pool with one non-blocking slot whose one thread spins
        let pool = Self.spinningOnce(concurrency: 1)
        pool.submit {}
        #expect(await eventuallyOnOSThread { pool.snapshot.spinning == 1 })

        // When the spinner takes a job that blocks (inside mayBlock) and another job follows
        let release = Gate()
        let second = Gate()
        pool.submit { pool.mayBlock { _ = release.wait(timeout: stuckRunDeadline) } }
        pool.submit { second.open() }

        // Then the second job runs while the first still blocks
        #expect(await OSThreads.run { second.wait(timeout: stuckRunDeadline) })
        release.open()
    }

    @Test func whenTheProcessKeepsTheCoresBusyAnIdleThreadSleepsWithoutSpinning() async {
        // Given a pool whose gate counts any CPU use as busy, with a spin longer than the suite
        let pool = Self.spinningOnce()
        // When its thread runs out of work the first time, the gate has no history: it spins
        pool.submit {}
        #expect(await eventuallyOnOSThread { pool.snapshot.spinning == 1 })
        // and takes the next job; running out of work again, it reads the clocks, and the gate
        // says the process is busy
        let done = Gate()
        pool.submit { done.open() }
        #expect(await OSThreads.run { done.wait(timeout: stuckRunDeadline) })

        // Then the thread sleeps at once (with its long spin it could not be idle otherwise)
        #expect(await eventuallyOnOSThread { pool.snapshot.idle == 1 })
        #expect(pool.snapshot.spinning == 0)
        #expect(pool.statistics.started == 1)
    }

    @Test func withoutASpinAnIdleThreadSleepsAtOnceAndIsWokenForTheNextJob() async {
        let pool = WorkerPool(maximumThreads: 4, keepAlive: Self.keepsThreads, spin: .zero)
        for _ in 0..<50 {
            if pool.statistics.started > 0 { #expect(await eventuallyOnOSThread { pool.snapshot.idle == 1 }) }
            let done = Gate()
            pool.submit { done.open() }
            #expect(await OSThreads.run { done.wait(timeout: stuckRunDeadline) })
            #expect(pool.snapshot.spinning == 0)
        }
        #expect(pool.statistics.started == 1)
        #expect(pool.snapshot.signalled >= 1, "the one thread slept between jobs and was signalled")
    }

    @Test func aSpinnerThatSeesNoJobSleepsAndExitsAfterKeepAlive() async {
        // Given a short spin and a short keep-alive
        let pool = WorkerPool(maximumThreads: 4, keepAlive: .milliseconds(50), spin: .milliseconds(5))
        let done = Gate()
        pool.submit { done.open() }
        #expect(await OSThreads.run { done.wait(timeout: stuckRunDeadline) })

        // Then the thread spins, sleeps and exits, and a later job starts a new one
        #expect(await eventuallyOnOSThread { pool.statistics.current == 0 })
        #expect(pool.snapshot.spinning == 0)
        let again = Gate()
        pool.submit { again.open() }
        #expect(await OSThreads.run { again.wait(timeout: stuckRunDeadline) })
        #expect(pool.statistics.started == 2)
    }
}

/// The spin gate as a plain value: clock readings in, decisions out.
@Suite struct SpinGateTests {
    typealias Reading = SpinGate.Reading
    let ms: UInt64 = 1_000_000

    @Test func aProcessThatKeepsTheCoresBusyStopsTheSpinUntilACoreIsIdleAgain() {
        var gate = SpinGate(cores: 2, busyShare: 0.75, interval: .milliseconds(1))
        // The first reading has nothing to compare with: spins are allowed.
        let first = gate.allowsSpin(Reading(wall: 10 * ms, cpu: 0))
        #expect(first)
        // 2 ms later the process used 3.2 ms of CPU on 2 cores: 80% busy, so no spin...
        let busy = gate.allowsSpin(Reading(wall: 12 * ms, cpu: 3_200_000))
        #expect(!busy)
        // ...and nobody even asks for a reading before the interval has passed...
        #expect(!gate.mayAllow(at: 12 * ms + 500_000))
        #expect(gate.mayAllow(at: 13 * ms))
        // ...and a reading within the interval changes nothing.
        let early = gate.allowsSpin(Reading(wall: 12 * ms + 500_000, cpu: 3_200_000))
        #expect(!early)
        // 2 ms later it used 1 ms of CPU: a core is idle, spins are allowed again.
        let idle = gate.allowsSpin(Reading(wall: 14 * ms, cpu: 4_200_000))
        #expect(idle)
        #expect(gate.mayAllow(at: 14 * ms))
    }

    @Test func byDefaultASpinNeedsACoreIdleOnAverage() {
        // 2 cores: below half busy a core is idle on average; 4 cores: below three quarters.
        for (cores, idleShare, busyShare) in [(2, 0.4, 0.6), (4, 0.7, 0.8)] {
            var idle = SpinGate(cores: cores, interval: .milliseconds(1))
            _ = idle.allowsSpin(Reading(wall: 0, cpu: 0))
            let allowed = idle.allowsSpin(Reading(wall: 10 * ms, cpu: UInt64(idleShare * Double(cores) * 10) * ms))
            #expect(allowed, "\(cores) cores at \(idleShare)")
            var busy = SpinGate(cores: cores, interval: .milliseconds(1))
            _ = busy.allowsSpin(Reading(wall: 0, cpu: 0))
            let refused = busy.allowsSpin(Reading(wall: 10 * ms, cpu: UInt64(busyShare * Double(cores) * 10) * ms))
            #expect(!refused, "\(cores) cores at \(busyShare)")
        }
    }

    @Test func timeSpentSpinningIsNotCountedAsWork() {
        var gate = SpinGate(cores: 2, busyShare: 0.75, interval: .milliseconds(1))
        _ = gate.allowsSpin(Reading(wall: 0, cpu: 0))
        // 4 ms of CPU in 2 ms on 2 cores is 100% busy, but 2.5 ms of it was spinning: 1.5 ms of
        // work is 37.5%, so the spin may go on.
        gate.spent(2_500_000)
        let allowed = gate.allowsSpin(Reading(wall: 2 * ms, cpu: 4 * ms))
        #expect(allowed)
        // Without the spin it would have stopped.
        var other = SpinGate(cores: 2, busyShare: 0.75, interval: .milliseconds(1))
        _ = other.allowsSpin(Reading(wall: 0, cpu: 0))
        let stopped = other.allowsSpin(Reading(wall: 2 * ms, cpu: 4 * ms))
        #expect(!stopped)
    }

    @Test func clocksThatGoBackwardsChangeNothing() {
        var gate = SpinGate(cores: 1, busyShare: 0.75, interval: .milliseconds(1))
        _ = gate.allowsSpin(Reading(wall: 5 * ms, cpu: 5 * ms))
        let wallBack = gate.allowsSpin(Reading(wall: 4 * ms, cpu: 9 * ms))
        #expect(wallBack)
        let cpuBack = gate.allowsSpin(Reading(wall: 7 * ms, cpu: 4 * ms))
        #expect(cpuBack, "a CPU clock that went back counts as no work")
    }
}
