import BenchSupport
import IdpPrimitives
import Testing

@Suite("LeasePool: each value lent to one lease at a time, waiters served in order")
struct LeasePoolTests {
    /// Suspends the test until `pool` has `count` leases waiting (yields; never blocks a thread).
    static func waitUntil(_ pool: LeasePool<Int>, hasWaiting count: Int) async {
        while pool.waiting < count { await Task.yield() }
    }

    @Test("many more leases than values: no value is held by two leases at once, every lease is served, and every value comes back")
    func exclusive() async throws {
        let values = 4
        let pool = LeasePool(Array(0..<values))
        // How many leases hold each value now, how often one was found held already, how many
        // leases were served.
        let ledger = LockedValue((held: [Int](repeating: 0, count: values), overlaps: 0, served: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    for _ in 0..<50 {
                        let value = try await pool.lease()
                        ledger.withLock {
                            $0.held[value] += 1
                            if $0.held[value] != 1 { $0.overlaps += 1 }
                        }
                        await Task.yield()
                        ledger.withLock {
                            $0.held[value] -= 1
                            $0.served += 1
                        }
                        pool.giveBack(value)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(ledger.withLock { $0.overlaps } == 0)
        #expect(ledger.withLock { $0.served } == 64 * 50)
        #expect(pool.freeCount == values)
        #expect(pool.waiting == 0)
    }

    @Test("with no value free, leases wait, and values given back go to the waiters in the order they came")
    func fifo() async throws {
        // Given an empty pool and three leases queued one after another
        let pool = LeasePool<Int>([])
        let order = LockedValue<[Int]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for waiter in 0..<3 {
                group.addTask {
                    let value = try await pool.lease()
                    order.withLock { $0.append(waiter * 100 + value) }
                }
                await Self.waitUntil(pool, hasWaiting: waiter + 1)
            }
            // When three values are given back
            for value in 1...3 { pool.giveBack(value) }
            try await group.waitForAll()
        }
        // Then the first waiter got the first value, and so on; nothing is left free or waiting
        #expect(order.withLock { $0.sorted() } == [1, 102, 203])
        #expect(pool.freeCount == 0)
        #expect(pool.waiting == 0)
    }

    @Test("a waiting lease that is cancelled throws CancellationError, leaves the queue, and a value given back later stays free")
    func cancelledWhileWaiting() async {
        let pool = LeasePool<Int>([])
        let waiter = Task { try await pool.lease() }
        await Self.waitUntil(pool, hasWaiting: 1)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(pool.waiting == 0)
        pool.giveBack(7)
        #expect(pool.freeCount == 1)
    }

    @Test("a lease in a task cancelled before it asks throws CancellationError and takes no value, even with values free")
    func cancelledBeforeLeasing() async {
        let pool = LeasePool([1, 2])
        let gate = LockedValue(false)
        let task = Task {
            // Wait for the cancellation without blocking a thread.
            while !Task.isCancelled { await Task.yield() }
            gate.withLock { $0 = true }
            return try await pool.lease()
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(gate.withLock { $0 })
        #expect(pool.freeCount == 2)
        #expect(pool.waiting == 0)
    }
}
