import Synchronization

/// What a controlled run (the conformance kit's controlled phase) does at each point of the
/// controlled primitives: ``LockedValue``, ``ConditionLockedValue``, ``ControlledLock`` and the
/// kit's clock call it on a participant's thread, and so do the lock, condition, semaphore, timer
/// and task calls the kit intercepts while a run is in progress (Foundation's `NSLock` and
/// `NSCondition`, `DispatchSemaphore`, `asyncAfter`, `Task`, `Task.sleep`); it decides when that
/// participant goes on.
///
/// A participant asking for a lock another participant holds does not go on until that one
/// releases it; one waiting on a condition or a semaphore does not go on until a signal (or, for a
/// timed wait, until nothing else can go on). Every call may let another participant run first.
///
/// Objects are known by their address (``ControlledObject``): a house primitive's own, or the
/// address of the pthread mutex, condition or dispatch semaphore an intercepted call names.
@usableFromInline
package protocol ControlledSchedule: AnyObject, Sendable {
    /// `participant` is about to take `lock` (named `name`); returns once it holds it, for the
    /// run: the real lock is then free of every other participant. With `reentrant`, a lock it
    /// holds already is taken again at once. With a `timeout`, the wait for a lock held by
    /// another participant can end when nothing else can go on: `false` then, not taken.
    func acquire(_ lock: ControlledObject, name: String, reentrant: Bool, timeout: Duration?, participant: Int) -> Bool
    /// `participant` tries to take `lock` without waiting: whether it now holds it, for the run.
    func tryAcquire(_ lock: ControlledObject, name: String, reentrant: Bool, participant: Int) -> Bool
    /// `participant` released `lock` (its real lock is already unlocked).
    func release(_ lock: ControlledObject, name: String, participant: Int)
    /// `participant`, holding `lock`, waits on `condition`: the run takes the lock from it (its
    /// real lock is already unlocked) and returns once the wait ended and it holds the lock again.
    /// Returns whether the wait ended by its timeout (only a wait with a `timeout` can).
    func wait(on condition: ControlledObject, releasing lock: ControlledObject, name: String, timeout: Duration?, participant: Int) -> Bool
    /// Wakes one participant (`all`: every one) waiting on `condition`. `outside`: the signal
    /// comes from a thread that is not a participant.
    func signal(_ condition: ControlledObject, all: Bool, outside: Bool)
    /// `participant` waits on `semaphore` (named `name`): `take` takes one of its units without
    /// waiting (the real semaphore's own non-blocking wait) and is asked again after each signal.
    func waitOnSemaphore(_ semaphore: ControlledObject, name: String, timeout: Duration?, participant: Int, take: () -> Bool) -> SemaphoreWait
    /// `semaphore` was signalled (its real unit already added); `outside`: by a thread that is not
    /// a participant.
    func signalSemaphore(_ semaphore: ControlledObject, outside: Bool)
    /// `participant` is at a point where another may go first (a clock read, named `name`).
    func point(_ name: String, participant: Int)
    /// `participant` enqueued `job` on the Swift global executor (a task it started, a
    /// continuation it resumed, an actor it called): the run runs it as a participant of its own.
    func enqueue(_ job: UnownedJob, participant: Int)
    /// `participant` handed `body` to the Swift runtime's default executor to run on its pool (the
    /// runtime's own hand-off of a job, `name` saying which): the run runs it as a participant of
    /// its own.
    func post(_ name: String, participant: Int, _ body: @escaping @Sendable () -> Void)
    /// `participant` asked for `body` to run after `delay` (`name`: what asked, such as
    /// `asyncAfter`): the run runs it when nothing else can go on, earliest deadline first.
    func after(_ delay: Duration, name: String, participant: Int, _ body: @escaping @Sendable () -> Void)
    /// `participant` handed work to something the run does not schedule (`what`: a dispatch
    /// queue, a thread it started, the main actor): its schedule is no longer fully controlled.
    func outside(_ what: String, participant: Int)
}

/// How a controlled wait on a semaphore ended.
@usableFromInline
package enum SemaphoreWait: Sendable, Equatable {
    /// A unit was taken.
    case taken
    /// The timeout ended it: nothing else could go on.
    case timedOut
    /// The run no longer controls the participant (it was given up): wait for real.
    case uncontrolled
}

/// What a controlled run knows a lock, a condition or a semaphore by: its address.
@usableFromInline
package struct ControlledObject: Hashable, Sendable {
    package let address: UInt

    /// The object `object` stands for itself.
    package init(_ object: ObjectIdentifier) {
        address = UInt(bitPattern: object)
    }

    /// The pthread or dispatch object at `pointer`.
    package init(_ pointer: UnsafeRawPointer) {
        address = UInt(bitPattern: pointer)
    }

}

