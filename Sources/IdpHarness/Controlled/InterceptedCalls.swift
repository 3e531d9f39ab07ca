import Dispatch
import IdpPrimitives
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The functions the controlled phase puts in place of the lock, condition, semaphore, timer,
/// queue, thread and Swift-executor calls of a provider while one of its schedules runs
/// (``Interception`` installs them), so that a provider written with `NSLock`, `NSCondition`,
/// `DispatchSemaphore`, `Task`, actors and `asyncAfter` is explored as it is, unchanged.
///
/// Each one asks whether its calling thread is a participant of a controlled run running the
/// provider's code (``ControlPoints/current``). If not (an SDK thread, another test, the kit's own
/// code), it calls the original function and nothing else. If so:
///
/// - a pthread mutex lock, try or timed lock (`NSLock`, `NSRecursiveLock`, `NSCondition`'s lock)
///   is an acquisition the run decides, then the real lock is taken; an unlock releases both;
/// - a condition wait (`NSCondition.wait`) releases the real mutex, waits as the run decides (no
///   real wait: a spurious wake-up, which POSIX allows, is never needed), and takes the mutex
///   again; a signal or broadcast wakes the run's waiters and the real condition's;
/// - a dispatch semaphore wait takes a unit with the real semaphore's non-blocking wait, or waits
///   as the run decides until a signal lets it try again; a signal adds the real unit, then wakes
///   the run's waiter;
/// - `asyncAfter` and `Task.sleep` set a timer of the run (it runs the work when nothing else can
///   go on, earliest deadline first);
/// - a job enqueued on the Swift global executor, or handed by the Swift runtime to its dispatch
///   pool, becomes a participant of the run;
/// - work handed to a dispatch queue, a dispatch group, a dispatch source, a new thread or the
///   main actor goes on as it would, and the run is no longer fully controlled: its verdict is
///   "not exercised", naming what the provider used.
///
/// The originals are what the rebound slots held (ThreadSanitizer's interceptors under
/// `--sanitize=thread`), so ThreadSanitizer sees every real lock, unlock, wait and signal.
enum InterceptedCalls {
    // MARK: Function types

