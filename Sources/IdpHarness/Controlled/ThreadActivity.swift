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
    /// Asleep in a wait that only another thread can end (`what`: the call). `owner`: the thread
    /// that holds the lock it waits for, where the lock says so (a glibc pthread mutex keeps its
    /// owner beside its futex word; a priority-inheriting futex, as `Mutex` uses, is its owner's
    /// thread id), or `nil`.
    case blocked(String, owner: Int32? = nil)
    /// The thread is gone.
    case gone
    /// This platform gives no view of the thread.
    case unknown

    package var description: String {
        switch self {
        case .running: "running"
        case .sleeping(let what): "sleeping in \(what)"
        case .blocked(let what, _): "blocked in \(what)"
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

    /// Whether the OS shows no thread of this process other than `excluded` running, runnable, or
    /// in the kernel on its way back (states R and D of `/proc/self/task/<tid>/stat`); `false`
    /// where the platform gives no view (Apple platforms would need `task_threads` and
    /// `thread_info`), so that nothing is judged idle unseen.
    package static func noOtherThreadRuns(excluding excluded: Int32) -> Bool {
        #if os(Linux)
        guard let directory = opendir("/proc/self/task") else { return false }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let parsed = withUnsafeBytes(of: entry.pointee.d_name) { number($0, from: 0, radix: 10).value }
            guard let parsed, parsed <= UInt64(Int32.max) else { continue }
            let tid = Int32(parsed)
            guard tid != excluded, let state = state(tid) else { continue }
            if state == UInt8(ascii: "R") || state == UInt8(ascii: "D") { return false }
        }
        return true
        #else
        return false
        #endif
    }

    #if os(Linux)
    private typealias GetThreadID = @convention(c) () -> pid_t
    /// glibc's `gettid`, looked up at run time: the Glibc module does not import it.
    private static let getThreadID: GetThreadID? = dlsym(nil, "gettid").map { unsafeBitCast($0, to: GetThreadID.self) }

    /// The state letter of `/proc/self/task/<tid>/stat` (R, S, D, T, Z…), or `nil` if the thread is gone.
    private static func state(_ tid: Int32) -> UInt8? {
        guard let text = contents(tid, "stat") else { return nil }
        // "tid (name) S …": the name may hold spaces and parentheses; the state follows the last ')'.
        var close = text.count - 1
        while close >= 0, text[close] != UInt8(ascii: ")") { close -= 1 }
        guard close >= 0, close + 2 < text.count, text[close + 2] != 0 else { return nil }
        return text[close + 2]
    }

    /// What `/proc/self/task/<tid>/syscall` says the sleeping thread waits in, or `nil` if it is not
    /// in a system call (it is running, or was preempted in user space).
    private static func blockingCall(_ tid: Int32) -> ThreadActivity? {
        guard let text = contents(tid, "syscall") else { return nil }
        // "number arg1 … arg6 sp pc": the number in decimal, the words in hex ("0x…").
        let (first, afterFirst) = text.withUnsafeBytes { Self.number($0, from: 0, radix: 10) }
        guard let first, first <= UInt64(Int.max) else { return nil }
        let call = Int(first)
        // The six arguments, then the stack pointer and the program counter.
        var words: [UInt64] = []
        var at = afterFirst
        while words.count < 8 {
            while at < text.count, text[at] == UInt8(ascii: " ") { at += 1 }
            guard at < text.count, text[at] != 0 else { break }
            let (word, after) = text.withUnsafeBytes { Self.number($0, from: at, radix: 16) }
            words.append(word ?? 0)
            at = after
        }
        var arguments: [UInt64] = []
        for index in 0..<min(6, words.count) { arguments.append(words[index]) }
        let activity = SystemCalls.activity(call, arguments)
        if case .blocked(let what, owner: nil) = activity, words.count == 8 {
            if let brief = briefLock(at: UInt(words[7])) { return .sleeping(brief) }
            // A wait with no owner to name: the function it waits in says what it waits for.
            if let place = symbol(at: UInt(words[7])) { return .blocked("\(what) in \(place.name ?? place.file)") }
        }
        return activity
    }

    /// The owner of the lock behind a futex wait, if the lock records one: a priority-inheriting
    /// futex (`FUTEX_LOCK_PI`, `FUTEX_LOCK_PI2`: Synchronization's `Mutex`) holds its owner's
    /// thread id; a plain wait (`FUTEX_WAIT`) on a glibc pthread mutex's lock word has the owner's
    /// id 8 bytes after it (`__owner` follows `__lock` and `__count`). The words are read with
    /// `process_vm_readv` on this process, which fails instead of faulting if the memory is gone;
    /// an id that names no thread of this process is no owner.
    private static func futexOwner(address: UInt, operation: UInt64) -> Int32? {
        let word: UInt
        let mask: UInt32
        switch operation {
        case 6, 13: (word, mask) = (address, 0x3fff_ffff)  // FUTEX_LOCK_PI, FUTEX_LOCK_PI2
        case 0: (word, mask) = (address + 8, 0xffff_ffff)  // FUTEX_WAIT on a pthread mutex's __lock
        default: return nil
        }
        guard let value = readWord(at: word) else { return nil }
        let owner = Int32(bitPattern: value & mask)
        guard owner > 0, state(owner) != nil else { return nil }
        return owner
    }

    /// A wait at program counter `pc` on a lock that is only ever held across the code of the
    /// library that owns it, never across a point of the kit's schedule, so another thread
    /// releases it without the schedule's help: glibc's internal locks (`__lll_lock_wait_private`:
    /// malloc's arenas, stdio; a condition variable's own lock, which `pthread_cond_signal` and
    /// `pthread_cond_broadcast` wait for while another thread signals or waits on it), and the
    /// locks of ThreadSanitizer's runtime, which is linked into the executable (the only raw futex
    /// waits there). Its description, or `nil`.
    private static func briefLock(at pc: UInt) -> String? {
        guard let symbol = symbol(at: pc) else { return nil }
        switch symbol.name {
        case "__lll_lock_wait_private": return "a lock of glibc's own (malloc, stdio)"
        case "pthread_cond_signal", "pthread_cond_broadcast": return "a condition variable's own lock, while another thread signals it"
        default: break
        }
        if symbol.base == executableBase { return "a lock of ThreadSanitizer's runtime" }
        return nil
    }

    private typealias AddressInfo = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Int32
    /// glibc's `dladdr`, looked up at run time.
    private static let dladdr: AddressInfo? = dlsym(nil, "dladdr").map { unsafeBitCast($0, to: AddressInfo.self) }

    /// The load address and file name of the image holding `address`, and the name of the
    /// exported symbol it is in (`nil` for a function the image does not export), from `dladdr`'s
    /// `Dl_info` (file, base, symbol name, symbol address: four words).
    private static func symbol(at address: UInt) -> (base: UInt, file: String, name: String?)? {
        guard let dladdr, let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt.self, capacity: 4) { info -> (base: UInt, file: String, name: String?)? in
            info.initialize(repeating: 0)
            guard dladdr(pointer, UnsafeMutableRawPointer(info.baseAddress)) != 0 else { return nil }
            let path = UnsafePointer<CChar>(bitPattern: info[0]).map { String(cString: $0) } ?? ""
            let name = UnsafePointer<CChar>(bitPattern: info[2]).map { String(cString: $0) }
            return (info[1], String(path.split(separator: "/").last ?? ""), name)
        }
    }

    /// The load address of the image this code is part of: the executable (the house modules are
    /// linked into it, with ThreadSanitizer's runtime when it is on).
    private static let executableBase: UInt? = symbol(at: UInt(bitPattern: #dsohandle))?.base

    private typealias ReadMemory = @convention(c) (pid_t, UnsafePointer<iovec>?, UInt, UnsafePointer<iovec>?, UInt, UInt) -> Int
    /// glibc's `process_vm_readv`, looked up at run time.
    private static let readMemory: ReadMemory? = dlsym(nil, "process_vm_readv").map { unsafeBitCast($0, to: ReadMemory.self) }

    /// The 32-bit word at `address` of this process, or `nil` if it cannot be read.
    private static func readWord(at address: UInt) -> UInt32? {
        guard let readMemory, let remote = UnsafeMutableRawPointer(bitPattern: address) else { return nil }
        var value: UInt32 = 0
        let count = withUnsafeMutableBytes(of: &value) { local -> Int in
            var localVector = iovec(iov_base: local.baseAddress, iov_len: 4)
            var remoteVector = iovec(iov_base: remote, iov_len: 4)
            return readMemory(getpid(), &localVector, 1, &remoteVector, 1, 0)
        }
        return count == 4 ? value : nil
    }

    /// The first line of `/proc/self/task/<tid>/<file>`, at most 256 bytes and NULs after it, read
    /// with plain system calls. Built and scanned by index: the watchdog of every controlled run
    /// reads it.
    private static func contents(_ tid: Int32, _ file: StaticString) -> [UInt8]? {
        var path: [UInt8] = []
        path.reserveCapacity(48)
        let prefix: StaticString = "/proc/self/task/"
        for index in 0..<prefix.utf8CodeUnitCount { path.append(prefix.utf8Start[index]) }
        var digits: [UInt8] = []
        var rest = Int(tid)
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        var digit = digits.count - 1
        while digit >= 0 {
            path.append(digits[digit])
            digit -= 1
        }
        path.append(UInt8(ascii: "/"))
        for index in 0..<file.utf8CodeUnitCount { path.append(file.utf8Start[index]) }
        path.append(0)
        let descriptor = path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_RDONLY | O_CLOEXEC) } }
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // The line ends at the first newline; from there on the buffer holds NULs.
        var end = 0
        while end < count, buffer[end] != UInt8(ascii: "\n") { end += 1 }
        while end < buffer.count {
            buffer[end] = 0
            end += 1
        }
        return buffer
    }

    /// The number in `text` at `start` (after any spaces; in hex, an optional "0x"), up to a space
    /// or NUL or the end, and where it ended; `nil` for no digits or a character that is not one.
    private static func number(_ text: UnsafeRawBufferPointer, from start: Int, radix: UInt64) -> (value: UInt64?, end: Int) {
        var at = start
        while at < text.count, text[at] == UInt8(ascii: " ") { at += 1 }
        if radix == 16, at + 1 < text.count, text[at] == UInt8(ascii: "0"), text[at + 1] == UInt8(ascii: "x") { at += 2 }
        var value: UInt64 = 0
        var digits = 0
        var valid = true
        while at < text.count, text[at] != UInt8(ascii: " "), text[at] != 0 {
            let byte = text[at]
            let digit: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt64(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt64(byte - UInt8(ascii: "A") + 10)
            default: digit = radix
            }
            if digit >= radix { valid = false }
            value = value &* radix &+ digit
            digits += 1
            at += 1
        }
        return (valid && digits > 0 ? value : nil, at)
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
                guard !timed else { return .sleeping("a futex wait with a timeout (operation \(operation))") }
                return .blocked("a futex wait (operation \(operation))", owner: futexOwner(address: UInt(argument(0)), operation: operation))
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
