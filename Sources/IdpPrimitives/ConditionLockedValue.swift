#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value inside a lock that threads can also wait on: ``LockedValue`` plus a condition variable.
///
/// ```swift
/// let queue = ConditionLockedValue<[Job]>([], label: "MyPool.queue")
/// queue.withLock { $0.append(job) }
/// queue.signal()
/// // a worker:
/// let next = queue.wait { jobs, _ in jobs.isEmpty ? .wait(timeout: nil) : .done(jobs.removeFirst()) }
/// ```
///
/// The value is reachable only under the lock, through ``withLock(_:)`` or ``wait(_:)``, whose
/// body decides, each time it runs, to return or to wait; while it waits the lock is released.
/// Timed waits use the monotonic clock on Linux, so a wall-clock jump neither shortens nor
/// lengthens them. Every pthread call's result is checked.
///
/// Give it a `label` to have `LockProfiler` count its contention (acquisitions through
/// ``withLock(_:)`` and ``wait(_:)``; re-acquisitions after a wait are not counted) and time its
/// holds (in ``wait(_:)``, each stretch between waits is one hold).
///
/// In the conformance kit's controlled phase, taking the lock, releasing it, waiting and signalling
/// are points of the kit's scheduler, which knows who holds the lock and who waits (see
/// ``LockedValue``); a timed wait ends by its timeout only when no other thread of the phase can
/// go on. Outside that phase each costs one relaxed load.
///
/// Hold it for nanoseconds: decide under the lock, act after it. Not reentrant.
public final class ConditionLockedValue<Value> {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let condition: UnsafeMutablePointer<pthread_cond_t>
    // Unchecked exclusivity: every access is inside one run of a body under the mutex.
    @usableFromInline @exclusivity(unchecked) var value: Value
    @usableFromInline let site: LockProfiler.Site?
    @usableFromInline let instrumentation = InstrumentationWord()

    /// What a ``ConditionLockedValue/wait(_:)`` body decides.
    public enum Decision<Result> {
        /// Release the lock and return `Result`.
        case done(Result)
        /// Release the lock until ``ConditionLockedValue/signal()`` or
        /// ``ConditionLockedValue/broadcast()`` (or a spurious wake-up), or until `timeout` has
        /// passed (`nil`: no limit); then run the body again, under the lock.
        case wait(timeout: Duration?)
    }

