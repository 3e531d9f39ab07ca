import Dispatch
import Foundation
import IdpPrimitives
import Synchronization

/// The SDK's own OS threads, on which providers and completion handlers run.
///
/// Elastic where work may block, bounded where it cannot: a job goes to an idle thread if there is
/// one; else a new thread is started while fewer than `concurrency` threads (the number of cores)
/// are running code that cannot block, up to `maximumThreads` in all; else the job waits in FIFO
/// order for a running thread to take it. Code that may block (a provider that does not say it
/// never blocks, a completion handler) runs inside ``mayBlock(_:)``, which takes its thread out of
/// the bounded count, so a blocked provider holds only its own thread and never starves the
/// others. Without it, a burst of non-blocking jobs would start a thread per job and the cores
/// would spend their time switching between them. Idle threads exit after `keepAlive`.
///
/// A thread that runs out of work first spins for up to `spin` (one thread at a time), watching
/// for a new job without the lock, before it sleeps on the condition: a job submitted meanwhile is
/// taken without a wake-up, which on a VM costs tens of microseconds. It spins only while the
/// process leaves a core idle (``SpinGate``, from the process's CPU time): when the cores are
/// busy, a spinner — even one yielding the core every round — takes time from threads that have
/// work. Then the thread yields its core once before it sleeps: a thread runnable on that core
/// (on one core, the caller about to submit the next flow) runs first, and a job it submits
/// meanwhile is taken without a wake-up and the switches in and out of a sleep.
///
/// Its state lives in one ``ConditionLockedValue`` (the lock the idle threads also wait on); each
/// method decides under it and starts threads or runs jobs after releasing it. The one field
/// outside it, `queuedHint`, is a copy of the queue's length written under the lock for the
/// spinner to watch; every decision is taken again under the lock.
final class WorkerPool: Sendable {
    typealias Job = @Sendable () -> Void

    /// Thread names are `IdpSdk-N`: Linux keeps at most 15 characters of a thread name.
    static let threadNamePrefix = "IdpSdk-"

    private let state: ConditionLockedValue<State>
    let maximumThreads: Int
    /// The most threads running code that cannot block (outside ``mayBlock(_:)``) before a
    /// submit waits for one of them instead of starting another.
    let concurrency: Int
    let keepAlive: Duration
    let stackSize: Int
    /// How long a thread that ran out of work watches for a new job before it sleeps (`.zero`:
    /// it sleeps at once).
    let spin: Duration
    /// Between two looks at the queue, a spinning thread yields its core (`nil`) or sleeps this
    /// many microseconds: a test that holds a thread in its spin for seconds, to act while it
    /// spins, sleeps instead of keeping a core busy.
    let spinSleepMicroseconds: UInt32?
    /// The queue's length, stored under the lock whenever it changes; read without it only by a
    /// spinning thread, as a hint to take the lock.
    private let queuedHintStorage = Atomic<Int>(0)
    /// Where this pool shows that one of its threads spins for a job (1 while it watches, else
    /// 0): cell `spinnerCell` of a ``WorkerPools``'s board, on a line of its own, so that a
    /// submit from outside the pools can hand its job to a spinner instead of waking a thread.
    /// `nil` for a pool on its own.
    private let spinnerBoard: SpacedAtomics?
    private let spinnerCell: Int

    /// Jobs queued, read without the lock (a hint: it may be stale by the time it is used).
    var queuedHint: Int { queuedHintStorage.load(ordering: .relaxed) }

    /// The cores the spin gate weighs the process's CPU time against.
    var spinGateCores: Int { state.withLock { $0.gate.cores } }

    /// The pool's bounds, for its state's decisions.
    private var limits: State.Limits { State.Limits(concurrency: concurrency, maximumThreads: maximumThreads) }