    typealias Mutex = UnsafeMutablePointer<pthread_mutex_t>?
    typealias Condition = UnsafeMutablePointer<pthread_cond_t>?
    typealias MutexCall = @convention(c) (Mutex) -> Int32
    typealias MutexTimedLock = @convention(c) (Mutex, UnsafePointer<timespec>?) -> Int32
    typealias ConditionWait = @convention(c) (Condition, Mutex) -> Int32
    typealias ConditionTimedWait = @convention(c) (Condition, Mutex, UnsafePointer<timespec>?) -> Int32
    typealias ConditionCall = @convention(c) (Condition) -> Int32
    typealias SemaphoreWaitCall = @convention(c) (OpaquePointer?, UInt64) -> Int
    typealias SemaphoreSignalCall = @convention(c) (OpaquePointer?) -> Int
    typealias After = @convention(c) (UInt64, OpaquePointer?, OpaquePointer?) -> Void
    typealias AfterFunction = @convention(c) (UInt64, OpaquePointer?, UnsafeMutableRawPointer?, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> Void
    typealias AsyncFunction = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> Void
    typealias QueueBlock = @convention(c) (OpaquePointer?, OpaquePointer?) -> Void
    typealias GroupQueueBlock = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Void
    typealias GroupWait = @convention(c) (OpaquePointer?, UInt64) -> Int
    typealias Apply = @convention(c) (Int, OpaquePointer?, OpaquePointer?) -> Void
    typealias SourceCreate = @convention(c) (OpaquePointer?, UInt, UInt, OpaquePointer?) -> OpaquePointer?
    typealias ThreadCreate = @convention(c) (UnsafeMutablePointer<pthread_t>?, UnsafePointer<pthread_attr_t>?,
                                             (@convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?)?, UnsafeMutableRawPointer?) -> Int32

    /// The original functions, looked up once.
    struct Originals: @unchecked Sendable {
        // Sound as Sendable: every field is a `let` holding a C function pointer, immutable once
        // made (a static `let`, initialised once under the runtime's once-guard).
        let mutexLock: MutexCall
        let mutexTryLock: MutexCall
        let mutexUnlock: MutexCall
        let mutexTimedLock: MutexTimedLock
        let conditionWait: ConditionWait
        let conditionTimedWait: ConditionTimedWait
        let conditionSignal: ConditionCall
        let conditionBroadcast: ConditionCall
        let semaphoreWait: SemaphoreWaitCall
        let semaphoreSignal: SemaphoreSignalCall
        let after: After
        let afterFunction: AfterFunction
        let asyncFunction: AsyncFunction
        let async: QueueBlock
        let sync: QueueBlock
        let barrierAsync: QueueBlock
        let barrierSync: QueueBlock
        let groupAsync: GroupQueueBlock
        let groupNotify: GroupQueueBlock
        let groupWait: GroupWait
        let apply: Apply
        let sourceCreate: SourceCreate
        let threadCreate: ThreadCreate

        init?() {
            func look<T>(_ name: String, as type: T.Type) -> T? {
                SymbolRebinding.original(name).map { unsafeBitCast($0, to: type) }
            }
            guard let mutexLock = look("pthread_mutex_lock", as: MutexCall.self), let mutexTryLock = look("pthread_mutex_trylock", as: MutexCall.self),
                  let mutexUnlock = look("pthread_mutex_unlock", as: MutexCall.self),
                  let mutexTimedLock = look("pthread_mutex_timedlock", as: MutexTimedLock.self),
                  let conditionWait = look("pthread_cond_wait", as: ConditionWait.self),
                  let conditionTimedWait = look("pthread_cond_timedwait", as: ConditionTimedWait.self),
                  let conditionSignal = look("pthread_cond_signal", as: ConditionCall.self),
                  let conditionBroadcast = look("pthread_cond_broadcast", as: ConditionCall.self),
                  let semaphoreWait = look("dispatch_semaphore_wait", as: SemaphoreWaitCall.self),
                  let semaphoreSignal = look("dispatch_semaphore_signal", as: SemaphoreSignalCall.self),
                  let after = look("dispatch_after", as: After.self), let afterFunction = look("dispatch_after_f", as: AfterFunction.self),
                  let asyncFunction = look("dispatch_async_f", as: AsyncFunction.self),
                  let async = look("dispatch_async", as: QueueBlock.self), let sync = look("dispatch_sync", as: QueueBlock.self),
                  let barrierAsync = look("dispatch_barrier_async", as: QueueBlock.self), let barrierSync = look("dispatch_barrier_sync", as: QueueBlock.self),
                  let groupAsync = look("dispatch_group_async", as: GroupQueueBlock.self),
                  let groupNotify = look("dispatch_group_notify", as: GroupQueueBlock.self), let groupWait = look("dispatch_group_wait", as: GroupWait.self),
                  let apply = look("dispatch_apply", as: Apply.self), let sourceCreate = look("dispatch_source_create", as: SourceCreate.self),
                  let threadCreate = look("pthread_create", as: ThreadCreate.self) else { return nil }
            (self.mutexLock, self.mutexTryLock, self.mutexUnlock, self.mutexTimedLock) = (mutexLock, mutexTryLock, mutexUnlock, mutexTimedLock)
            (self.conditionWait, self.conditionTimedWait, self.conditionSignal, self.conditionBroadcast) = (conditionWait, conditionTimedWait, conditionSignal, conditionBroadcast)
            (self.semaphoreWait, self.semaphoreSignal, self.after, self.afterFunction) = (semaphoreWait, semaphoreSignal, after, afterFunction)
            (self.async, self.sync, self.barrierAsync, self.barrierSync) = (async, sync, barrierAsync, barrierSync)
            (self.groupAsync, self.groupNotify, self.groupWait, self.apply) = (groupAsync, groupNotify, groupWait, apply)
            (self.sourceCreate, self.threadCreate, self.asyncFunction) = (sourceCreate, threadCreate, asyncFunction)
        }
    }

    /// The originals; `nil` where one of them cannot be found (then nothing is intercepted).
    static let originals = Originals()

    /// The replacement for each symbol, by name: its address.
    static let replacements: [String: UInt] = [
        "pthread_mutex_lock": address(mutexLock),
        "pthread_mutex_trylock": address(mutexTryLock),
        "pthread_mutex_unlock": address(mutexUnlock),
        "pthread_mutex_timedlock": address(mutexTimedLock),
        "pthread_cond_wait": address(conditionWait),
        "pthread_cond_timedwait": address(conditionTimedWait),
        "pthread_cond_signal": address(conditionSignal),
        "pthread_cond_broadcast": address(conditionBroadcast),
        "dispatch_semaphore_wait": address(semaphoreWait),
        "dispatch_semaphore_signal": address(semaphoreSignal),
        "dispatch_after": address(after),
        "dispatch_after_f": address(afterFunction),
        "dispatch_async_f": address(asyncFunction),
        "dispatch_async": address(async),
        "dispatch_sync": address(sync),
        "dispatch_barrier_async": address(barrierAsync),
        "dispatch_barrier_sync": address(barrierSync),
        "dispatch_group_async": address(groupAsync),
        "dispatch_group_notify": address(groupNotify),
        "dispatch_group_wait": address(groupWait),
        "dispatch_apply": address(apply),
        "dispatch_source_create": address(sourceCreate),
        "pthread_create": address(threadCreate),
    ]

    private static func address<Function>(_ function: Function) -> UInt {
        UInt(bitPattern: unsafeBitCast(function, to: UnsafeRawPointer.self))
    }

    /// The names the run gives intercepted objects.
    static let mutexName = "mutex"
    static let conditionName = "condition"
    static let semaphoreName = "semaphore"

    // MARK: Mutexes (NSLock, NSRecursiveLock, NSCondition's lock)

    /// Whether `mutex` is a recursive one (`NSRecursiveLock`): glibc keeps its kind in the mutex.
    private static func isRecursive(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) -> Bool {
        #if canImport(Glibc)
        return mutex.pointee.__data.__kind & 3 == Int32(PTHREAD_MUTEX_RECURSIVE_NP)
        #else
        return false
        #endif
    }

    static let mutexLock: MutexCall = { mutex in
        guard let originals else { return EINVAL }
        guard let mutex, let control = ControlPoints.current else { return originals.mutexLock(mutex) }
        _ = control.acquire(ControlledObject(mutex), name: mutexName, reentrant: isRecursive(mutex), timeout: nil)
        return originals.mutexLock(mutex)
    }

    static let mutexTryLock: MutexCall = { mutex in
        guard let originals else { return EINVAL }
        guard let mutex, let control = ControlPoints.current else { return originals.mutexTryLock(mutex) }
        guard control.tryAcquire(ControlledObject(mutex), name: mutexName, reentrant: isRecursive(mutex)) else { return EBUSY }
        let status = originals.mutexTryLock(mutex)
        // Held by a thread outside the run: not taken after all.
        if status != 0 { control.release(ControlledObject(mutex), name: mutexName) }
        return status
    }

    static let mutexUnlock: MutexCall = { mutex in
        guard let originals else { return EINVAL }
        let status = originals.mutexUnlock(mutex)
        if let mutex, status == 0, let control = ControlPoints.current { control.release(ControlledObject(mutex), name: mutexName) }
        return status
    }

    static let mutexTimedLock: MutexTimedLock = { mutex, deadline in
        guard let originals else { return EINVAL }
        guard let mutex, let control = ControlPoints.current else { return originals.mutexTimedLock(mutex, deadline) }
        let timeout = deadline.map { Deadlines.remaining(until: $0.pointee, clock: CLOCK_REALTIME) }
        guard control.acquire(ControlledObject(mutex), name: mutexName, reentrant: isRecursive(mutex), timeout: timeout) else { return ETIMEDOUT }
        return originals.mutexLock(mutex)
    }

    // MARK: Conditions (NSCondition)

    static let conditionWait: ConditionWait = { condition, mutex in
        guard let originals else { return EINVAL }
        guard let condition, let mutex, let control = ControlPoints.current else { return originals.conditionWait(condition, mutex) }
        _ = originals.mutexUnlock(mutex)
        _ = control.wait(on: ControlledObject(condition), releasing: ControlledObject(mutex), name: conditionName, timeout: nil)
        return originals.mutexLock(mutex)
    }

    static let conditionTimedWait: ConditionTimedWait = { condition, mutex, deadline in
        guard let originals else { return EINVAL }
        guard let condition, let mutex, let control = ControlPoints.current else { return originals.conditionTimedWait(condition, mutex, deadline) }
        let timeout = deadline.map { Deadlines.remaining(until: $0.pointee, clock: CLOCK_REALTIME) }
        _ = originals.mutexUnlock(mutex)
        let timedOut = control.wait(on: ControlledObject(condition), releasing: ControlledObject(mutex), name: conditionName, timeout: timeout)
        let status = originals.mutexLock(mutex)
        return timedOut ? ETIMEDOUT : status
    }

    static let conditionSignal: ConditionCall = { condition in
        guard let originals else { return EINVAL }
        signal(condition, all: false)
        return originals.conditionSignal(condition)
    }

    static let conditionBroadcast: ConditionCall = { condition in
        guard let originals else { return EINVAL }
        signal(condition, all: true)
        return originals.conditionBroadcast(condition)
    }

    private static func signal(_ condition: Condition, all: Bool) {
        guard let condition, ControlPoints.isActive else { return }
        if let control = ControlPoints.current {
            control.signal(ControlledObject(condition), all: all)
        } else {
            ControlPoints.signalFromOutside(ControlledObject(condition), all: all)
        }
    }

    // MARK: Dispatch semaphores

    static let semaphoreWait: SemaphoreWaitCall = { semaphore, timeout in
        guard let originals else { return -1 }
        guard let semaphore, let control = ControlPoints.current else { return originals.semaphoreWait(semaphore, timeout) }
        let wait = control.waitOnSemaphore(ControlledObject(UnsafeRawPointer(semaphore)), name: semaphoreName,
                                           timeout: Deadlines.remaining(until: timeout)) { originals.semaphoreWait(semaphore, 0) == 0 }
        switch wait {
        case .taken: return 0
        case .timedOut: return 1
        case .uncontrolled: return originals.semaphoreWait(semaphore, timeout)
        }
    }

    static let semaphoreSignal: SemaphoreSignalCall = { semaphore in
        guard let originals else { return 0 }
        let woke = originals.semaphoreSignal(semaphore)
        if let semaphore, ControlPoints.isActive {
            if let control = ControlPoints.current {
                control.signalSemaphore(ControlledObject(UnsafeRawPointer(semaphore)))
            } else {
                ControlPoints.signalFromOutside(ControlledObject(UnsafeRawPointer(semaphore)), all: false, semaphore: true)
            }
        }
        return woke
    }

    // MARK: Timers

    static let after: After = { when, queue, block in
        guard let originals else { return }
        guard let block, let control = ControlPoints.current, let delay = Deadlines.remaining(until: when),
              let work = BlockCall(block) else { return originals.after(when, queue, block) }
        if isMainQueue(queue) {
            control.outside("DispatchQueue.main.asyncAfter")
            return originals.after(when, queue, block)
        }
        control.after(delay, name: "asyncAfter") { work.run() }
    }

    static let afterFunction: AfterFunction = { when, queue, context, function in
        guard let originals else { return }
        guard let function, let control = ControlPoints.current, let delay = Deadlines.remaining(until: when) else {
            return originals.afterFunction(when, queue, context, function)
        }
        let work = FunctionCall(function, context)
        control.after(delay, name: "Task.sleep") { work.run() }
    }

    // MARK: Jobs of the Swift runtime's default executor

    /// The runtime's own hand-off of a job to its dispatch pool (rebound in the Swift concurrency
    /// runtime only: what `Task.yield()` and a hop off an actor reach when no task executor is in
    /// effect): a participant's job joins its run.
    static let asyncFunction: AsyncFunction = { queue, context, function in
        guard let originals else { return }
        guard let function, let control = ControlPoints.current else { return originals.asyncFunction(queue, context, function) }
        let work = FunctionCall(function, context)
        control.post("a job of the Swift runtime") { work.run() }
    }

    // MARK: Work the run does not schedule

    static let async: QueueBlock = { queue, block in
        handOff(isMainQueue(queue) ? "DispatchQueue.main.async" : "DispatchQueue.async")
        originals?.async(queue, block)
    }

    static let sync: QueueBlock = { queue, block in
        handOff("DispatchQueue.sync")
        originals?.sync(queue, block)
    }

    static let barrierAsync: QueueBlock = { queue, block in
        handOff("DispatchQueue.async(flags: .barrier)")
        originals?.barrierAsync(queue, block)
    }

    static let barrierSync: QueueBlock = { queue, block in
        handOff("DispatchQueue.sync(flags: .barrier)")
        originals?.barrierSync(queue, block)
    }

    static let groupAsync: GroupQueueBlock = { group, queue, block in
        handOff("DispatchQueue.async(group:)")
        originals?.groupAsync(group, queue, block)
    }

    static let groupNotify: GroupQueueBlock = { group, queue, block in
        handOff("DispatchGroup.notify")
        originals?.groupNotify(group, queue, block)
    }

    static let groupWait: GroupWait = { group, timeout in
        handOff("DispatchGroup.wait")
        return originals?.groupWait(group, timeout) ?? 0
    }

    static let apply: Apply = { iterations, queue, block in
        handOff("DispatchQueue.concurrentPerform")
        originals?.apply(iterations, queue, block)
    }

    static let sourceCreate: SourceCreate = { type, handle, mask, queue in
        handOff("a dispatch source (DispatchSource)")
        return originals?.sourceCreate(type, handle, mask, queue)
    }

    static let threadCreate: ThreadCreate = { thread, attributes, start, argument in
        handOff("a thread it started (Thread.start, pthread_create)")
        return originals?.threadCreate(thread, attributes, start, argument) ?? EINVAL
    }

    /// A participant hands work to `what`, which the run does not schedule; or the provider's
    /// factory does, while it makes a schedule's instances.
    private static func handOff(_ what: String) {
        if let control = ControlPoints.current {
            control.outside(what)
        } else if let factory = Interception.factory {
            factory.note(what)
        }
    }

    private static func isMainQueue(_ queue: OpaquePointer?) -> Bool {
        guard let queue, let main = mainQueue else { return false }
        return UInt(bitPattern: UnsafeRawPointer(queue)) == main
    }

    /// The address of libdispatch's main queue object (`_dispatch_main_q`), as the calls name it.
    private static let mainQueue: UInt? = SymbolRebinding.original("_dispatch_main_q").map { UInt(bitPattern: $0) }
}

/// A C function and its context, called later on another thread (a dispatch `_f` call's work).
final class FunctionCall: @unchecked Sendable {
    // Sound as Sendable: both fields are `let`s set before the object is handed to another thread;
    // the context belongs to the call that handed it over, as it would to the dispatch pool.
    let function: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let context: UnsafeMutableRawPointer?