    /// Creates a lock with a condition variable around `value`.
    /// - Parameters:
    ///   - value: The value the lock guards.
    ///   - label: Names the lock in `LockProfiler`'s contention figures; unlabelled locks are
    ///     not profiled.
    public init(_ value: Value, label: String? = nil) {
        self.value = value
        site = label.map(LockProfiler.Site.init(label:))
        mutex = UnsafeMutablePointer.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = UnsafeMutablePointer.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_mutexattr_t()
        Self.check(pthread_mutexattr_init(&attributes), "pthread_mutexattr_init")
        #if os(Linux)
        Self.check(pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP)), "pthread_mutexattr_settype")
        #endif
        Self.check(pthread_mutex_init(mutex, &attributes), "pthread_mutex_init")
        Self.check(pthread_mutexattr_destroy(&attributes), "pthread_mutexattr_destroy")
        var conditionAttributes = pthread_condattr_t()
        Self.check(pthread_condattr_init(&conditionAttributes), "pthread_condattr_init")
        #if os(Linux)
        Self.check(pthread_condattr_setclock(&conditionAttributes, CLOCK_MONOTONIC), "pthread_condattr_setclock")
        #endif
        Self.check(pthread_cond_init(condition, &conditionAttributes), "pthread_cond_init")
        Self.check(pthread_condattr_destroy(&conditionAttributes), "pthread_condattr_destroy")
    }

    deinit {
        Self.check(pthread_cond_destroy(condition), "pthread_cond_destroy")
        Self.check(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        condition.deinitialize(count: 1)
        condition.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    /// - Warning: Never call out (a provider, a completion handler, a continuation) from `body`.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        // One relaxed load of the process's instrumentation word (0: none, the usual case).
        let flags = instrumentation.flags
        if _slowPath(flags & Instrumentation.controlled != 0), let control = ControlPoints.current(flags) { return try withControlledLock(control, body) }
        let hold = lock(flags)
        defer { unlock(hold) }
        return try body(&value)
    }

    /// Why a ``ConditionLockedValue/wait(_:)`` body runs.
    public enum Wake: Sendable, Equatable {
        /// Its first run: the caller has not waited yet.
        case first
        /// After a wait that ended by a signal (or a spurious wake-up).
        case woken
        /// After a wait that ended by its timeout.
        case timedOut
    }

    /// Runs `body` under the lock until it returns ``Decision/done(_:)``; each
    /// ``Decision/wait(timeout:)`` releases the lock until a signal or the timeout, and `body` then
    /// runs again, told by its ``Wake`` whether and how it waited: so what a body keeps about its
    /// own waiting lives in the value, not in variables beside it.
    ///
    /// Blocks the calling thread: call it only from a thread you own, never from a Swift task.
    /// - Returns: What `body` returned with ``Decision/done(_:)``.
    public func wait<Result>(_ body: (inout Value, Wake) -> Decision<Result>) -> Result {
        let flags = instrumentation.flags
        if flags & Instrumentation.controlled != 0, let control = ControlPoints.current(flags) { return controlledWait(control, body) }
        var hold = lock(flags)
        defer { unlock(hold) }
        var wake = Wake.first
        while true {
            switch body(&value, wake) {
            case .done(let result):
                return result
            case .wait(let timeout):
                // The wait releases the lock: what was held so far is one hold, and the lock taken
                // again on waking starts the next (not counted as an acquisition).
                let ended = hold.isProfiled ? LockProfiler.end(hold) : nil
                wake = waitForSignal(timeout: timeout) ? .timedOut : .woken
                if let ended { LockProfiler.record(ended) }
                if hold.isProfiled { hold = LockProfiler.resume(id: hold.id) }
            }
        }
    }

    /// Wakes one thread waiting in ``wait(_:)``. May be called with or without the lock held;
    /// change the value under the lock first, so a waiter that has not started waiting yet sees it.
    public func signal() {
        if instrumentation.flags & Instrumentation.controlled != 0 { ControlPoints.signal(ObjectIdentifier(self), all: false) }
        Self.check(pthread_cond_signal(condition), "pthread_cond_signal")
    }

    /// Wakes every thread waiting in ``wait(_:)``.
    public func broadcast() {
        if instrumentation.flags & Instrumentation.controlled != 0 { ControlPoints.signal(ObjectIdentifier(self), all: true) }
        Self.check(pthread_cond_broadcast(condition), "pthread_cond_broadcast")
    }

    /// The name a controlled run's schedule shows for this lock.
    private var controlName: String { "ConditionLockedValue<\(Value.self)>" }

    /// ``withLock(_:)`` on a participant's thread of a controlled run: acquiring is the run's
    /// point. Not profiled.
    @usableFromInline
    func withControlledLock<Result, Failure: Error>(_ control: ControlPoints.Context,
                                                    _ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try control.holding(ObjectIdentifier(self), name: controlName, take: lockNow, give: unlockNow) { () throws(Failure) -> Result in
            try body(&value)
        }
    }

    /// ``wait(_:)`` on a participant's thread of a controlled run: the run takes the lock from the
    /// waiter and gives it back once a signal (or, for a timed wait, nothing else left to run)
    /// ends the wait. Not profiled.
    private func controlledWait<Result>(_ control: ControlPoints.Context, _ body: (inout Value, Wake) -> Decision<Result>) -> Result {
        let id = ObjectIdentifier(self)
        control.acquire(id, name: controlName)
        lockNow()
        var wake = Wake.first
        while true {
            switch body(&value, wake) {
            case .done(let result):
                unlockNow()
                control.release(id, name: controlName)
                return result
            case .wait(let timeout):
                unlockNow()
                let timedOut = control.wait(on: id, releasing: id, name: controlName, timeout: timeout)
                lockNow()
                wake = timedOut ? .timedOut : .woken
            }
        }
    }

    /// Takes the lock; with the profiling bit in `flags` (``Instrumentation/current``), a labelled
    /// lock is profiled.
    @inlinable
    func lock(_ flags: UInt8) -> LockProfiler.Hold {
        if flags & Instrumentation.profiling != 0, let site {
            return site.acquire(counting: true, tryLock: { pthread_mutex_trylock(mutex) == 0 }, lock: lockNow)
        }
        lockNow()
        return .notProfiled
    }

    @inlinable
    func lockNow() {
        PthreadMutex.lock(mutex)
    }

    @inlinable
    func unlock(_ hold: LockProfiler.Hold) {
        guard hold.isProfiled else { return unlockNow() }
        let ended = LockProfiler.end(hold)
        unlockNow()
        LockProfiler.record(ended)
    }

    @inlinable
    func unlockNow() {
        PthreadMutex.unlock(mutex)
    }

    /// Waits with the lock held; returns whether the wait timed out.
    private func waitForSignal(timeout: Duration?) -> Bool {
        guard let timeout else {
            Self.check(pthread_cond_wait(condition, mutex), "pthread_cond_wait")
            return false
        }
        var now = timespec()
        #if os(Linux)
        Self.check(clock_gettime(CLOCK_MONOTONIC, &now), "clock_gettime")
        #else
        Self.check(clock_gettime(CLOCK_REALTIME, &now), "clock_gettime")
        #endif
        // Capped at a year, so "effectively forever" cannot overflow.
        let (seconds, attoseconds) = min(max(timeout, .zero), .seconds(365 * 24 * 3600)).components
        var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var deadline = now
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        deadline.tv_nsec = numericCast(nanoseconds)
        let status = pthread_cond_timedwait(condition, mutex, &deadline)
        precondition(status == 0 || status == ETIMEDOUT, "pthread_cond_timedwait failed: \(status)")
        return status == ETIMEDOUT
    }

    private static func check(_ status: Int32, _ function: String) {
        precondition(status == 0, "\(function) failed: \(status)")
    }
}

// Sound because `value` is read and written only inside `withLock` and `wait`, between
// pthread_mutex_lock and pthread_mutex_unlock (pthread_cond_wait releases and retakes the mutex
// between two runs of a body, never during one), and `mutex` and `condition` are `let`s passed only
// to the thread-safe pthread functions. A `Value` that is `Sendable` may then cross threads.
extension ConditionLockedValue: @unchecked Sendable where Value: Sendable {}