/// Where the controlled primitives find the controlled run their thread takes part in.
///
/// Outside a controlled run, a primitive pays one relaxed load of ``Instrumentation/flags`` (a word
/// no thread writes while no run starts or ends, the same word lock profiling is turned on in). During one, a thread that is not one of its participants
/// (an SDK worker, a provider's own thread) uses the primitives as plain ones.
@usableFromInline
package enum ControlPoints {
    /// The calling thread's run and its number in it. The run's own code, called from a
    /// primitive, uses the primitives as plain ones (``current`` is `nil` meanwhile).
    // Sound as Sendable: `schedule` and `participant` are `let`s, `busy` is atomic, and the one
    // plain `var`, `inSchedule`, is read and written only by the thread the context belongs to
    // (it is found through that thread's thread-specific slot); other threads only read `busy`.
    @usableFromInline package final class Context: @unchecked Sendable {
        let schedule: any ControlledSchedule
        let participant: Int
        /// Whether the thread runs the schedule's code now; only the thread reads or writes it.
        @usableFromInline var inSchedule = false
        /// Whether the thread runs the schedule's code now, for other threads (the schedule's
        /// watchdog): a thread waiting inside the schedule's own code is not blocked outside it.
        private let busy = Atomic<Bool>(false)

        /// Whether the thread is inside the schedule's own code now; any thread may ask.
        package var isInSchedule: Bool { busy.load(ordering: .relaxed) }

        /// Runs `body`, the schedule's own code, on the participant's thread: the primitives it
        /// uses are plain ones, not points.
        package func runningScheduleCode<Result>(_ body: () -> Result) -> Result {
            scheduling(body)
        }

        init(schedule: any ControlledSchedule, participant: Int) {
            self.schedule = schedule
            self.participant = participant
        }

        private func scheduling<Result>(_ body: () -> Result) -> Result {
            inSchedule = true
            busy.store(true, ordering: .relaxed)
            defer {
                busy.store(false, ordering: .relaxed)
                inSchedule = false
            }
            return body()
        }

        @usableFromInline func acquire(_ lock: ObjectIdentifier, name: String) {
            _ = scheduling { schedule.acquire(ControlledObject(lock), name: name, reentrant: false, timeout: nil, participant: participant) }
        }

        @usableFromInline func tryAcquire(_ lock: ObjectIdentifier, name: String) -> Bool {
            scheduling { schedule.tryAcquire(ControlledObject(lock), name: name, reentrant: false, participant: participant) }
        }

        @usableFromInline func release(_ lock: ObjectIdentifier, name: String) {
            scheduling { schedule.release(ControlledObject(lock), name: name, participant: participant) }
        }

        @usableFromInline func wait(on condition: ObjectIdentifier, releasing lock: ObjectIdentifier, name: String, timeout: Duration?) -> Bool {
            scheduling { schedule.wait(on: ControlledObject(condition), releasing: ControlledObject(lock), name: name, timeout: timeout, participant: participant) }
        }

        @usableFromInline func signal(_ condition: ObjectIdentifier, all: Bool) {
            scheduling { schedule.signal(ControlledObject(condition), all: all, outside: false) }
        }

        @usableFromInline func point(_ name: String) {
            scheduling { schedule.point(name, participant: participant) }
        }

        // The intercepted calls' side (the kit's hooks for Foundation, Dispatch and the Swift
        // runtime): the same points, for objects known by address.

        package func acquire(_ lock: ControlledObject, name: String, reentrant: Bool, timeout: Duration?) -> Bool {
            scheduling { schedule.acquire(lock, name: name, reentrant: reentrant, timeout: timeout, participant: participant) }
        }

        package func tryAcquire(_ lock: ControlledObject, name: String, reentrant: Bool) -> Bool {
            scheduling { schedule.tryAcquire(lock, name: name, reentrant: reentrant, participant: participant) }
        }

        package func release(_ lock: ControlledObject, name: String) {
            scheduling { schedule.release(lock, name: name, participant: participant) }
        }

        package func wait(on condition: ControlledObject, releasing lock: ControlledObject, name: String, timeout: Duration?) -> Bool {
            scheduling { schedule.wait(on: condition, releasing: lock, name: name, timeout: timeout, participant: participant) }
        }

        package func signal(_ condition: ControlledObject, all: Bool) {
            scheduling { schedule.signal(condition, all: all, outside: false) }
        }

        package func waitOnSemaphore(_ semaphore: ControlledObject, name: String, timeout: Duration?, take: () -> Bool) -> SemaphoreWait {
            scheduling { schedule.waitOnSemaphore(semaphore, name: name, timeout: timeout, participant: participant, take: take) }
        }

        package func signalSemaphore(_ semaphore: ControlledObject) {
            scheduling { schedule.signalSemaphore(semaphore, outside: false) }
        }

        package func enqueue(_ job: UnownedJob) {
            scheduling { schedule.enqueue(job, participant: participant) }
        }

        package func post(_ name: String, _ body: @escaping @Sendable () -> Void) {
            scheduling { schedule.post(name, participant: participant, body) }
        }

        package func after(_ delay: Duration, name: String, _ body: @escaping @Sendable () -> Void) {
            scheduling { schedule.after(delay, name: name, participant: participant, body) }
        }

        package func outside(_ what: String) {
            scheduling { schedule.outside(what, participant: participant) }
        }

        /// Runs `body` holding the lock `lock` (named `name`) for the run and for real: asks the
        /// run for it (a point), takes it with `take`, and after `body` releases it with `give`,
        /// then tells the run.
        @usableFromInline func holding<Result, Failure: Error>(_ lock: ObjectIdentifier, name: String, take: () -> Void, give: () -> Void,
                                                              _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
            acquire(lock, name: name)
            take()
            defer {
                give()
                release(lock, name: name)
            }
            return try body()
        }
    }

    @usableFromInline static let contexts = ThreadSpecific<Context>()

    /// Whether a controlled run is in progress anywhere in the process: one relaxed load.
    @inlinable
    package static var isActive: Bool { Instrumentation.current & Instrumentation.controlled != 0 }

    /// The calling thread's controlled run, if it is one of its participants and not running the
    /// run's own code.
    @inlinable
    package static var current: Context? { current(Instrumentation.current) }

    /// ``current``, with the instrumentation word as a lock read it (`flags`).
    @inlinable
    package static func current(_ flags: UInt8) -> Context? {
        guard flags & Instrumentation.controlled != 0, let context = contexts.value, !context.inSchedule else { return nil }
        return context
    }

    /// The runs in progress, for a signal from a thread that is not a participant. The
    /// ``Instrumentation/controlled`` flag is set while it is not empty, changed under its lock.
    private static let schedules = LockedValue<[ObjectIdentifier: any ControlledSchedule]>([:])

    /// `schedule`'s run begins: primitives start asking ``current``.
    package static func runBegan(_ schedule: any ControlledSchedule) {
        schedules.withPlainLock { schedules in
            schedules[ObjectIdentifier(schedule)] = schedule
            Instrumentation.set(Instrumentation.controlled, true)
        }
    }

    /// `schedule`'s run ended.
    package static func runEnded(_ schedule: any ControlledSchedule) {
        schedules.withPlainLock { schedules in
            schedules[ObjectIdentifier(schedule)] = nil
            if schedules.isEmpty { Instrumentation.set(Instrumentation.controlled, false) }
        }
    }

    /// Wakes the participants waiting on `condition`: in the calling participant's run, or, from
    /// any other thread, in every run in progress.
    @usableFromInline
    static func signal(_ condition: ObjectIdentifier, all: Bool) {
        if let current {
            current.signal(condition, all: all)
            return
        }
        signalFromOutside(ControlledObject(condition), all: all)
    }

    /// A thread that is not a participant signalled `condition` (or, with `semaphore`, that
    /// dispatch semaphore): every run in progress hears of it.
    package static func signalFromOutside(_ object: ControlledObject, all: Bool, semaphore: Bool = false) {
        for schedule in schedules.withPlainLock({ Array($0.values) }) {
            if semaphore {
                schedule.signalSemaphore(object, outside: true)
            } else {
                schedule.signal(object, all: all, outside: true)
            }
        }
    }

    /// Makes the calling thread participant `participant` of `schedule` until ``leave()``.
    /// - Returns: The thread's context, which tells other threads whether the thread runs the
    ///   schedule's own code (``Context/isInSchedule``).
    @discardableResult
    package static func enter(_ schedule: any ControlledSchedule, participant: Int) -> Context {
        let context = Context(schedule: schedule, participant: participant)
        contexts.set(context)
        return context
    }

    /// The calling thread is no longer a participant.
    package static func leave() {
        contexts.clear()
    }

    /// A point where a controlled run may let another participant go first; nothing outside one.
    /// - Parameter name: What the point is, as the run's schedule shows it.
    @inlinable
    package static func point(_ name: @autoclosure () -> String) {
        guard let current else { return }
        current.point(name())
    }
}
