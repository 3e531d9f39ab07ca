import Foundation
import IdpPrimitives

/// An ``IdpSdkService``'s SDK threads: one ``WorkerPool`` per core, each with its own lock, queue
/// and threads, so that on a many-core machine the flows' hand-offs do not all meet on one lock.
/// On up to three cores it is one pool, exactly as a ``WorkerPool`` alone: there, a pool of one
/// core leaves a job queued behind its busy thread while the other pool's core may idle, and two
/// pools of one core each cost logins about a tenth of their throughput on 2 cores.
///
/// A job submitted from a pool thread goes to that thread's own pool (a flow's steps stay where
/// they started, and the pool's count of threads running non-blocking code stays its own); from
/// any other thread, to the pool of the caller's ``ThreadStripe``, unless that pool has no thread
/// spinning for a job and another has one: then to that one, which takes it without a wake-up
/// (a lone flow's first hand-off otherwise wakes a sleeping thread in one pool while another
/// pool's thread spins). A pool that has jobs queued (every one of its threads busy) hands a new
/// job to the pool with the fewest queued instead, reading the pools' queue lengths without their
/// locks.
///
/// Every pool's spin gate weighs the process's CPU time against all the cores the pools serve, not
/// its own share of them: the process's CPU time is the whole process's.
final class WorkerPools: Sendable {
    /// Cores per pool above three cores, by default.
    package static let coresPerPool = 1
    /// Up to this many cores, one pool serves them all.
    package static let singlePoolCores = 3
    let pools: [WorkerPool]
    /// One cell per pool, each on lines of its own: 1 while one of that pool's threads spins for a
    /// job. Written only when a spin starts or ends (when a core is idle); read by submits from
    /// outside the pools.
    private let spinners: SpacedAtomics

    /// - Parameters:
    ///   - maximumThreads: The most threads of all pools together (each gets its share, at least 1).
    ///   - keepAlive: How long an idle thread waits for work before it exits.
    ///   - cores: The cores to serve; one pool per `coresPerPool` of them, one pool in all up to
    ///     ``singlePoolCores``.
    ///   - coresPerPool: Cores per pool; ``coresPerPool`` by default.
    ///   - spin: How long a thread out of work watches for the next job.
    ///   - spinGate: Each pool's spin gate; by default one over all `cores`.
    ///   - spinSleepMicroseconds: See ``WorkerPool``; `nil` (yield the core) by default.
    init(maximumThreads: Int, keepAlive: Duration, cores: Int = Processors.available,
         coresPerPool: Int = WorkerPools.coresPerPool, spin: Duration, spinGate: SpinGate? = nil, spinSleepMicroseconds: UInt32? = nil) {
        let count = cores <= Self.singlePoolCores ? 1 : max(1, cores / max(1, coresPerPool))
        let threads = max(1, (maximumThreads + count - 1) / count)
        let concurrency = max(1, (max(1, cores) + count - 1) / count)
        let gate = spinGate ?? SpinGate(cores: max(1, cores))
        let spinners = SpacedAtomics(count: count)
        self.spinners = spinners
        pools = (0..<count).map {
            WorkerPool(maximumThreads: threads, keepAlive: keepAlive, concurrency: concurrency, spin: spin, spinGate: gate,
                       spinSleepMicroseconds: spinSleepMicroseconds, spinnerBoard: count > 1 ? spinners : nil, spinnerCell: $0)
        }
    }

    /// The pool whose thread is calling, if any.
    private var currentPool: WorkerPool? {
        guard let thread = PoolThread.current else { return nil }
        return pools.first { Unmanaged.passUnretained($0).toOpaque() == thread.pool }
    }

    /// Runs `job` on a pool thread, soon. Never runs it on the calling thread.
    func submit(_ job: @escaping WorkerPool.Job) {
        if pools.count == 1 { return pools[0].submit(job) }
        let chosen: WorkerPool
        if let own = currentPool {
            chosen = own
        } else {
            let striped = ThreadStripe.current % pools.count
            chosen = pools[spinningPool(from: striped) ?? striped]
        }
        guard chosen.queuedHint > 0, let lightest = pools.min(by: { $0.queuedHint < $1.queuedHint }), lightest.queuedHint < chosen.queuedHint else {
            return chosen.submit(job)
        }
        lightest.submit(job)
    }

    /// A pool to hand an outside job to instead of pool `index`: `nil` when pool `index` shows a
    /// spinning thread or has jobs queued (it keeps the job); else the first pool after it (in a
    /// circle) that shows a spinner and has no job queued; else `nil`. Plain loads of the board's
    /// cells, which change only when a spin starts or ends, so they stay in the readers' caches
    /// while the pools' threads stay busy.
    private func spinningPool(from index: Int) -> Int? {
        if spinners.load(at: index) > 0 || pools[index].queuedHint > 0 { return nil }
        var other = index + 1
        for _ in 1..<pools.count {
            if other == pools.count { other = 0 }
            if spinners.load(at: other) > 0 && pools[other].queuedHint == 0 { return other }
            other += 1
        }
        return nil
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

    /// Whether pool `index` shows a thread spinning for a job.
    func showsSpinner(_ index: Int) -> Bool { spinners.load(at: index) > 0 }
}
