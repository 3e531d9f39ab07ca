import IdpPrimitives

/// The task executor the async participants of one stress run prefer, controlled or free: every
/// job of their tasks — and of the default actors they call, which run on a task's preferred
/// executor — runs on a thread of the kit's own (``ParticipantThreads``), never on the Swift
/// concurrency pool.
///
/// So an async participant's work is where the run can see it: the executor knows how many of the
/// run's jobs are queued or running and on which threads, and the scheduler's watchdog asks the OS
/// about those threads as it does about a thread participant's. A pool kept busy by other work
/// (the rest of a test suite) cannot hold the run back, and an async participant that has the turn
/// while none of its jobs is queued or running is suspended on something outside the run.
final class RunExecutor: TaskExecutor {
    private struct State {
        /// Jobs handed over and not yet done.
        var inFlight = 0
        /// The threads running one of the run's jobs now, by thread id: how many each.
        var threads: [Int32: Int] = [:]
    }

    private let state = LockedValue(State())

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.inFlight += 1 }
        ParticipantThreads.shared.run("IdpHarness-task") { [self] in
            let tid = ThreadActivity.currentThreadID
            state.withLock { $0.threads[tid, default: 0] += 1 }
            job.runSynchronously(on: asUnownedTaskExecutor())
            state.withLock { state in
                state.inFlight -= 1
                state.threads[tid] = state.threads[tid] == 1 ? nil : (state.threads[tid] ?? 1) - 1
            }
        }
    }

    /// The run's jobs handed over and not yet done, and the threads running one now.
    var work: (inFlight: Int, threads: [Int32]) {
        state.withLock { ($0.inFlight, $0.threads.keys.sorted()) }
    }

    /// How many of the run's jobs were handed over and have no thread running them yet.
    var unstarted: Int {
        state.withLock { state in state.threads.values.reduce(state.inFlight) { $0 - $1 } }
    }
}
