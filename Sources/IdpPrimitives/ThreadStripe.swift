#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// A small number that stays with the calling OS thread: the stripe of striped state (a
/// ``StripedCounter``, a sharded table) the thread uses, so that threads running at once on
/// different cores write different cache lines.
///
/// Threads get numbers 0, 1, 2, … in the order they first ask; a thread keeps its number for
/// its life. Asking costs one thread-specific read; only a thread's first ask writes shared
/// memory (the next number to hand out).
///
/// ```swift
/// let shard = shards[ThreadStripe.current % shards.count]
/// ```
package enum ThreadStripe {
    /// The next number to hand out. Written once per thread, at its first ``current``.
    private static let next = Atomic<Int>(0)

    // Created once, process-wide (a `static let` is initialised once, thread-safely). The value
    // stored per thread is its number plus one, as a pointer's bits: nothing to free.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// The calling thread's number, from 0.
    package static var current: Int {
        if let stored = pthread_getspecific(key) { return Int(bitPattern: stored) - 1 }
        let number = next.wrappingAdd(1, ordering: .relaxed).oldValue & (Int.max >> 1)
        _ = pthread_setspecific(key, UnsafeRawPointer(bitPattern: number + 1))
        return number
    }

    /// How many stripes striped state of this process uses: the next power of two at or above
    /// four times the cores it may run on (``Processors/available``), from 8 to 256, chosen when
    /// the process starts. Four per core keeps two threads that run at once on one stripe rare
    /// without a registry of which thread runs where.
    package static let count: Int = {
        let wanted = max(8, min(256, 4 * Processors.available))
        var count = 1
        while count < wanted { count <<= 1 }
        return count
    }()
}
