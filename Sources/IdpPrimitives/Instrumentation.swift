import Synchronization

/// The one word every lock of the package reads before it takes its lock: which instrumentation
/// is on in the process. 0 (the usual case) means none, and a lock goes straight to its mutex;
/// the word is written only when lock profiling starts or stops, or a controlled run begins or
/// ends, so threads read it from their own caches.
@usableFromInline
package enum Instrumentation {
    /// ``profiling`` and ``controlled`` bits.
    @usableFromInline static let flags = Atomic<UInt8>(0)
    /// `LockProfiler` is counting.
    @usableFromInline static let profiling: UInt8 = 1
    /// A controlled run (``ControlPoints``) is in progress.
    @usableFromInline static let controlled: UInt8 = 2

    /// The flags now: one relaxed load.
    @inlinable
    static var current: UInt8 { flags.load(ordering: .relaxed) }

    /// Sets or clears `flag`.
    static func set(_ flag: UInt8, _ on: Bool) {
        if on {
            flags.bitwiseOr(flag, ordering: .releasing)
        } else {
            flags.bitwiseAnd(~flag, ordering: .releasing)
        }
    }
}
