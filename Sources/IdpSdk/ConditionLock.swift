import IdpPrimitives
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with a condition variable: what `NSCondition` is, plus `tryLock` (which
/// swift-corelibs-foundation's `NSCondition` lacks) so that ``LockProfiler`` can count contention.
final class ConditionLock {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let site: LockProfiler.Site

    init(label: String) {
        site = LockProfiler.Site(label: label)
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        let mutexStatus = pthread_mutex_init(mutex, nil)
        let conditionStatus = pthread_cond_init(condition, nil)
        precondition(mutexStatus == 0 && conditionStatus == 0, "pthread init failed: \(mutexStatus), \(conditionStatus)")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() {
        site.acquire(tryLock: { pthread_mutex_trylock(mutex) == 0 }, lock: {
            let status = pthread_mutex_lock(mutex)
            precondition(status == 0, "pthread_mutex_lock failed: \(status)")
        })
    }

    func unlock() {
        let status = pthread_mutex_unlock(mutex)
        precondition(status == 0, "pthread_mutex_unlock failed: \(status)")
    }

    /// Wakes one waiter. Call with the lock held.
    func signal() { pthread_cond_signal(condition) }

    /// Releases the lock, waits for a signal or until `seconds` have passed, and takes the lock
    /// again. Returns `false` on timeout. Call with the lock held.
    func wait(seconds: Double) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let whole = Int(seconds)
        var nanoseconds = Int(now.tv_nsec) + Int((seconds - Double(whole)) * 1e9)
        var deadline = now
        deadline.tv_sec += whole + nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        deadline.tv_nsec = numericCast(nanoseconds)
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }
}
