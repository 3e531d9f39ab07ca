import Foundation
import IdpPrimitives

/// The OS threads the controlled phase runs its participants on, kept from one schedule to the
/// next.
///
/// A schedule lasts a few milliseconds, and starting and ending its three or four threads was a
/// large part of that: under ThreadSanitizer each start maps and each end unmaps the thread's
/// shadow memory, and an unmap interrupts every core. The SDK calls a provider on threads it
/// keeps, too, so a provider that keeps something per thread meets reused threads here as it does
/// there.
///
/// A thread runs the bodies given to it one after another. One that stays in a body for good (a
/// deadlocked schedule's participants stay parked) is not given another; a body finds an idle
/// thread or starts one. An idle thread ends after `keepAlive`.
///
/// The pool's state is a value (``State``) under one lock; a thread is started, and a body run,
/// after the lock is released.
final class ParticipantThreads: Sendable {
    typealias Body = @Sendable () -> Void

    /// The threads of every controlled schedule in the process (they run one at a time).
    static let shared = ParticipantThreads(keepAlive: .seconds(5))

    /// A body and the name its thread takes while running it.
    struct Job: Sendable {
        let name: String
        let body: Body
    }

    /// The pool's decisions, as a value. Every body has a thread of its own at once: a submit
    /// reserves an idle thread for it, or starts one (a schedule's participants wait for each
    /// other, so two of them queued behind one thread would never both run).
    struct State: Sendable {
        /// Bodies given to reserved threads, not yet taken.
        var jobs: [Job] = []
        /// Waiting threads no submit has reserved.
        var idle = 0
        /// Reserved waiting threads: signals sent whose body is not yet taken. Invariant:
        /// `idle + wakeups` threads wait, and `jobs.count == wakeups`.
        var wakeups = 0
        var threads = 0
        var started = 0

        /// A body was given. `true`: start a thread for it (it is not queued); `false`: it was
        /// queued for a reserved thread, which must be signalled.
        mutating func submit(_ job: Job) -> Bool {
            guard idle > 0 else {
                threads += 1
                started += 1
                return true
            }
            idle -= 1
            wakeups += 1
            jobs.append(job)
            return false
        }

        /// A thread finished its body and waits for the next.
        mutating func finished() {
            idle += 1
        }

        /// A waiting thread woke (or looks before its first wait): it takes a queued body, if
        /// there is one.
        mutating func woke() -> Job? {
            if !jobs.isEmpty {
                wakeups -= 1
                return jobs.removeFirst()
            }
            return nil
        }

        /// A waiting thread whose wait ran out leaves the pool if an unreserved one may.
        mutating func leaves() -> Bool {
            guard idle > 0 else { return false }
            idle -= 1
            threads -= 1
            return true
        }
    }

    private let state = ConditionLockedValue(State())
    let keepAlive: Duration

    init(keepAlive: Duration) {
        self.keepAlive = keepAlive
    }

    /// Runs `body` on a thread of its own, named `name` meanwhile, at once; never on the calling
    /// thread.
    func run(_ name: String, _ body: @escaping Body) {
        let job = Job(name: name, body: body)
        guard state.withLock({ $0.submit(job) }) else {
            state.signal()
            return
        }
        // The thread's closure lives as long as the thread: it holds the slot, which the thread
        // empties, not the body.
        let first = LockedValue<Job?>(job)
        let thread = Thread { [self] in work(first: first) }
        thread.stackSize = OSThreads.defaultStackSize
        thread.start()
    }

    /// Threads in the pool, of them waiting, and started in all, for tests.
    var statistics: (threads: Int, waiting: Int, started: Int) {
        state.withLock { ($0.threads, $0.idle + $0.wakeups, $0.started) }
    }

    /// Runs the body in `first`, then each body given to the thread, until it leaves the pool.
    private func work(first: LockedValue<Job?>) {
        var next = first.withLock { $0.take() }
        while true {
            // The body is let go before the thread waits: an idle thread holds nothing of the
            // schedule it ran (its world, its participants) for its keep-alive.
            if let job = next {
                Thread.current.name = job.name
                job.body()
            }
            next = nil
            Thread.current.name = "IdpHarness-idle"
            state.withLock { $0.finished() }
            next = state.wait { state, wake in
                if let job = state.woke() { return .done(job) }
                if wake == .timedOut, state.leaves() { return .done(nil) }
                return .wait(timeout: keepAlive)
            }
            if next == nil { return }
        }
    }
}
