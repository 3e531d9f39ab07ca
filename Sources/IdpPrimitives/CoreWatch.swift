import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells whether the calling thread left its core between two points of its own code: whether
/// the kernel switched it out (preempted it, or it blocked) in between. ``LockProfiler`` asks it
/// of every profiled hold, so that a hold made long by the scheduler is told apart from one made
/// long by the work under the lock.
///
/// ```swift
/// CoreWatch.mark()
/// doWork()
/// let switchedOut = CoreWatch.leftCoreSinceMark()   // nil where the watch is unavailable
/// ```
///
/// On Linux, glibc registers a restartable-sequences area (`struct rseq`) for every thread, and
/// the kernel rewrites its `cpu_id_start` word with the thread's CPU number each time the thread
/// returns to user space after it was switched out. ``mark()`` writes a value no CPU number has
/// into that word; ``leftCoreSinceMark()`` reads it back: still that value, the thread ran
/// throughout. Both are one relaxed access to a word of the calling thread's own control block,
/// which no other thread touches. glibc reads the area's `cpu_id` word, never `cpu_id_start`.
///
/// The watch is available only where a self-test at first use passes: Linux on x86-64 with glibc's
/// area registered (`__rseq_size` at least 8), the thread pointer where glibc keeps it, and a
/// kernel that leaves the word alone over a stretch with no switch and rewrites it after every one
/// of up to eight short sleeps, at least one of which woke the thread on the CPU it slept on.
/// Elsewhere (macOS, another architecture, a kernel that skips the rewrite when the CPU did not
/// change, `GLIBC_TUNABLES=glibc.pthread.rseq=0`) ``isAvailable`` is false and
/// ``leftCoreSinceMark()`` answers `nil`: not known, never a guess.
///
/// A vCPU that the hypervisor takes away does not show: the guest kernel never switched the thread
/// out.
package enum CoreWatch {
    /// Whether the watch works on this machine: the self-test passed.
    package static var isAvailable: Bool { offset != nil }

    /// Notes that the calling thread is on its core now; a no-op where the watch is unavailable.
    @inlinable
    package static func mark() {
        guard let word = word() else { return }
        word.pointee.store(unmarked, ordering: .relaxed)
    }

    /// Makes the calling thread's watch show a switch since its last ``mark()``, as the kernel does
    /// when it switches the thread out: for a section nested in another that marks the watch for
    /// itself, to give back the enclosing section's switch its own mark erased. A no-op where the
    /// watch is unavailable.
    @inlinable
    package static func markLeft() {
        guard let word = word() else { return }
        word.pointee.store(leftMark, ordering: .relaxed)
    }

    /// Whether the calling thread was switched out since its last ``mark()``; `nil` where the
    /// watch is unavailable. Without a mark since the thread's last switch it answers `true`.
    @inlinable
    package static func leftCoreSinceMark() -> Bool? {
        guard let word = word() else { return nil }
        return word.pointee.load(ordering: .relaxed) != unmarked
    }

    /// The value ``mark()`` writes: no CPU number.
    @usableFromInline static let unmarked: UInt32 = .max
    /// The value ``markLeft()`` writes: no CPU number either, and not ``unmarked``.
    @usableFromInline static let leftMark: UInt32 = .max - 1

    /// The calling thread's `cpu_id_start` word, or `nil` where the watch is unavailable.
    @usableFromInline
    static func word() -> UnsafeMutablePointer<Atomic<UInt32>>? {
        #if os(Linux) && arch(x86_64)
        guard let offset else { return nil }
        return threadPointer().advanced(by: offset).assumingMemoryBound(to: Atomic<UInt32>.self)
        #else
        return nil
        #endif
    }

    /// Where the calling thread's area lies from its thread pointer, once the self-test passed.
    @usableFromInline static let offset: Int? = selfTest()

    /// The kernel ``selfTest(kernel:)`` reads the word as: the real one, or (tests only) one the
    /// watch must refuse.
    package enum SelfTestKernel: Sendable {
        case real
        /// Never rewrites the word.
        case neverRewrites
        /// Rewrites it only when the thread comes back on another CPU.
        case rewritesOnlyOnMove
    }

    #if os(Linux) && arch(x86_64)
    /// The calling thread's thread pointer: on x86-64 glibc, `pthread_self()` is the thread control
    /// block, whose first word points to itself (checked by ``selfTest()``).
    @usableFromInline
    static func threadPointer() -> UnsafeMutableRawPointer {
        // Never 0: a running thread has a control block.
        UnsafeMutableRawPointer(bitPattern: UInt(pthread_self()))!
    }
    #endif

    /// Runs the checks of the type's documentation on the calling thread; the area's offset from
    /// the thread pointer when they pass.
    /// - Parameter kernel: Only tests pass another than ``SelfTestKernel/real``: read the word
    ///   after each sleep as a kernel the watch must refuse would have left it.
    package static func selfTest(kernel: SelfTestKernel = .real) -> Int? {
        #if os(Linux) && arch(x86_64)
        guard let offsetSymbol = dlsym(nil, "__rseq_offset"), let sizeSymbol = dlsym(nil, "__rseq_size") else { return nil }
        let offset = offsetSymbol.load(as: Int.self)
        guard sizeSymbol.load(as: UInt32.self) >= 8 else { return nil }
        let thread = threadPointer()
        guard thread.load(as: UInt.self) == UInt(bitPattern: thread) else { return nil }
        let area = thread.advanced(by: offset)
        let word = area.assumingMemoryBound(to: Atomic<UInt32>.self)
        // cpu_id, the next word: a CPU number once registered (-1 before, -2 when registration failed).
        let cpu = area.advanced(by: 4).assumingMemoryBound(to: Atomic<UInt32>.self)
        guard Int32(bitPattern: cpu.pointee.load(ordering: .relaxed)) >= 0 else { return nil }
        // Left alone over a stretch with no switch: at least once in three tries (a try may be preempted).
        var keeps = false
        for _ in 0..<3 where !keeps {
            word.pointee.store(unmarked, ordering: .relaxed)
            keeps = word.pointee.load(ordering: .relaxed) == unmarked
        }
        // Rewritten after every sleep, which switches the thread out, until one sleep woke the
        // thread on the CPU it slept on (a kernel that rewrites only on a move must not pass).
        var rewritten = true, stayed = false
        for _ in 0..<8 where rewritten && !stayed {
            let before = cpu.pointee.load(ordering: .relaxed)
            word.pointee.store(unmarked, ordering: .relaxed)
            var pause = timespec(tv_sec: 0, tv_nsec: 20_000), left = timespec()
            while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
            let now = cpu.pointee.load(ordering: .relaxed)
            let seen = word.pointee.load(ordering: .relaxed)
            let after = switch kernel {
            case .real: seen
            case .neverRewrites: unmarked
            case .rewritesOnlyOnMove: now == before ? unmarked : seen
            }
            if after == unmarked { word.pointee.store(now, ordering: .relaxed) }
            rewritten = after == now
            stayed = now == before
        }
        return keeps && rewritten && stayed ? offset : nil
        #else
        return nil
        #endif
    }
}
