#if DEBUG
import Foundation
import IdpHarness
import IdpPrimitives
import Synchronization
import Testing
import TestSupport

/// A free run beside work that holds every Swift concurrency thread, as a busy test suite does:
/// its MC events, and the tasks the MC starts itself, run on the run's own threads.
@Suite("Free-running stress beside work that holds the Swift concurrency pool", .serialized, .heavy)
struct FreeRunPoolTests {
    /// Spinning tasks, enough to keep every thread of the Swift concurrency pool busy, until
    /// ``release()``: work that never suspends, as a long synchronous test body does. Made on a
    /// thread outside the pool, which then waits until every pool thread spins
    /// (``waitUntilEveryPoolThreadSpins()``), so that no job queued after that (at any priority)
    /// finds a free pool thread before the hold ends.
    final class PoolHold: Sendable {
        private let released = Atomic<Bool>(false)
        private let spinning = Atomic<Int>(0)

        init() {
            for _ in 0..<(2 * ProcessInfo.processInfo.activeProcessorCount) {
                Task.detached { [self] in
                    spinning.add(1, ordering: .relaxed)
                    while !released.load(ordering: .relaxed) {}
                }
            }
        }

        /// Blocks the calling thread (one outside the pool) until every pool thread spins; returns
        /// whether they did before the deadline for a stuck run.
        func waitUntilEveryPoolThreadSpins() -> Bool {
            let poolThreads = ProcessInfo.processInfo.activeProcessorCount
            return pollOnThisThread(within: stuckRunDeadline, every: 1_000) { spinning.load(ordering: .relaxed) >= poolThreads }
        }

        func release() { released.store(true, ordering: .relaxed) }
    }

    /// Runs each job on a new OS thread: where this test awaits the run, so that its own
    /// resumption does not wait for the pool it holds.
    final class ThreadPerJob: TaskExecutor {
        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            Thread.detachNewThread { job.runSynchronously(on: executor) }
        }
    }

    /// One free run of one device (activation, then a login) while the pool is held, with `bug`
    /// planted; the guard ends a run that waits for the pool for `guardLimit`.
    static func runWhileThePoolIsHeld(_ bug: PlantedBug?, guardLimit: Duration) async -> (report: SystemStress.Report, held: Bool) {
        var options = SystemStress.Options(seed: 11, runs: 1, flows: 1, users: 1, stepsPerFlow: 1, mix: [.login: 1], strategy: nil)
        options.faultRates = [:]
        options.guardLimit = guardLimit
        // The pool is held from a thread of the test's own, so that nothing here waits for it.
        return await withTaskExecutorPreference(ThreadPerJob()) {
            let hold = PoolHold()
            defer { hold.release() }
            let held = hold.waitUntilEveryPoolThreadSpins()
            let report = await PlantedBugSwitch.$inTask.withValue(PlantedBugSwitch(bug)) { await SystemStress.run(options) }
            return (report, held)
        }
    }

    @Test("a free run's MC events go on while other work holds every pool thread; planted on the pool, they wait for it and the run ends undecided")
    func runsOnItsOwnThreads() async {
        // Given every pool thread held, when a free run activates a device and logs it in
        let (report, held) = await Self.runWhileThePoolIsHeld(nil, guardLimit: .seconds(60))
        // Then its events were answered and every invariant held, with no run left undecided
        #expect(held, "the pool threads did not all spin before the deadline")
        #expect(report.passed && report.undecidedFreeRuns == 0, "\(report)")
        #expect(report.mcEvents > 0, "\(report)")
        // And with its tasks planted on the pool, the first event waits until the guard ends the run
        let (planted, heldForPlanted) = await Self.runWhileThePoolIsHeld(.harnessFreeRunTasksOnThePool, guardLimit: .seconds(2))
        #expect(heldForPlanted, "the pool threads did not all spin before the deadline")
        #expect(planted.undecidedFreeRuns == 1, "\(planted)")
    }
}
#endif
