import Dispatch
import Foundation
@testable import IdpSdk
import IdpPrimitives
import Testing

/// The worker pool's spin phase: a thread that ran out of work watches for a job before it sleeps.
/// These tests give it a long spin, so "while it spins" is a state they wait for, not a race.
@Suite struct WorkerPoolTests {
    /// Waits, off the cooperative pool, until `condition` holds (or 30 s pass).
    static func eventually(_ condition: @escaping @Sendable () -> Bool) async -> Bool {
        await CompletionTests.offTask {
            let deadline = DispatchTime.now(plus: .seconds(30))
            while !condition() {
                if DispatchTime.now() > deadline { return false }
                usleep(100)
            }
            return true
        }
    }

    @Test func aJobSubmittedWhileAThreadSpinsRunsOnItWithoutANewThread() async {
        // Given a pool whose one thread has finished its job and spins
        let pool = WorkerPool(maximumThreads: 4, keepAlive: .seconds(60), spin: .seconds(30))
        let ran = LockedValue<[String]>([])
        pool.submit { ran.withLock { $0.append(SDKThreadMarker.currentName ?? "?") } }
        #expect(await Self.eventually { pool.snapshot.spinning == 1 })

        // When a job is submitted
        pool.submit { ran.withLock { $0.append(SDKThreadMarker.currentName ?? "?") } }

        // Then the spinning thread runs it: no thread was started or woken for it
        #expect(await Self.eventually { ran.withLock { $0.count } == 2 })
        #expect(ran.withLock { $0 } == ["IdpSdk-1", "IdpSdk-1"])
        #expect(pool.statistics.started == 1)
        #expect(pool.snapshot.signalled == 0)
    }

    @Test func moreJobsThanSpinnersStillGetThreads() async {
        // Given a pool whose one thread spins
        let pool = WorkerPool(maximumThreads: 8, keepAlive: .seconds(60), concurrency: 4, spin: .seconds(30))
        let done = Gate()
        pool.submit { done.open() }
        #expect(await CompletionTests.offTask { done.wait(timeout: .seconds(30)) })
        #expect(await Self.eventually { pool.snapshot.spinning == 1 })

        // When three jobs that each wait for the others are submitted at once
        let arrived = LockedValue(0)
        let allThree = Gate()
        for _ in 0..<3 {
            pool.submit {
                pool.mayBlock {
                    if arrived.withLock({ $0 += 1; return $0 }) == 3 { for _ in 0..<3 { allThree.open() } }
                    _ = allThree.wait(timeout: .seconds(30))
                }
            }
        }

        // Then all three run at once: the spinner took one, and the others got threads of their own
        #expect(await Self.eventually { arrived.withLock { $0 } == 3 })
    }

    @Test func aSpinningThreadBlockedByItsJobDoesNotStrandTheNext() async {
        // Given a pool with one non-blocking slot whose one thread spins
        let pool = WorkerPool(maximumThreads: 4, keepAlive: .seconds(60), concurrency: 1, spin: .seconds(30))
        pool.submit {}
        #expect(await Self.eventually { pool.snapshot.spinning == 1 })

        // When the spinner takes a job that blocks (inside mayBlock) and another job follows
        let release = Gate()
        let second = Gate()
        pool.submit { pool.mayBlock { _ = release.wait(timeout: .seconds(30)) } }
        pool.submit { second.open() }

        // Then the second job runs while the first still blocks
        #expect(await CompletionTests.offTask { second.wait(timeout: .seconds(30)) })
        release.open()
    }

    @Test func withMoreFlowsInFlightThanCoresAnIdleThreadSleepsWithoutSpinning() async {
        // Given a pool for 2 cores whose service has 3 flows in flight
        let pool = WorkerPool(maximumThreads: 4, keepAlive: .seconds(60), concurrency: 2, spin: .seconds(30))
        for _ in 0..<3 { pool.flowStarted() }

        // When its thread runs out of work
        let done = Gate()
        pool.submit { done.open() }
        #expect(await CompletionTests.offTask { done.wait(timeout: .seconds(30)) })

        // Then it sleeps at once (a 30 s spin would keep it from idling), and spins again once
        // the flows are few
        #expect(await Self.eventually { pool.snapshot.idle == 1 })
        #expect(pool.snapshot.spinning == 0)
        for _ in 0..<2 { pool.flowEnded() }
        #expect(pool.flowsInFlight == 1)
        let next = Gate()
        pool.submit { next.open() }
        #expect(await CompletionTests.offTask { next.wait(timeout: .seconds(30)) })
        #expect(await Self.eventually { pool.snapshot.spinning == 1 })
    }

    @Test func withoutASpinAnIdleThreadSleepsAtOnceAndIsWokenForTheNextJob() async {
        let pool = WorkerPool(maximumThreads: 4, keepAlive: .seconds(60), spin: .zero)
        for _ in 0..<50 {
            if pool.statistics.started > 0 { #expect(await Self.eventually { pool.snapshot.idle == 1 }) }
            let done = Gate()
            pool.submit { done.open() }
            #expect(await CompletionTests.offTask { done.wait(timeout: .seconds(30)) })
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
        #expect(await CompletionTests.offTask { done.wait(timeout: .seconds(30)) })

        // Then the thread spins, sleeps and exits, and a later job starts a new one
        #expect(await Self.eventually { pool.statistics.current == 0 })
        #expect(pool.snapshot.spinning == 0)
        let again = Gate()
        pool.submit { again.open() }
        #expect(await CompletionTests.offTask { again.wait(timeout: .seconds(30)) })
        #expect(pool.statistics.started == 2)
    }
}
