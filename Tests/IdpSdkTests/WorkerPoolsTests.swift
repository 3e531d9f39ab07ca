import Dispatch
import Foundation
@testable import IdpSdk
import IdpPrimitives
import Testing
import TestSupport

@Suite("The SDK's worker pools: one per core above three cores")
struct WorkerPoolsTests {
    static func pools(cores: Int, maximumThreads: Int = 64, coresPerPool: Int = WorkerPools.coresPerPool) -> WorkerPools {
        WorkerPools(maximumThreads: maximumThreads, keepAlive: WorkerPoolTests.keepsThreads, cores: cores, coresPerPool: coresPerPool, spin: .zero)
    }

    /// The pool the calling pool thread belongs to, as a number.
    static var currentPool: UInt { UInt(bitPattern: PoolThread.current?.pool) }

    @Test("one pool up to three cores, one per core above")
    func poolCount() {
        #expect(Self.pools(cores: 1).count == 1)
        #expect(Self.pools(cores: 2).count == 1)
        #expect(Self.pools(cores: 3).count == 1)
        #expect(Self.pools(cores: 4).count == 4)
        #expect(Self.pools(cores: 16).count == 16)
        #expect(Self.pools(cores: 16, coresPerPool: 2).count == 8)
        #expect(Self.pools(cores: 2, coresPerPool: 1).count == 1)
    }

    @Test("every pool's spin gate weighs the process's CPU time against all the cores the pools serve")
    func spinGatesSeeEveryCore() {
        for cores in [2, 4, 16] {
            let pools = Self.pools(cores: cores)
            #expect(pools.pools.allSatisfy { $0.spinGateCores == cores }, "\(cores) cores: \(pools.pools.map(\.spinGateCores))")
        }
    }

    @Test("a job submitted from outside the pools goes to a pool whose thread spins, not to one whose thread it would wake")
    func outsideJobsGoToASpinner() async {
        // Given two pools whose threads spin once, for minutes, when they first run out of work
        let pools = WorkerPools(maximumThreads: 4, keepAlive: WorkerPoolTests.keepsThreads, cores: 4, coresPerPool: 2, spin: .seconds(300),
                                spinGate: SpinGate(cores: 4, busyShare: 0, interval: .nanoseconds(1)), spinSleepMicroseconds: 200)
        let ranOn = LockedValue<[Int: UInt]>([:])
        let own = await OSThreads.run { () -> Int in
            // and the other pool than the submitting thread's own (by its stripe) spinning
            let own = ThreadStripe.current % 2, other = 1 - own
            pools.pools[other].submit { ranOn.withLock { $0[1] = Self.currentPool } }
            let deadline = ContinuousClock.now + .seconds(600)
            while !pools.showsSpinner(other) && ContinuousClock.now < deadline { usleep(100) }
            // When this thread submits a job
            pools.submit { ranOn.withLock { $0[2] = Self.currentPool } }
            return own
        }
        // Then the spinning thread runs it, and the submitting thread's own pool starts no thread
        #expect(await eventuallyOnOSThread { ranOn.withLock { $0.count } == 2 })
        let seen = ranOn.withLock { $0 }
        #expect(seen[1] != nil && seen[1] == seen[2], "\(seen)")
        #expect(pools.pools[own].statistics.started == 0)
        #expect(pools.statistics.started == 1)
    }

    @Test("a job submitted from a pool thread runs on that thread's pool")
    func jobsStayInTheirPool() async {
        let pools = Self.pools(cores: 16)
        let pairs = LockedValue<[(UInt, UInt)]>([])
        // One at a time, so the parent's pool has nothing queued when the child is submitted.
        for round in 1...20 {
            pools.submit {
                let parent = Self.currentPool
                pools.submit { pairs.withLock { $0.append((parent, Self.currentPool)) } }
            }
            #expect(await eventuallyOnOSThread { pairs.withLock { $0.count } == round })
        }
        let all = pairs.withLock { $0 }
        #expect(all.allSatisfy { $0.0 != 0 && $0.0 == $0.1 })
        #expect(pools.isCurrentThread == false)
    }

    @Test("a pool with a job queued hands the next job to a pool with none, which runs it while the first pool stays blocked")
    func queuedPoolHandsOver() async {
        // Given two pools of one thread each, and a submitting OS thread (one stripe, so one pool)
        let pools = Self.pools(cores: 8, maximumThreads: 2, coresPerPool: 4)
        let gate = Gate()
        let ranBeside = Gate()
        let ranOn = LockedValue<[Int: UInt]>([:])
        await OSThreads.run {
            // When its pool's thread blocks and a second job queues behind it
            let running = Gate()
            pools.submit { ranOn.withLock { $0[1] = Self.currentPool }; running.open(); _ = gate.wait(timeout: stuckRunDeadline) }
            _ = running.wait(timeout: stuckRunDeadline)
            pools.submit { ranOn.withLock { $0[2] = Self.currentPool } }
            // Then a third job goes to the other pool and runs while the first is still blocked
            pools.submit { ranOn.withLock { $0[3] = Self.currentPool }; ranBeside.open() }
        }
        #expect(await OSThreads.run { ranBeside.wait(timeout: stuckRunDeadline) })
        gate.open()
        #expect(await eventuallyOnOSThread { ranOn.withLock { $0.count } == 3 })
        let seen = ranOn.withLock { $0 }
        #expect(seen[1] == seen[2] && seen[1] != seen[3], "\(seen)")
        #expect(pools.statistics.started == 2)
    }

    @Test("mayBlock on a pool thread runs the body on it; elsewhere it just runs the body")
    func mayBlock() async {
        let pools = Self.pools(cores: 8)
        #expect(pools.mayBlock { 7 } == 7)
        let onPool = LockedValue<Bool?>(nil)
        pools.submit { onPool.withLock { $0 = pools.mayBlock { pools.isCurrentThread } } }
        #expect(await eventuallyOnOSThread { onPool.withLock { $0 } != nil })
        #expect(onPool.withLock { $0 } == true)
    }
}
