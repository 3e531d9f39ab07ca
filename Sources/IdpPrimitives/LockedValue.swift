#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that can be reached only while its lock is held: the only door is ``withLock(_:)``.
///
/// ```swift
/// let sessions = LockedValue<[String: Session]>([:])
/// sessions.withLock { $0["abc"] = session }
/// ```
///
/// Why not `Mutex` from Synchronization, the house default: on this Linux toolchain `Mutex` locks
/// with raw futex system calls that ThreadSanitizer cannot see, so under `--sanitize=thread` every
/// `Mutex`-protected access is reported as a race (four threads appending to a `Mutex<[Int]>` give
/// "Swift access race" although the count is right). `pthread_mutex_lock` is intercepted by
/// ThreadSanitizer, so a race it reports here is a real one. Uncontended, the two cost the same
/// (a compare-and-swap each way); `idp-bench` measures both.
///
/// Give it a `label` to have the package's lock profiler (`LockProfiler`, behind `idp-bench`'s
/// contention and hold-time figures) count its contention and time its holds. In the conformance
/// kit's controlled phase, each acquisition and release is a point where the kit's scheduler may
/// run another of its threads. Outside both it costs one relaxed load.
///
/// Hold it for nanoseconds: decide under the lock, act after it. Not reentrant.
public final class LockedValue<Value> {
    // Inlinable (with its stored properties usable from inline code) so that callers in other
    // modules get `withLock` specialized for their value and closure: no generic metadata, no
    // indirect call on the hot path.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Unchecked exclusivity: every access is inside `withLock`, under the mutex, so accesses
    // cannot overlap; the dynamic check would cost a thread-local lookup per call.
    @usableFromInline @exclusivity(unchecked) var value: Value
    /// Where ``LockProfiler`` counts this lock, or `nil` for a lock that is not profiled.
    @usableFromInline let site: LockProfiler.Site?
    @usableFromInline let instrumentation = InstrumentationWord()

    /// Creates a lock around `value`.
    /// - Parameters:
    ///   - value: The value the lock guards; reach it only through ``withLock(_:)``.
    ///   - label: Names the lock in `LockProfiler`'s contention figures; unlabelled locks are
    ///     not profiled.
    public convenience init(_ value: Value, label: String? = nil) {
        self.init(value, site: label.map(LockProfiler.Site.init(label:)))
    }

    /// Creates a lock around `value`, counted under a shared profiler site.
    /// - Parameters:
    ///   - value: The value the lock guards; reach it only through ``withLock(_:)``.
    ///   - site: A ``LockProfiler/Site`` made once and shared by many locks: what a lock
    ///     made per request or per flow uses, since registering a label takes the profiler's lock.
    package init(_ value: Value, site: LockProfiler.Site?) {
        self.value = value
        self.site = site
        mutex = PthreadMutex.make(adaptive: true)
    }

    deinit {
        PthreadMutex.destroy(mutex)
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    /// - Warning: Never call out (a provider, a completion handler, a continuation) from `body`.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        // One relaxed load of the process's instrumentation word (0, the usual case: none); when it
        // is on, the lock is taken and released through ``LockHooks``. `body` is called in one
        // place: on a path of its own per case, this function grows too large to inline, or
        // retains what `body` captures.
        let acquisition: LockHooks.Acquisition
        let flags = instrumentation.flags
        if _slowPath(flags != 0) {
            acquisition = LockHooks.acquire(hooked, flags: flags)
        } else {
            lock()
            acquisition = .plain
        }
        defer {
            if _slowPath(acquisition != .plain) { LockHooks.release(hooked, acquisition) } else { unlock() }
        }
        return try body(&value)
    }

    /// This lock as ``LockHooks`` sees it.
    @usableFromInline
    var hooked: LockHooks.Lock { LockHooks.Lock(ObjectIdentifier(self), name: .generic("LockedValue", Value.self), site: site, mutex: mutex) }

    /// ``withLock(_:)`` that is never a controlled run's point, nor profiled: for the bookkeeping of
    /// controlled runs themselves.
    func withPlainLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock()
        defer { unlock() }
        return body(&value)
    }

    @inlinable
    func lock() { PthreadMutex.lock(mutex) }

    @inlinable
    func unlock() { PthreadMutex.unlock(mutex) }
}

// Sound because `value` is read and written only inside `withLock`, between pthread_mutex_lock and
// pthread_mutex_unlock of the mutex this instance owns, and `mutex` itself is a `let` that is only
// passed to the pthread functions, which are thread-safe. A `Value` that is `Sendable` may then be
// handed across threads through it.
extension LockedValue: @unchecked Sendable where Value: Sendable {}

/// Makes and destroys the pthread mutexes of ``LockedValue`` and ``ControlledLock``, and takes and
/// releases those of every house lock (``ConditionLockedValue``'s too), checking every call.
@usableFromInline
enum PthreadMutex {
    /// Takes `mutex`, waiting as long as another thread holds it.
    @inlinable
    static func lock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "pthread_mutex_lock failed: \(status)")
    }

    /// Releases `mutex`.
    @inlinable
    static func unlock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        let status = pthread_mutex_unlock(mutex)
        precondition(status == 0, "pthread_mutex_unlock failed: \(status)")
    }

    /// A new, unlocked mutex; `adaptive`: on Linux, a thread that finds it held spins briefly
    /// before it sleeps (critical sections here are nanoseconds long, so the holder is usually done
    /// before the spin is).
    static func make(adaptive: Bool) -> UnsafeMutablePointer<pthread_mutex_t> {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if os(Linux)
        if adaptive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP)) }
        #endif
        let status = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        return mutex
    }

    /// Destroys and frees `mutex`.
    static func destroy(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        let status = pthread_mutex_destroy(mutex)
        precondition(status == 0, "pthread_mutex_destroy failed: \(status)")
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }
}