    init(_ function: @escaping @convention(c) (UnsafeMutableRawPointer?) -> Void, _ context: UnsafeMutableRawPointer?) {
        self.function = function
        self.context = context
    }

    func run() { function(context) }
}

/// A block (the C language extension dispatch takes its work as), copied when the call hands it
/// over and released after it ran or was dropped: what dispatch itself does with it. The block is
/// called through its `invoke` pointer, as the blocks ABI lays it out; Swift's own block types are
/// not used, as they cannot be generic arguments on Linux.
final class BlockCall: @unchecked Sendable {
    // Sound as Sendable: `block` is a `let`, a copy of the block this object owns; blocks may be
    // copied, called and released on any thread.
    private typealias Copy = @convention(c) (UnsafeRawPointer?) -> UnsafeMutableRawPointer?
    private typealias Release = @convention(c) (UnsafeRawPointer?) -> Void
    private typealias Invoke = @convention(c) (UnsafeMutableRawPointer?) -> Void

    private static let copy = SymbolRebinding.original("_Block_copy").map { unsafeBitCast($0, to: Copy.self) }
    private static let release = SymbolRebinding.original("_Block_release").map { unsafeBitCast($0, to: Release.self) }

    private let block: UnsafeMutableRawPointer

    /// A copy of `block`, or `nil` where the blocks runtime is missing.
    init?(_ block: OpaquePointer) {
        guard let copy = Self.copy, Self.release != nil, let copied = copy(UnsafeRawPointer(block)) else { return nil }
        self.block = copied
    }

