#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

// The package's locks take their mutex straight while the instrumentation word is 0; while it is
// on, they go through the one hook layer below: a controlled run's point, or the profiler's count.

/// The one word every lock of the package reads before it takes its lock: which instrumentation
/// is on in the process. 0 (the usual case) means none, and a lock goes straight to its mutex;
/// the word is written only when lock profiling starts or stops, or a controlled run begins or
/// ends, so threads read it from their own caches. A lock keeps the word's address
/// (``InstrumentationWord``), read once when the lock is made.
@usableFromInline
package enum Instrumentation {
    /// The word: its cell made once, never freed.
    @usableFromInline static let word = InstrumentationWord(cell: {
        let cell = UnsafeMutablePointer<Atomic<UInt8>>.allocate(capacity: 1)
        cell.initialize(to: Atomic(0))
        return cell
    }())
    /// `LockProfiler` is counting.
    @usableFromInline static let profiling: UInt8 = 1
    /// A controlled run (``ControlPoints``) is in progress.
    @usableFromInline static let controlled: UInt8 = 2

    /// The flags now: one relaxed load, for code that keeps no ``InstrumentationWord``.
    @inlinable
    static var current: UInt8 { word.flags }

    /// Sets or clears `flag`.
    static func set(_ flag: UInt8, _ on: Bool) {
        if on {
            word.cell.pointee.bitwiseOr(flag, ordering: .releasing)
        } else {
            word.cell.pointee.bitwiseAnd(~flag, ordering: .releasing)
        }
    }
}

/// The instrumentation word as a lock keeps it: the cell's address, so that reading the flags
/// reads no global.
@usableFromInline
package struct InstrumentationWord: @unchecked Sendable {
    // Sound as Sendable: `cell` is a `let` address of an `Atomic` that is never freed, and it is
    // read and written only through the atomic's own operations.
    @usableFromInline let cell: UnsafeMutablePointer<Atomic<UInt8>>

    /// The process's word.
    @inlinable
    package init() { self = Instrumentation.word }

    init(cell: UnsafeMutablePointer<Atomic<UInt8>>) { self.cell = cell }

    /// ``Instrumentation``'s flags now: one relaxed load.
    @inlinable
    package var flags: UInt8 { cell.pointee.load(ordering: .relaxed) }
}

/// What the package's locks (``LockedValue``, ``ControlledLock``) do while instrumentation is on:
/// on a participant's thread of a controlled run (``ControlPoints``), taking and releasing are the
/// run's points, and a lock another participant holds is waited for through the run; otherwise a
/// labelled lock is profiled (``LockProfiler``), and any other is taken plainly.
@usableFromInline
package enum LockHooks {
    /// A lock as the hooks see it: its identity, its name in a run's schedule, its profiler site
    /// and its mutex.
    @usableFromInline
    package struct Lock {
        /// How a lock is named in a run's schedule: made only when a run asks.
        @usableFromInline
        package enum Name {
            /// `kind<Value>`.
            case generic(StaticString, Any.Type)
            /// A name given by the lock's owner.
            case given(String)

            var text: String {
                switch self {
                case .generic(let kind, let value): "\(kind)<\(value)>"
                case .given(let name): name
                }
            }
        }

        @usableFromInline let id: ObjectIdentifier
        @usableFromInline let name: Name
        @usableFromInline let site: LockProfiler.Site?
        @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

        @inlinable
        package init(_ id: ObjectIdentifier, name: Name, site: LockProfiler.Site?, mutex: UnsafeMutablePointer<pthread_mutex_t>) {
            self.id = id
            self.name = name
            self.site = site
            self.mutex = mutex
        }

        func lock() { PthreadMutex.lock(mutex) }

        func unlock() { PthreadMutex.unlock(mutex) }
    }

    /// How a lock was taken: plainly, through a controlled run, or profiled (the profiler's hold,
    /// whose bits are never 0 or 1).
    @usableFromInline
    package struct Acquisition: Equatable {
        @usableFromInline let bits: UInt64
        /// Taken plainly.
        @usableFromInline static var plain: Acquisition { Acquisition(bits: 0) }
        /// Taken through a controlled run.
        static var controlled: Acquisition { Acquisition(bits: 1) }
    }

    /// Takes `lock`: a participant of a controlled run asks the run first (a point; the run decides
    /// when the lock is the participant's), a labelled lock is profiled, any other is taken plainly.
    /// `flags` is the word as the lock read it.
    @usableFromInline
    package static func acquire(_ lock: Lock, flags: UInt8) -> Acquisition {
        if let control = ControlPoints.current(flags) {
            control.acquire(lock.id, name: lock.name.text)
            lock.lock()
            return .controlled
        }
        if let site = lock.site, flags & Instrumentation.profiling != 0 {
            return Acquisition(bits: site.acquire(counting: true, tryLock: { pthread_mutex_trylock(lock.mutex) == 0 }, lock: lock.lock).bits)
        }
        lock.lock()
        return .plain
    }

    /// Releases what ``acquire(_:)`` took: a controlled run is told after the unlock, a profiled
    /// hold ends before it and is counted after it.
    @usableFromInline
    package static func release(_ lock: Lock, _ acquisition: Acquisition) {
        switch acquisition {
        case .plain:
            lock.unlock()
        case .controlled:
            lock.unlock()
            // The participant's context, as it was at the acquisition: the thread stays a
            // participant until its call returns, even if the run ends meanwhile.
            ControlPoints.contexts.value?.release(lock.id, name: lock.name.text)
        default:
            let ended = LockProfiler.end(LockProfiler.Hold(bits: acquisition.bits))
            lock.unlock()
            LockProfiler.record(ended)
        }
    }

    /// Tries to take `lock` without waiting; a participant of a controlled run asks the run (a
    /// point). Returns whether it was taken.
    package static func tryAcquire(_ lock: Lock, flags: UInt8) -> Bool {
        guard let control = ControlPoints.current(flags) else { return pthread_mutex_trylock(lock.mutex) == 0 }
        guard control.tryAcquire(lock.id, name: lock.name.text) else { return false }
        if pthread_mutex_trylock(lock.mutex) == 0 { return true }
        // Held by a thread outside the run: not taken after all.
        control.release(lock.id, name: lock.name.text)
        return false
    }

    /// Releases `lock`, taken by ``acquire(_:)`` or ``tryAcquire(_:)`` without profiling: a
    /// participant of a controlled run tells the run after the unlock.
    package static func releaseUnprofiled(_ lock: Lock, flags: UInt8) {
        lock.unlock()
        ControlPoints.current(flags)?.release(lock.id, name: lock.name.text)
    }
}
