import Dispatch
import Foundation
import IdpPrimitives

/// The SDK's own OS threads, on which providers and completion handlers run.
///
/// Elastic: a job goes to an idle thread if there is one, else a new thread is started (up to
/// `maximumThreads`), so a provider that blocks holds only its own thread. Idle threads exit after
/// `keepAlive`. Past `maximumThreads` jobs wait in FIFO order.
///
/// This is a primitive, so it is `@unchecked Sendable`: every mutable stored property (`jobs`,
/// `idle`, `wakeups`, `threads`, `peakThreads`) is read and written only between
/// `condition.lock()` and `condition.unlock()`; the rest are `let`s of Sendable types. No job runs
/// while the lock is held.
final class WorkerPool: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    /// Thread names are `IdpSdk-N`: Linux keeps at most 15 characters of a thread name.
    static let threadNamePrefix = "IdpSdk-"

    private let condition = ConditionLock(label: "IdpSdk.WorkerPool")
    private var jobs = JobQueue()
    /// Threads waiting on the condition that no submit has reserved.
    private var idle = 0
    /// Signals sent to waiting threads and not yet consumed. Invariant: `idle + wakeups` is the
    /// number of threads waiting on the condition.
    private var wakeups = 0
    private var threads = 0
    private var peakThreads = 0
    private var started = 0
    private var threadStartFailures = 0
    let maximumThreads: Int
    let keepAlive: TimeInterval
    let stackSize: Int

    init(maximumThreads: Int, keepAlive: Duration, stackSize: Int = 4 << 20) {
        precondition(maximumThreads > 0, "WorkerPool needs at least one thread")
        self.maximumThreads = maximumThreads
        self.keepAlive = max(0.001, keepAlive.timeInterval)
        self.stackSize = stackSize
    }

    /// Runs `job` on a pool thread, soon. Never runs it on the calling thread.
    func submit(_ job: @escaping Job) {
        condition.lock()
        jobs.append(job)
        var spawn = false
        var number = 0
        if idle > 0 {
            idle -= 1
            wakeups += 1
            condition.signal()
        } else if threads < maximumThreads {
            threads += 1
            peakThreads = max(peakThreads, threads)
            started += 1
            number = started
            spawn = true
        }
        condition.unlock()
        if spawn { startThread(number: number) }
    }

    /// Thread counts, for tests and the benchmark.
    var statistics: (current: Int, peak: Int, started: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (threads, peakThreads, started)
    }

    /// How often the system refused a new thread (each refusal is retried).
    var startFailures: Int {
        condition.lock()
        defer { condition.unlock() }
        return threadStartFailures
    }

    private func startThread(number: Int) {
        let name = "\(Self.threadNamePrefix)\(number)"
        let start = Unmanaged.passRetained(ThreadStart { [self] in
            Thread.current.name = name
            SDKThreadMarker.markCurrentThread(number: number)
            run()
        })
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
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
        start.release()
        condition.lock()
        threadStartFailures += 1
        condition.unlock()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { [self] in startThread(number: number) }
    }

    private func run() {
        condition.lock()
        while true {
            if let job = jobs.popFirst() {
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            idle += 1
            let signalled = condition.wait(seconds: keepAlive)
            if wakeups > 0 {
                wakeups -= 1
            } else {
                idle -= 1
                if !signalled && jobs.isEmpty {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
        }
    }
}

/// What a new pool thread runs; passed through `pthread_create`'s argument.
private final class ThreadStart {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// A FIFO of jobs with O(1) amortised append and pop.
private struct JobQueue {
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