    /// - Parameters:
    ///   - spinGate: Decides whether a thread may spin; by default one over `concurrency` cores.
    ///   - spinnerBoard: Where the pool shows a spinning thread (cell `spinnerCell`); `nil`: nowhere.
    init(maximumThreads: Int, keepAlive: Duration, stackSize: Int = 4 << 20,
         concurrency: Int = Processors.available, spin: Duration = .zero, spinGate: SpinGate? = nil,
         spinSleepMicroseconds: UInt32? = nil, spinnerBoard: SpacedAtomics? = nil, spinnerCell: Int = 0) {
        precondition(maximumThreads > 0, "WorkerPool needs at least one thread")
        precondition(spinnerBoard.map { spinnerCell >= 0 && spinnerCell < $0.count } ?? true, "WorkerPool's spinner cell is not on its board")
        self.spinnerBoard = spinnerBoard
        self.spinnerCell = spinnerCell
        self.maximumThreads = maximumThreads
        self.concurrency = max(1, concurrency)
        self.keepAlive = max(.milliseconds(1), keepAlive)
        self.stackSize = stackSize
        self.spin = max(.zero, spin)
        self.spinSleepMicroseconds = spinSleepMicroseconds
        state = ConditionLockedValue(State(gate: spinGate ?? SpinGate(cores: max(1, concurrency))), label: "IdpSdk.WorkerPool")
    }

    /// Runs `job` on a pool thread, soon. Never runs it on the calling thread.
    func submit(_ job: @escaping Job) {
        // A queue three quarters full asks for the ring it grows into next, made after the lock
        // (once the job's thread is woken) and handed in under it.
        let (action, spareSlots) = state.withLockTakingGrowth({ state in
            let action = state.submit(job, limits: limits)
            queuedHintStorage.store(state.jobs.count, ordering: .relaxed)
            return action
        }, request: { $0.takeSpareRequest() })
        act(action)
        if let spareSlots {
            state.grow(spareSlots, make: { JobQueue.makeRing(slots: $0) }, install: { $0.installSpare(&$1) })
        }
    }

    private func act(_ action: State.SubmitAction) {
        switch action {
        case .wake: state.signal()
        case .start(let number): startThread(number: number)
        case .queue: break
        }
    }

    /// Runs `body`, which may block (a provider, a completion handler), taking the calling pool
    /// thread out of the bounded count meanwhile: if jobs wait, another thread takes them. On a
    /// thread that is not this pool's, just runs `body`.
    func mayBlock<Result>(_ body: () -> Result) -> Result {
        guard isCurrentThread else { return body() }
        act(state.withLock { $0.enterBlocking(limits: limits) })
        defer { state.withLock { $0.leaveBlocking() } }
        return body()
    }

    /// Whether the calling thread is one of this pool's.
    var isCurrentThread: Bool {
        PoolThread.current?.pool == Unmanaged.passUnretained(self).toOpaque()
    }

    /// The most inline steps nested on one thread's stack; past it a step is submitted, which
    /// starts again from an empty stack. (With a synchronous transport each inline step runs
    /// inside the previous one's send, so an IDP that re-serves a form forever would otherwise
    /// overflow the stack.)
    static let maximumInlineDepth = 16

    /// Whether the caller may run a step inline: on one of this pool's threads, fewer than
    /// ``maximumInlineDepth`` deep. When it returns `true`, call ``leaveInline()`` after the step.
    func enterInline() -> Bool {
        guard let thread = PoolThread.current, thread.pool == Unmanaged.passUnretained(self).toOpaque(),
              thread.inlineDepth < Self.maximumInlineDepth else { return false }
        thread.inlineDepth += 1
        return true
    }

    /// Ends an inline step begun with ``enterInline()``.
    func leaveInline() {
        PoolThread.current?.inlineDepth -= 1
    }

    /// Thread counts, for tests and the benchmark.
    var statistics: (current: Int, peak: Int, started: Int) {
        state.withLock { ($0.threads, $0.peakThreads, $0.started) }
    }

    /// A copy of the pool's state, for tests.
    var snapshot: State { state.withLock { $0 } }

    /// How often the system refused a new thread (each refusal is retried).
    var startFailures: Int { state.withLock { $0.threadStartFailures } }

