#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A lock with `NSLock`'s shape (``lock()``, ``unlock()``, ``try()``, ``withLock(_:)``, and
/// `NSLocking`) that the conformance kit's controlled phase sees: replace `NSLock()` with
/// `ControlledLock()` and the kit explores, and replays, the orders in which your provider's
/// threads take it.
///
/// ```swift
/// private let lock = ControlledLock()   // was: NSLock()
/// lock.lock(); defer { lock.unlock() }
/// ```
///
/// Outside the kit's controlled phase it is a plain pthread mutex (ThreadSanitizer sees it) and
/// costs one relaxed load more. Inside it, taking, trying and releasing it are points where the
/// kit's scheduler may run another of its threads, and a thread asking for it while another of
/// them holds it waits for that one's release. Like `NSLock`: not reentrant, and unlocked by the
/// thread that locked it. Every pthread call's result is checked.
public final class ControlledLock: NSLocking, @unchecked Sendable {
    // Sound as Sendable: its only stored property is a `let` pointer passed only to the
    // thread-safe pthread mutex functions.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let instrumentation = InstrumentationWord()
    /// The lock's name in a controlled run's schedule.
    public let name: String

    /// A new, unlocked lock.
    /// - Parameter name: Names the lock in the kit's schedules and verdicts.
    public init(name: String = "ControlledLock") {
        self.name = name
        mutex = PthreadMutex.make(adaptive: false)
    }

    deinit {
        PthreadMutex.destroy(mutex)
    }

    /// Takes the lock, waiting as long as another thread holds it.
    public func lock() {
        let flags = instrumentation.flags
        if _slowPath(flags != 0) {
            _ = LockHooks.acquire(hooked, flags: flags)
            return
        }
        PthreadMutex.lock(mutex)
    }

    /// Takes the lock if no thread holds it; returns whether it did.
    public func `try`() -> Bool {
        let flags = instrumentation.flags
        if _slowPath(flags != 0) { return LockHooks.tryAcquire(hooked, flags: flags) }
        return pthread_mutex_trylock(mutex) == 0
    }

    /// Releases the lock.
    public func unlock() {
        let flags = instrumentation.flags
        if _slowPath(flags != 0) { return LockHooks.releaseUnprofiled(hooked, flags: flags) }
        PthreadMutex.unlock(mutex)
    }

    /// This lock as ``LockHooks`` sees it: never profiled.
    private var hooked: LockHooks.Lock { LockHooks.Lock(ObjectIdentifier(self), name: .given(name), site: nil, mutex: mutex) }

    /// Runs `body` holding the lock and returns what it returns.
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
