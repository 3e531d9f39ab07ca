import Foundation
import IdpPrimitives

/// An ``IdpSdkService``'s SDK threads: one ``WorkerPool`` per two cores, each with its own lock,
/// queue and threads, so that on a many-core machine the flows' hand-offs do not all meet on one
/// lock. On up to three cores it is one pool, exactly as a ``WorkerPool`` alone.
///
/// A job submitted from a pool thread goes to that thread's own pool (a flow's steps stay where
/// they started, and the pool's count of threads running non-blocking code stays its own); from
/// any other thread, to the pool of the caller's ``ThreadStripe``. A pool that has jobs queued
/// (every one of its threads busy) hands a new job to the pool with the fewest queued instead,
/// reading the pools' queue lengths without their locks.
final class WorkerPools: Sendable {
    /// Cores per pool, by default.
    package static let coresPerPool = 2
    private let pools: [WorkerPool]

    /// - Parameters:
    ///   - maximumThreads: The most threads of all pools together (each gets its share, at least 1).
    ///   - keepAlive: How long an idle thread waits for work before it exits.
    ///   - cores: The cores to serve; one pool per `coresPerPool` of them.
    ///   - coresPerPool: Cores per pool; ``coresPerPool`` by default.
    ///   - spin: How long a thread out of work watches for the next job.
    init(maximumThreads: Int, keepAlive: Duration, cores: Int = ProcessInfo.processInfo.activeProcessorCount,
         coresPerPool: Int = WorkerPools.coresPerPool, spin: Duration) {
        let count = max(1, cores / max(1, coresPerPool))
        let threads = max(1, (maximumThreads + count - 1) / count)
        let concurrency = max(1, (max(1, cores) + count - 1) / count)
        pools = (0..<count).map { _ in WorkerPool(maximumThreads: threads, keepAlive: keepAlive, concurrency: concurrency, spin: spin) }
    }

    /// The pool whose thread is calling, if any.
    private var currentPool: WorkerPool? {
        guard let thread = PoolThread.current else { return nil }
        return pools.first { Unmanaged.passUnretained($0).toOpaque() == thread.pool }
    }

    /// Runs `job` on a pool thread, soon. Never runs it on the calling thread.
    func submit(_ job: @escaping WorkerPool.Job) {
        if pools.count == 1 { return pools[0].submit(job) }
        let chosen = currentPool ?? pools[ThreadStripe.current % pools.count]
        guard chosen.queuedHint > 0, let lightest = pools.min(by: { $0.queuedHint < $1.queuedHint }), lightest.queuedHint < chosen.queuedHint else {
            return chosen.submit(job)
        }
        lightest.submit(job)
    }

    /// Runs `body`, which may block, taking the calling pool thread out of its pool's bounded
    /// count meanwhile (``WorkerPool/mayBlock(_:)``); on any other thread, just runs it.
    func mayBlock<Result>(_ body: () -> Result) -> Result {
        guard let pool = currentPool else { return body() }
        return pool.mayBlock(body)
    }

    /// Whether the calling thread is one of these pools'.
    var isCurrentThread: Bool { currentPool != nil }

    /// See ``WorkerPool/enterInline()``.
    func enterInline() -> Bool { currentPool?.enterInline() ?? false }

    /// See ``WorkerPool/leaveInline()``.
    func leaveInline() { currentPool?.leaveInline() }

    /// Thread counts over every pool: running now, the sum of each pool's peak, started in all.
    var statistics: (current: Int, peak: Int, started: Int) {
        pools.reduce((0, 0, 0)) { sum, pool in
            let one = pool.statistics
            return (sum.0 + one.current, sum.1 + one.peak, sum.2 + one.started)
        }
    }

    /// How often the system refused a new thread, over every pool.
    var startFailures: Int { pools.reduce(0) { $0 + $1.startFailures } }

    /// How many pools there are.
    var count: Int { pools.count }
}
