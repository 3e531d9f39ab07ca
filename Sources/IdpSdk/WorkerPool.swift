import Dispatch
import Foundation
import IdpPrimitives

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
/// Its state lives in one ``ConditionLockedValue`` (the lock the idle threads also wait on); each
/// method decides under it and starts threads or runs jobs after releasing it.
final class WorkerPool: Sendable {
    typealias Job = @Sendable () -> Void

    /// Thread names are `IdpSdk-N`: Linux keeps at most 15 characters of a thread name.
    static let threadNamePrefix = "IdpSdk-"

    struct State: Sendable {
        var jobs = JobQueue()
        /// Threads waiting on the condition that no submit has reserved.
        var idle = 0
        /// Signals sent to waiting threads and not yet consumed. Invariant: `idle + wakeups` is the
        /// number of threads waiting on the condition.
        var wakeups = 0
        var threads = 0
        /// Threads inside ``WorkerPool/mayBlock(_:)``.
        var blocking = 0
        var peakThreads = 0
        var started = 0
        var threadStartFailures = 0
    }

    private let state = ConditionLockedValue(State(), label: "IdpSdk.WorkerPool")
    let maximumThreads: Int
    /// The most threads running code that cannot block (outside ``mayBlock(_:)``) before a
    /// submit waits for one of them instead of starting another.
    let concurrency: Int
    let keepAlive: Duration
    let stackSize: Int

    init(maximumThreads: Int, keepAlive: Duration, stackSize: Int = 4 << 20,
         concurrency: Int = ProcessInfo.processInfo.activeProcessorCount) {
        precondition(maximumThreads > 0, "WorkerPool needs at least one thread")
        self.maximumThreads = maximumThreads
        self.concurrency = max(1, concurrency)
        self.keepAlive = max(.milliseconds(1), keepAlive)
        self.stackSize = stackSize
    }

    /// What a submit does after the lock: wake an idle thread, start one, or nothing (the job
    /// waits for a busy thread).
    private enum SubmitAction { case wake, start(number: Int), queue }

    /// Runs `job` on a pool thread, soon. Never runs it on the calling thread.
    func submit(_ job: @escaping Job) {
        let action = state.withLock { state -> SubmitAction in
            state.jobs.append(job)
            if state.idle > 0 {
                state.idle -= 1
                state.wakeups += 1
                return .wake
            }
            return startIfUnderLimits(&state)
        }
        act(action)
    }

    /// Starts a thread if fewer than `concurrency` run non-blocking code and the pool is below
    /// `maximumThreads`. Under the lock.
    private func startIfUnderLimits(_ state: inout State) -> SubmitAction {
        guard state.threads - state.blocking < concurrency, state.threads < maximumThreads else { return .queue }
        state.threads += 1
        state.peakThreads = max(state.peakThreads, state.threads)
        state.started += 1
        return .start(number: state.started)
    }

    private func act(_ action: SubmitAction) {
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
        let action = state.withLock { state -> SubmitAction in
            state.blocking += 1
            guard !state.jobs.isEmpty, state.idle == 0 else { return .queue }
            return startIfUnderLimits(&state)
        }
        act(action)
        defer { state.withLock { $0.blocking -= 1 } }
        return body()
    }

    /// Whether the calling thread is one of this pool's.
    var isCurrentThread: Bool {
        PoolThreadMarker.current == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Thread counts, for tests and the benchmark.
    var statistics: (current: Int, peak: Int, started: Int) {
        state.withLock { ($0.threads, $0.peakThreads, $0.started) }
    }

    /// How often the system refused a new thread (each refusal is retried).
    var startFailures: Int { state.withLock { $0.threadStartFailures } }

    private func startThread(number: Int) {
        let name = "\(Self.threadNamePrefix)\(number)"
        let start = Unmanaged.passRetained(ThreadStart { [self] in
            Thread.current.name = name
            SDKThreadMarker.markCurrentThread(number: number)
            PoolThreadMarker.markCurrentThread(pool: Unmanaged.passUnretained(self).toOpaque())
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
        state.withLock { $0.threadStartFailures += 1 }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { [self] in startThread(number: number) }
    }

    /// A pool thread's loop: take a job (or wait for one, up to `keepAlive`), run it after the
    /// lock is released; exit when idle for `keepAlive` with nothing queued.
    private func run() {
        while let job = nextJob() { job() }
    }

    /// The next job for this thread, or `nil` when it should exit.
    private func nextJob() -> Job? {
        var waited = false
        return state.wait { state, timedOut -> ConditionLockedValue<State>.Decision<Job?> in
            if waited {
                waited = false
                if state.wakeups > 0 {
                    state.wakeups -= 1
                } else {
                    state.idle -= 1
                    if timedOut && state.jobs.isEmpty {
                        state.threads -= 1
                        return .done(nil)
                    }
                }
            }
            if let job = state.jobs.popFirst() { return .done(job) }
            state.idle += 1
            waited = true
            return .wait(timeout: keepAlive)
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

/// A FIFO of jobs with O(1) amortised append and pop.
struct JobQueue: Sendable {
    private var items: [WorkerPool.Job?] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }

    mutating func append(_ job: @escaping WorkerPool.Job) { items.append(job) }

    mutating func popFirst() -> WorkerPool.Job? {
        guard head < items.count else { return nil }
        let job = items[head]
        items[head] = nil
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return job
    }
}

/// Which pool the calling thread belongs to, in thread-specific storage. The pool outlives its
/// threads (each thread's body holds it), so the pointer never dangles while its thread runs.
enum PoolThreadMarker {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    static func markCurrentThread(pool: UnsafeMutableRawPointer) {
        let status = pthread_setspecific(key, pool)
        precondition(status == 0, "pthread_setspecific failed: \(status)")
    }

    static var current: UnsafeMutableRawPointer? { pthread_getspecific(key) }
}

/// Marks the pool's threads in thread-specific storage, so code can ask whether it runs on one.
enum SDKThreadMarker {
    // Created once, process-wide, before any worker starts (a `static let` is initialised once,
    // thread-safely). A non-nil value under the key marks an SDK thread.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    static func markCurrentThread(number: Int) {
        let status = pthread_setspecific(key, UnsafeRawPointer(bitPattern: max(1, number)))
        precondition(status == 0, "pthread_setspecific failed: \(status)")
    }

    static var isMarked: Bool { pthread_getspecific(key) != nil }

    /// `IdpSdk-N` on the pool's thread number N, else `nil`. Read from thread-specific storage,
    /// not the thread's name, which Foundation does not always report on Linux.
    static var currentName: String? {
        guard let marker = pthread_getspecific(key) else { return nil }
        return "\(WorkerPool.threadNamePrefix)\(Int(bitPattern: marker))"
    }
}
