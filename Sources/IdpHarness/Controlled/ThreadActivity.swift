#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the OS says one thread of this process is doing: whether the controlled phase may wait for
/// it, or must take it as blocked outside the kit's points.
///
/// The controlled phase never decides by time whether a participant left its control: it asks the
/// OS. A participant that reaches no point for a while is waited for as long as it runs, is
/// runnable, or sleeps in a wait that ends on its own (a sleep, a wait with a timeout); it is
/// outside control only when its thread is asleep in a wait that nothing but another thread can
/// end (a futex wait with no timeout, a read, a poll with no timeout): Go's `testing/synctest`
/// calls such a goroutine durably blocked.
///
/// Linux only, in this one file: the thread's state (`/proc/self/task/<tid>/stat`, its third
/// field) and the system call it is blocked in, with its arguments (`/proc/self/task/<tid>/syscall`).
/// Both are read with plain system calls, never through Foundation: the phase rebinds Foundation's
/// lock calls while it runs. Apple platforms need `thread_info(THREAD_BASIC_INFO)` for the run
/// state and have no portable view of the blocking call; there ``read(_:)`` answers
/// ``unknown``, and the phase treats a participant it cannot see as one it could not decide on:
/// "not exercised", never a guess.
package enum ThreadActivity: Sendable, Equatable, CustomStringConvertible {
    /// Running, runnable, or in the kernel on its way back: it will reach a point or finish.
    case running
    /// Asleep in a wait that ends on its own (`what`: the call, e.g. "nanosleep", "a timed futex wait").
    case sleeping(String)
    /// Asleep in a wait that only another thread can end (`what`: the call).
    case blocked(String)
    /// The thread is gone.
    case gone
    /// This platform gives no view of the thread.
    case unknown

    package var description: String {
        switch self {
        case .running: "running"
        case .sleeping(let what): "sleeping in \(what)"
        case .blocked(let what): "blocked in \(what)"
        case .gone: "gone"
        case .unknown: "not visible on this platform"
        }
    }

    /// The calling thread's id, as ``read(_:)`` takes it (Linux's `gettid()`); 0 where there is none.
    package static var currentThreadID: Int32 {
        #if os(Linux)
        return getThreadID?() ?? 0
        #else
        return 0
        #endif
    }

    /// What thread `tid` of this process is doing now.
    package static func read(_ tid: Int32) -> ThreadActivity {
        #if os(Linux)
        guard tid > 0 else { return .unknown }
        // The state before and after the blocking call: a thread asleep in both reads was asleep in
        // that call (it may have woken and gone back to the same wait in between, which is the same
        // answer).
        guard let before = state(tid) else { return .gone }
        guard before == UInt8(ascii: "S") else { return before == UInt8(ascii: "Z") || before == UInt8(ascii: "X") ? .gone : .running }
        guard let call = blockingCall(tid), let after = state(tid), after == UInt8(ascii: "S") else { return .running }
        return call
        #else
        return .unknown
        #endif
    }

    #if os(Linux)
    private typealias GetThreadID = @convention(c) () -> pid_t
    /// glibc's `gettid`, looked up at run time: the Glibc module does not import it.
    private static let getThreadID: GetThreadID? = dlsym(nil, "gettid").map { unsafeBitCast($0, to: GetThreadID.self) }

    /// The state letter of `/proc/self/task/<tid>/stat` (R, S, D, T, Z…), or `nil` if the thread is gone.
    private static func state(_ tid: Int32) -> UInt8? {
        guard let text = contents("/proc/self/task/\(tid)/stat") else { return nil }
        // "tid (name) S …": the name may hold spaces and parentheses; the state follows the last ')'.
        guard let close = text.lastIndex(of: UInt8(ascii: ")")), close + 2 < text.count else { return nil }
        return text[close + 2]
    }

    /// What `/proc/self/task/<tid>/syscall` says the sleeping thread waits in, or `nil` if it is not
    /// in a system call (it is running, or was preempted in user space).
    private static func blockingCall(_ tid: Int32) -> ThreadActivity? {
        guard let text = contents("/proc/self/task/\(tid)/syscall") else { return nil }
        let fields = text.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        guard let number = fields.first.flatMap({ Int($0) }), number >= 0 else { return nil }
        let arguments = fields.dropFirst().prefix(6).map { UInt64($0.hasPrefix("0x") ? String($0.dropFirst(2)) : $0, radix: 16) ?? 0 }
        return SystemCalls.activity(number, Array(arguments))
    }

    /// The first 256 bytes of a /proc file, read with plain system calls.
    private static func contents(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Array(buffer.prefix(count).prefix { $0 != UInt8(ascii: "\n") })
    }

    /// The waiting system calls, by number on this architecture, and whether each call's arguments
    /// make it end on its own.
    private enum SystemCalls {
        #if arch(x86_64)
        static let futex = 202, nanosleep = 35, clockNanosleep = 230, poll = 7, ppoll = 271, select = 23, pselect = 270
        static let epollWait = 232, epollPwait = 281
        #elseif arch(arm64)
        static let futex = 98, nanosleep = 101, clockNanosleep = 115, poll = -1, ppoll = 73, select = -1, pselect = 72
        static let epollWait = -1, epollPwait = 22
        #else
        static let futex = -1, nanosleep = -1, clockNanosleep = -1, poll = -1, ppoll = -1, select = -1, pselect = -1
        static let epollWait = -1, epollPwait = -1
        #endif

        /// A thread asleep in system call `number` with `arguments`.
        static func activity(_ number: Int, _ arguments: [UInt64]) -> ThreadActivity {
            func argument(_ index: Int) -> UInt64 { index < arguments.count ? arguments[index] : 0 }
            switch number {
            case futex:
                // The wait operations (FUTEX_WAIT, FUTEX_LOCK_PI, FUTEX_WAIT_BITSET,
                // FUTEX_WAIT_REQUEUE_PI, FUTEX_LOCK_PI2) take their timeout as the fourth argument.
                let operation = argument(1) & 0x7f
                let timed = argument(3) != 0
                return timed ? .sleeping("a futex wait with a timeout (operation \(operation))") : .blocked("a futex wait (operation \(operation))")
            case nanosleep, clockNanosleep:
                return .sleeping("a sleep")
            case poll:
                return Int32(truncatingIfNeeded: argument(2)) >= 0 ? .sleeping("a poll with a timeout") : .blocked("a poll with no timeout")
            case epollWait, epollPwait:
                return Int32(truncatingIfNeeded: argument(3)) >= 0 ? .sleeping("an epoll wait with a timeout") : .blocked("an epoll wait with no timeout")
            case ppoll:
                return argument(2) != 0 ? .sleeping("a poll with a timeout") : .blocked("a poll with no timeout")
            case select, pselect:
                return argument(4) != 0 ? .sleeping("a select with a timeout") : .blocked("a select with no timeout")
            default:
                return .blocked("system call \(number)")
            }
        }
    }
    #endif
}
