import Dispatch
import Foundation
import IdpPrimitives
import Synchronization

/// A pool thread's identity and inline depth, in thread-specific storage: so code can ask
/// whether it runs on an SDK thread, on which pool's, and how deeply nested inline steps are.
///
/// Owned by its thread: only that thread reads or writes it (through ``current``); the key's
/// destructor releases it when the thread exits.
final class PoolThread {
    /// The pool's identity (never dereferenced).
    let pool: UnsafeMutableRawPointer
    /// N of the thread's name `IdpSdk-N`.
    let number: Int
    /// Inline steps nested on this thread's stack (see ``WorkerPool/enterInline()``).
    var inlineDepth = 0

    private init(pool: UnsafeMutableRawPointer, number: Int) {
        self.pool = pool
        self.number = number
    }

    private static let records = ThreadSpecific<PoolThread>()

    /// Marks the calling thread as thread `number` of `pool`.
    static func markCurrentThread(pool: UnsafeMutableRawPointer, number: Int) {
        records.set(PoolThread(pool: pool, number: max(1, number)))
    }

    /// The calling thread's record, or `nil` if it is not a pool thread.
    static var current: PoolThread? { records.value }
}

@available(*, unavailable, message: "a pool thread's record belongs to its thread")

extension PoolThread: Sendable {}

/// Whether the calling thread is an SDK thread, and its name.
enum SDKThreadMarker {
    static var isMarked: Bool { PoolThread.current != nil }

    /// `IdpSdk-N` on the pool's thread number N, else `nil`. Read from thread-specific storage,
    /// not the thread's name, which Foundation does not always report on Linux.
    static var currentName: String? {
        guard let thread = PoolThread.current else { return nil }
        return "\(WorkerPool.threadNamePrefix)\(thread.number)"
    }
}
