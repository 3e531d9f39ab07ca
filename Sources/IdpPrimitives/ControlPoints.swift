import Synchronization

/// What a controlled run (the conformance kit's controlled phase) does at each point of the
/// controlled primitives: ``LockedValue``, ``ConditionLockedValue``, ``ControlledLock`` and the
/// kit's clock call it on a participant's thread, and it decides when that participant goes on.
///
/// A participant asking for a lock another participant holds does not go on until that one
/// releases it; one waiting on a condition does not go on until a signal (or, for a timed wait,
/// until nothing else can go on). Every call may let another participant run first.
@usableFromInline
package protocol ControlledSchedule: AnyObject, Sendable {
    /// `participant` is about to take `lock` (named `name`); returns once it holds it, for the
    /// run: the real lock is then free of every other participant.
    func acquire(_ lock: ObjectIdentifier, name: String, participant: Int)
    /// `participant` tries to take `lock` without waiting: whether it now holds it, for the run.
    func tryAcquire(_ lock: ObjectIdentifier, name: String, participant: Int) -> Bool
    /// `participant` released `lock` (its real lock is already unlocked).
    func release(_ lock: ObjectIdentifier, name: String, participant: Int)
    /// `participant`, holding `lock`, waits on `condition`: the run takes the lock from it (its
    /// real lock is already unlocked) and returns once the wait ended and it holds the lock again.
    /// Returns whether the wait ended by its timeout (only a `timed` wait can).
    func wait(on condition: ObjectIdentifier, releasing lock: ObjectIdentifier, name: String, timed: Bool, participant: Int) -> Bool
    /// Wakes one participant (`all`: every one) waiting on `condition`.
    func signal(_ condition: ObjectIdentifier, all: Bool)
    /// `participant` is at a point where another may go first (a clock read, named `name`).
    func point(_ name: String, participant: Int)
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
    @usableFromInline final class Context {
        let schedule: any ControlledSchedule
        let participant: Int
        /// Whether the thread runs the schedule's code now; only the thread reads or writes it.
        @usableFromInline var inSchedule = false

        init(schedule: any ControlledSchedule, participant: Int) {
            self.schedule = schedule
            self.participant = participant
        }

        private func scheduling<Result>(_ body: () -> Result) -> Result {
            inSchedule = true
            defer { inSchedule = false }
            return body()
        }

        @usableFromInline func acquire(_ lock: ObjectIdentifier, name: String) {
            scheduling { schedule.acquire(lock, name: name, participant: participant) }
        }

        @usableFromInline func tryAcquire(_ lock: ObjectIdentifier, name: String) -> Bool {
            scheduling { schedule.tryAcquire(lock, name: name, participant: participant) }
        }

        @usableFromInline func release(_ lock: ObjectIdentifier, name: String) {
            scheduling { schedule.release(lock, name: name, participant: participant) }
        }

        @usableFromInline func wait(on condition: ObjectIdentifier, releasing lock: ObjectIdentifier, name: String, timed: Bool) -> Bool {
            scheduling { schedule.wait(on: condition, releasing: lock, name: name, timed: timed, participant: participant) }
        }

        @usableFromInline func signal(_ condition: ObjectIdentifier, all: Bool) {
            scheduling { schedule.signal(condition, all: all) }
        }

        @usableFromInline func point(_ name: String) {
            scheduling { schedule.point(name, participant: participant) }
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
    static var current: Context? {
        guard isActive, let context = contexts.value, !context.inSchedule else { return nil }
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
        for schedule in schedules.withPlainLock({ Array($0.values) }) { schedule.signal(condition, all: all) }
    }

    /// Makes the calling thread participant `participant` of `schedule` until ``leave()``.
    package static func enter(_ schedule: any ControlledSchedule, participant: Int) {
        contexts.set(Context(schedule: schedule, participant: participant))
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
