import Dispatch
import Foundation
import IdpPrimitives
import Synchronization

/// What a timed run on several OS threads did.
package struct RaceResult: Sendable {
    /// Operations completed by all threads together.
    package let operations: UInt64
    /// Wall-clock time from the start signal until the last thread stopped.
    package let nanoseconds: UInt64

    /// Wall-clock nanoseconds per operation of all threads together (aggregate): it halves when
    /// doubling the threads doubles the throughput.
    package var nanosecondsPerOperation: Double { Double(nanoseconds) / Double(max(1, operations)) }
}

/// Runs `operation` in a loop on `threads` new OS threads, started together, for `seconds`.
///
/// `makeOperation(thread)` runs on the measuring thread before the start and returns that
/// thread's operation, which is called with the running count of its calls (0, 1, 2, …) and
/// returns a number the thread adds up, so the compiler cannot drop the work. Each thread counts its own operations and checks the stop flag every `batch` of them (a
/// relaxed atomic load); counts are handed over once, at the end: nothing shared is written while
/// measuring.
/// - Parameters:
///   - threads: The OS threads to start, released together.
///   - seconds: How long they run.
///   - batch: Operations between two checks of the stop flag.
///   - makeOperation: Called once per thread with its index; returns the operation that thread
///     repeats, given the iteration number.
/// - Returns: The operations of all threads and the wall-clock time they took.
package func race(threads: Int, seconds: Double, batch: Int = 16, makeOperation: (Int) -> @Sendable (Int) -> Int) -> RaceResult {
    final class Signals: Sendable {
        let ready = Atomic<Int>(0)
        let go = Atomic<Bool>(false)
        let stop = Atomic<Bool>(false)
        let results = LockedValue<[(operations: UInt64, end: UInt64, checksum: Int)]>([])
        let finished = DispatchSemaphore(value: 0)
    }
    let signals = Signals()
    for thread in 0..<threads {
        let operation = makeOperation(thread)
        let worker = Thread {
            signals.ready.add(1, ordering: .releasing)
            while !signals.go.load(ordering: .acquiring) { sched_yield() }
            var operations = 0
            var checksum = 0
            repeat {
                for call in operations..<(operations + batch) { checksum &+= operation(call) }
                operations += batch
            } while !signals.stop.load(ordering: .relaxed)
            let end = DispatchTime.now().uptimeNanoseconds
            signals.results.withLock { $0.append((UInt64(operations), end, checksum)) }
            signals.finished.signal()
        }
        worker.stackSize = 1 << 20
        worker.start()
    }
    while signals.ready.load(ordering: .acquiring) < threads { usleep(100) }
    let start = DispatchTime.now().uptimeNanoseconds
    signals.go.store(true, ordering: .releasing)
    usleep(UInt32(seconds * 1e6))
    signals.stop.store(true, ordering: .relaxed)
    for _ in 0..<threads { signals.finished.wait() }
    let results = signals.results.withLock { $0 }
    let end = results.map(\.end).max() ?? start
    blackHole(results.reduce(0) { $0 &+ $1.checksum })
    return RaceResult(operations: results.reduce(0) { $0 + $1.operations }, nanoseconds: end - start)
}

/// Keeps a value alive as far as the optimizer can tell.
/// - Parameter value: The value a measured operation computed.
@inline(never)
package func blackHole(_ value: Int) {
    if value == 0x5eed_5eed { print("", terminator: "") }
}