    private func startThread(number: Int) {
        let name = "\(Self.threadNamePrefix)\(number)"
        let start = Unmanaged.passRetained(ThreadStart { [self] in
            Thread.current.name = name
            PoolThread.markCurrentThread(pool: Unmanaged.passUnretained(self).toOpaque(), number: number)
            run()
        })
        var attributes = pthread_attr_t()
        Self.check(pthread_attr_init(&attributes), "pthread_attr_init")
        defer { Self.check(pthread_attr_destroy(&attributes), "pthread_attr_destroy") }
        Self.check(pthread_attr_setstacksize(&attributes, stackSize), "pthread_attr_setstacksize")
        Self.check(pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)), "pthread_attr_setdetachstate")
        #if os(Linux)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        let status = pthread_create(&thread, &attributes, { argument in
            #if os(Linux)
            let start = Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue()
            #else
            let start = Unmanaged<ThreadStart>.fromOpaque(argument).takeRetainedValue()
            #endif
            start.body()
            return nil
        }, start.toOpaque())
        guard status != 0 else { return }
        // The system would not give a thread now (EAGAIN under memory or thread limits). The slot
        // stays reserved and the start is retried, so queued jobs are not stranded.
        precondition(status == EAGAIN || status == ENOMEM, "pthread_create failed: \(status)")
        start.release()
        state.withLock { $0.threadStartFailed() }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { [self] in startThread(number: number) }
    }

    /// A pool thread's loop: take a job (or wait for one, up to `keepAlive`), run it after the
    /// lock is released; exit when idle for `keepAlive` with nothing queued.
    private func run() {
        while let job = nextJob() { job() }
    }

    /// What a thread looking for work does next.
    private enum Next { case run(Job), spin, yieldOnce, exit }

    /// The next job for this thread, or `nil` when it should exit. With the queue empty it spins
    /// (``spinForJob()``) once if no other thread spins, or yields its core once if the process
    /// leaves no core idle, before it waits on the condition.
    private func nextJob() -> Job? {
        var mayStillSpin = spin > .zero
        while true {
            switch nextStep(mayStillSpin: mayStillSpin) {
            case .run(let job): return job
            case .exit: return nil
            case .yieldOnce:
                mayStillSpin = false
                sched_yield()
                state.withLock { $0.spinEnded(spent: 0) }
            case .spin:
                mayStillSpin = false
                let reading = SpinGate.Reading.now()
                var spent: UInt64 = 0
                if state.withLock({ $0.allowsSpin(reading) }) {
                    // Shown on the board only while it watches: a submit that reads a stale 1
                    // finds no spinner under the lock and wakes, starts or queues as any submit.
                    spinnerBoard?.add(1, at: spinnerCell)
                    spent = spinForJob()
                    spinnerBoard?.add(-1, at: spinnerCell)
                } else {
                    sched_yield()
                }
                state.withLock { $0.spinEnded(spent: spent) }
            }
        }
    }

    /// Watches `queuedHint` without the lock, yielding the core each round, until a job is queued
    /// or ``spin`` has passed. Returns the CPU time it spun, in nanoseconds: the thread's own CPU
    /// clock, not the wall clock, since a yield that hands the core to another thread costs the
    /// spinner nothing (counting wall time would take other threads' work for spinning).
    private func spinForJob() -> UInt64 {
        let cpuBefore = SpinGate.Reading.threadCPUNow()
        let deadline = DispatchTime.now(plus: spin)
        while queuedHintStorage.load(ordering: .relaxed) == 0 && DispatchTime.now() < deadline {
            if let spinSleepMicroseconds { usleep(spinSleepMicroseconds) } else { sched_yield() }
        }
        let cpuAfter = SpinGate.Reading.threadCPUNow()
        return cpuAfter >= cpuBefore ? cpuAfter - cpuBefore : 0
    }

    private func nextStep(mayStillSpin: Bool) -> Next {
        state.wait { state, wake -> ConditionLockedValue<State>.Decision<Next> in
            let look = state.lookForWork(after: wake, mayStillSpin: mayStillSpin, now: SpinGate.Reading.wallNow())
            switch look {
            case .run(let job):
                queuedHintStorage.store(state.jobs.count, ordering: .relaxed)
                return .done(.run(job))
            case .spin: return .done(.spin)
            case .yieldOnce: return .done(.yieldOnce)
            case .exit: return .done(.exit)
            case .sleep: return .wait(timeout: keepAlive)
            }
        }
    }

    private static func check(_ status: Int32, _ function: String) {
        precondition(status == 0, "\(function) failed: \(status)")
    }
}

/// What a new pool thread runs; passed through `pthread_create`'s argument.
private final class ThreadStart {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