    deinit {
        Self.release?(block)
    }

    /// Calls the block: `struct Block_layout { void *isa; int flags; int reserved; void (*invoke)(void *, ...); … }`.
    func run() {
        let invoke = block.load(fromByteOffset: MemoryLayout<UnsafeRawPointer>.size + 2 * MemoryLayout<Int32>.size, as: Invoke.self)
        invoke(block)
    }
}

/// Time left until the deadlines intercepted calls take, for the run's own time.
enum Deadlines {
    /// Until a `dispatch_time_t` deadline: `nil` for `DISPATCH_TIME_FOREVER`. Dispatch encodes the
    /// monotonic clock's times as they are; with the top bit set, the continuous (boot-time)
    /// clock's; with the top two bits set, the wall clock's, negated.
    static func remaining(until when: UInt64) -> Duration? {
        guard when != DispatchTime.distantFuture.rawValue else { return nil }
        if when == 0 { return .zero }
        let topBit: UInt64 = 1 << 63
        let wallBit: UInt64 = 1 << 62
        let nanoseconds: Int64
        if when & topBit != 0, when & wallBit != 0 {
            nanoseconds = (0 &- Int64(bitPattern: when)) - now(CLOCK_REALTIME)
        } else if when & topBit != 0 {
            nanoseconds = Int64(bitPattern: when & ~topBit) - now(CLOCK_BOOTTIME)
        } else {
            nanoseconds = Int64(bitPattern: when) - now(CLOCK_MONOTONIC)
        }
        return .nanoseconds(max(0, nanoseconds))
    }

    /// Until an absolute `timespec` of `clock`.
    static func remaining(until deadline: timespec, clock: clockid_t) -> Duration {
        let nanoseconds = Int64(deadline.tv_sec) * 1_000_000_000 + Int64(deadline.tv_nsec) - now(clock)
        return .nanoseconds(max(0, nanoseconds))
    }

    private static func now(_ clock: clockid_t) -> Int64 {
        var time = timespec()
        clock_gettime(clock, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
