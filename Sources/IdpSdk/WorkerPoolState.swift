import IdpPrimitives

extension WorkerPool {
    /// The pool's state, one value beside its storage (the pool's ``ConditionLockedValue``):
    /// changed only by the events below, each of which returns what the pool does after the lock.
    struct State: Sendable {
        fileprivate(set) var jobs = JobQueue()
        /// Threads waiting on the condition that no submit has reserved.
        fileprivate(set) var idle = 0
        /// Signals sent to waiting threads and not yet consumed. Invariant: `idle + wakeups` is the
        /// number of threads waiting on the condition.
        fileprivate(set) var wakeups = 0
        fileprivate(set) var threads = 0
        /// Threads inside ``WorkerPool/mayBlock(_:)``.
        fileprivate(set) var blocking = 0
        /// Threads spinning for a job outside the lock (at most one). A submit leaves as many
        /// queued jobs as there are spinners to them, without a wake-up.
        fileprivate(set) var spinning = 0
        /// Signals sent to sleeping threads, in all.
        fileprivate(set) var signalled = 0
        /// Whether the process leaves a core idle, so a thread may spin.
        fileprivate(set) var gate: SpinGate
        fileprivate(set) var peakThreads = 0
        fileprivate(set) var started = 0
        fileprivate(set) var threadStartFailures = 0
    }
}

/// The pool's decisions, as a value: each event (a submit, a thread entering or leaving code that
/// may block, a thread looking for work) changes the state and returns what the pool does after
/// the lock. Tested as a value, without threads.
extension WorkerPool.State {
    /// The pool's bounds.
    struct Limits: Sendable {
        /// The most threads running code that cannot block.
        var concurrency: Int
        /// The most threads in all.
        var maximumThreads: Int
    }

    /// What a submit or a thread entering blocking code does after the lock: wake an idle thread,
    /// start one (with this number), or nothing (the job waits for a busy thread).
    enum SubmitAction: Equatable { case wake, start(number: Int), queue }

    /// What a thread looking for work does.
    enum Look {
        /// Run this job (after the lock).
        case run(WorkerPool.Job)
        /// Spin for a job outside the lock.
        case spin
        /// Yield the core once outside the lock, then look again: the gate refuses a spin.
        case yieldOnce
        /// Exit: idle for the keep-alive with nothing queued.
        case exit
        /// Wait on the condition, up to the keep-alive.
        case sleep
    }

    /// A job was submitted.
    mutating func submit(_ job: @escaping WorkerPool.Job, limits: Limits) -> SubmitAction {
        jobs.append(job)
        if jobs.count <= spinning { return .queue }
        if idle > 0 {
            idle -= 1
            wakeups += 1
            signalled += 1
            return .wake
        }
        return startIfUnderLimits(limits)
    }

    /// A pool thread enters code that may block: it no longer counts against the concurrency, so
    /// queued jobs may need another thread.
    mutating func enterBlocking(limits: Limits) -> SubmitAction {
        blocking += 1
        guard jobs.count > spinning, idle == 0 else { return .queue }
        return startIfUnderLimits(limits)
    }

    /// The pool thread left code that may block.
    mutating func leaveBlocking() { blocking -= 1 }

    /// The system refused a thread (its slot stays reserved; the start is retried).
    mutating func threadStartFailed() { threadStartFailures += 1 }

    /// The slots of the ring the queue grows into next, to make after the lock; `nil` for none.
    mutating func takeSpareRequest() -> Int? { jobs.takeSpareRequest() }

    /// Takes `ring`, made after the lock, as the queue's spare if it still fits; what it leaves
    /// is released after the lock.
    mutating func installSpare(_ ring: inout JobQueue.Ring?) { jobs.install(&ring) }

    /// Whether the gate lets a thread spin, given `reading`.
    mutating func allowsSpin(_ reading: SpinGate.Reading) -> Bool { gate.allowsSpin(reading) }

    /// A spinning thread stopped spinning (or yielding) after `spent` nanoseconds of CPU time.
    mutating func spinEnded(spent: UInt64) {
        spinning -= 1
        gate.spent(spent)
    }

    /// Starts a thread if fewer than `concurrency` run non-blocking code and the pool is below
    /// `maximumThreads`.
    private mutating func startIfUnderLimits(_ limits: Limits) -> SubmitAction {
        guard threads - blocking < limits.concurrency, threads < limits.maximumThreads else { return .queue }
        threads += 1
        peakThreads = max(peakThreads, threads)
        started += 1
        return .start(number: started)
    }

    /// A thread looks for work, after `wake` (its first look, or after waiting on the condition).
    /// With the queue empty it spins if it still may, no other thread spins and the gate may allow
    /// it at wall time `now`, or yields its core once if the gate refuses; else it sleeps (exits
    /// once a wait timed out with nothing queued).
    mutating func lookForWork(after wake: ConditionLockedValue<Self>.Wake, mayStillSpin: Bool, now: UInt64) -> Look {
        if wake != .first {
            if wakeups > 0 {
                wakeups -= 1
            } else {
                idle -= 1
                if wake == .timedOut && jobs.isEmpty {
                    threads -= 1
                    return .exit
                }
            }
        }
        if let job = jobs.popFirst() { return .run(job) }
        if mayStillSpin && spinning == 0 {
            // Counted as a spinner while it yields too: a submit meanwhile leaves it the job.
            spinning += 1
            return gate.mayAllow(at: now) ? .spin : .yieldOnce
        }
        idle += 1
        return .sleep
    }
}
