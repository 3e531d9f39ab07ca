import IdpPrimitives
import Synchronization

/// The controlled primitives' side of one controlled run: a ``ControlledScheduler`` runs the
/// participants one at a time, and a ``LockTable`` says who holds which lock, who waits, which
/// timers are set and what time it is in the run.
///
/// A participant asking for a lock another holds parks until that one releases it; one waiting on
/// a condition or a semaphore parks until a signal. Jobs a participant enqueues on the Swift
/// global executor (a task it starts, a continuation it resumes, an actor it calls) join the run
/// as participants of their own, run on the run's threads when chosen; timers (`asyncAfter`,
/// `Task.sleep`) join when they are due. Time moves only when nobody can go on: the earliest timed
/// wait ends or the earliest timer is due. With nothing left to end on its own, the scheduler ends
/// the run as a deadlock, unless a participant handed work to something the run does not schedule
/// (a dispatch queue, a thread it started): then it waits for that work to signal, and the run is
/// partially controlled.
///
/// Every acquisition, try, condition or semaphore wait, clock read, job and timer is a point where
/// the scheduler may run another participant. Releases and signals are not: the next point of the
/// releasing participant lets the woken ones go.
final class ScheduledLocks: ControlledSchedule {
    let scheduler: ControlledScheduler

    /// What the run knows, under one lock: the table and what a value cannot hold.
    private struct World {
        var table = LockTable()
        /// The timers set, by the table's number: who set it, what it is, what it runs.
        var timers: [Int: Timer] = [:]
        /// What each participant is, by number: "thread 0", "the clock", "job 5 (from thread 1)".
        var roles: [Int: String] = [:]
        /// The initial participant whose work each one is, by number ("thread 1" for a job that
        /// thread's task posted, and for the jobs that job posted).
        var origins: [Int: String] = [:]
        /// Whether a participant handed work to something the run does not schedule.
        var outsideWork = false
        var jobs = 0
        var timersRun = 0
        /// Each participant's thread's control context, while it runs the provider's code.
        var contexts: [Int: ControlPoints.Context] = [:]
    }

    private struct Timer {
        let participant: Int
        let name: String
        let body: @Sendable () -> Void
    }

    private let world = LockedValue(World())
    /// Set once the run is given up (a deadlock): every call returns at once.
    private let abandoned = Atomic<Bool>(false)
    /// Points the participants reached, by kind of primitive: the house locks, the intercepted
    /// pthread mutexes, conditions and dispatch semaphores, and reads of the kit's clock.
    private let housePoints = Atomic<Int>(0)
    private let mutexPoints = Atomic<Int>(0)
    private let conditionPoints = Atomic<Int>(0)
    private let semaphorePoints = Atomic<Int>(0)
    private let clockPoints = Atomic<Int>(0)
    #if DEBUG
    /// The bug planted in the run: the one of the task that made it.
    let planted = PlantedBugSwitch.inTask
    #endif

    /// A run of `participants` initial participants, described by `roles` ("thread 0", "the clock").
    /// - Parameters:
    ///   - guardLimit: How long nothing may move before the run ends undecided.
    ///   - observe: What the OS says a thread does (``ThreadActivity/read(_:)``).
    init(roles: [String], strategy: ScheduleStrategy, seed: UInt64, replay: [Int], guardLimit: Duration,
         observe: @escaping @Sendable (Int32) -> ThreadActivity = ThreadActivity.read) {
        let observe = Self.plantedObserve(observe)
        let world = self.world
        world.withLock { world in
            for (participant, role) in roles.enumerated() {
                world.roles[participant] = role
                world.origins[participant] = role
            }
        }
        let slot = LockedValue<ScheduledLocks?>(nil)
        scheduler = ControlledScheduler(participants: roles.count, strategy: strategy, seed: seed, replay: replay,
                                        guardLimit: guardLimit, onQuiescence: { slot.withLock { $0 }?.quiesce() ?? .idle },
                                        observe: { participant, tid in
                                            // A thread inside the run's own code (a lock of the kit's, the start of
                                            // a thread for a job) is not blocked outside it.
                                            let inKit = world.withLock { $0.contexts[participant] }?.isInSchedule ?? false
                                            return inKit ? .running : observe(tid)
                                        })
        slot.withLock { $0 = self }
    }

    /// Makes the calling thread participant `participant` for the provider's code, until
    /// ``leave(_:)``.
    func enter(_ participant: Int) {
        let context = ControlPoints.enter(self, participant: participant)
        context.runningScheduleCode { world.withLock { $0.contexts[participant] = context } }
    }

    /// The calling thread, participant `participant`, is done with the provider's code.
    func leave(_ participant: Int) {
        ControlPoints.leave()
        world.withLock { _ = $0.contexts.removeValue(forKey: participant) }
    }

    /// Points the participants reached: at locks, conditions and semaphores, and reads of the clock.
    var points: (locks: Int, clock: Int) {
        let byKind = pointsByKind
        return (byKind.filter { $0.key != Self.clockKind }.values.reduce(0, +), byKind[Self.clockKind] ?? 0)
    }

    /// Points by the kind of primitive reached ("house locks", "mutex", "condition", "semaphore",
    /// "the kit's clock"), the kinds reached only.
    var pointsByKind: [String: Int] {
        let counts = [(Self.houseKind, housePoints.load(ordering: .relaxed)), (InterceptedCalls.mutexName, mutexPoints.load(ordering: .relaxed)),
                      (InterceptedCalls.conditionName, conditionPoints.load(ordering: .relaxed)),
                      (InterceptedCalls.semaphoreName, semaphorePoints.load(ordering: .relaxed)), (Self.clockKind, clockPoints.load(ordering: .relaxed))]
        var byKind: [String: Int] = [:]
        for (kind, count) in counts where count > 0 { byKind[kind] = count }
        return byKind
    }

    /// Jobs of the Swift global executor the run scheduled, and timers it ran.
    var scheduled: (jobs: Int, timers: Int) { world.withLock { ($0.jobs, $0.timersRun) } }

    /// What each participant still waits for (a deadlock's description), by participant.
    var waits: [Int: String] {
        world.withLock { world in world.table.waits { world.roles[$0] ?? "participant \($0)" } }
    }

    /// What participant `participant` is: "thread 0", "job 5 (from thread 1)".
    func role(_ participant: Int) -> String {
        world.withLock { $0.roles[participant] } ?? "participant \(participant)"
    }

    /// `text` with each "participant N" the scheduler wrote replaced by what N is.
    func naming(_ text: String) -> String {
        let roles = world.withLock { $0.roles }
        var named = text
        for participant in roles.keys.sorted(by: >) {
            guard let role = roles[participant] else { continue }
            named = named.replacingOccurrences(of: "participant \(participant)", with: role)
        }
        return named
    }

    /// The run is over: a deadlock's parked participants stay parked, and a straggler's later calls
    /// (a participant set aside as uncontrolled) return at once.
    func abandon() {
        abandoned.store(true, ordering: .relaxed)
    }

    private var isAbandoned: Bool { abandoned.load(ordering: .relaxed) }

    private static let clockKind = "the kit's clock"
    private static let houseKind = "house locks"

    /// Counts a point at the primitive named `name`: an intercepted object's kind, or a house
    /// primitive (any other name).
    private func count(_ name: String) {
        switch name {
        case InterceptedCalls.mutexName: mutexPoints.add(1, ordering: .relaxed)
        case InterceptedCalls.conditionName: conditionPoints.add(1, ordering: .relaxed)
        case InterceptedCalls.semaphoreName: semaphorePoints.add(1, ordering: .relaxed)
        default: housePoints.add(1, ordering: .relaxed)
        }
    }

    /// Names `object` `name` in the table, and returns the name.
    private func named(_ object: ControlledObject, _ name: String) -> String {
        world.withLock { $0.table.name(object, name) }
        return name
    }

    // MARK: ControlledSchedule

    func acquire(_ lock: ControlledObject, name: String, reentrant: Bool, timeout: Duration?, participant: Int) -> Bool {
        guard !isAbandoned else { return true }
        let name = named(lock, name)
        count(name)
        scheduler.seam(participant, "acquire \(name)")
        while !isAbandoned, !plantedIgnoresHolders, !world.withLock({ $0.table.acquire(lock, by: participant, reentrant: reentrant, timeout: timeout) }) {
            scheduler.park(participant, "wait for \(name)")
            if world.withLock({ $0.table.tookTimeout(participant) }) { return false }
        }
        return true
    }

    func tryAcquire(_ lock: ControlledObject, name: String, reentrant: Bool, participant: Int) -> Bool {
        guard !isAbandoned else { return true }
        let name = named(lock, name)
        count(name)
        scheduler.seam(participant, "try \(name)")
        return world.withLock { $0.table.tryAcquire(lock, by: participant, reentrant: reentrant) }
    }

    func release(_ lock: ControlledObject, name: String, participant: Int) {
        guard !isAbandoned else { return }
        for waiter in world.withLock({ $0.table.release(lock, by: participant) }) { scheduler.unpark(waiter) }
    }

    func wait(on condition: ControlledObject, releasing lock: ControlledObject, name: String, timeout: Duration?, participant: Int) -> Bool {
        guard !isAbandoned else { return timeout != nil }
        let conditionName = named(condition, name)
        count(conditionName)
        let (released, waits) = world.withLock { $0.table.wait(on: condition, releasing: lock, by: participant, timeout: timeout) }
        for waiter in released { scheduler.unpark(waiter) }
        if waits { scheduler.park(participant, "wait on \(conditionName)") }
        let timedOut = waits && world.withLock { $0.table.tookTimeout(participant) }
        let lockName = world.withLock { $0.table.names[lock] } ?? name
        while !isAbandoned, !world.withLock({ $0.table.acquire(lock, by: participant) }) {
            scheduler.park(participant, "wait for \(lockName)")
        }
        return timedOut
    }

    func signal(_ condition: ControlledObject, all: Bool, outside: Bool) {
        guard !isAbandoned else { return }
        let (woken, name) = world.withLock { world in (world.table.signal(condition, all: all, outside: outside), world.table.names[condition]) }
        // A signal from outside the run that wakes a participant: the run waited for work it does
        // not schedule. (One that wakes nobody says nothing: the object's address may be another,
        // freed object's.)
        if outside, let first = woken.first { fromOutside("a thread outside the schedule signalled \(name ?? "a condition") that \(role(first)) waited on") }
        for waiter in woken { scheduler.unpark(waiter) }
    }

    func waitOnSemaphore(_ semaphore: ControlledObject, name: String, timeout: Duration?, participant: Int, take: () -> Bool) -> SemaphoreWait {
        guard !isAbandoned else { return .uncontrolled }
        let name = named(semaphore, name)
        count(name)
        scheduler.seam(participant, "wait on \(name)")
        while !isAbandoned {
            if take() { return .taken }
            guard world.withLock({ $0.table.waitOnSemaphore(semaphore, by: participant, timeout: timeout) }) else { continue }
            scheduler.park(participant, "wait on \(name)")
            if world.withLock({ $0.table.tookTimeout(participant) }) { return .timedOut }
        }
        return .uncontrolled
    }

    func signalSemaphore(_ semaphore: ControlledObject, outside: Bool) {
        guard !isAbandoned else { return }
        let (woken, name) = world.withLock { world in (world.table.signalSemaphore(semaphore, outside: outside), world.table.names[semaphore]) }
        if outside, let first = woken.first { fromOutside("a thread outside the schedule signalled \(name ?? "a semaphore") that \(role(first)) waited on") }
        for waiter in woken { scheduler.unpark(waiter) }
    }

    /// A point of the phase's own (a call's start, the clock's crossing), not the provider's.
    func callPoint(_ participant: Int, _ name: String) {
        guard !isAbandoned else { return }
        scheduler.seam(participant, name)
    }

    func point(_ name: String, participant: Int) {
        guard !isAbandoned else { return }
        clockPoints.add(1, ordering: .relaxed)
        scheduler.seam(participant, name)
    }

    func enqueue(_ job: UnownedJob, participant: Int) {
        post("a job of the Swift global executor", participant: participant) {
            job.runSynchronously(on: ScheduleExecutor.shared.asUnownedTaskExecutor())
        }
    }

    func post(_ name: String, participant: Int, _ body: @escaping @Sendable () -> Void) {
        let number = world.withLock { world -> Int in
            world.jobs += 1
            return world.jobs
        }
        join("job \(number)", parent: participant, body)
    }

    func after(_ delay: Duration, name: String, participant: Int, _ body: @escaping @Sendable () -> Void) {
        world.withLock { world in
            let timer = world.table.setTimer(after: delay)
            world.timers[timer] = Timer(participant: participant, name: name, body: body)
        }
    }

    func outside(_ what: String, participant: Int) {
        fromOutside("\(role(participant)) handed work to \(what) after '\(scheduler.lastSeam(of: participant))', which the kit does not schedule")
    }

    /// The provider's factory, making this schedule's instances, started `what` (a thread, a
    /// queue's work), which runs beside the schedule: the schedule is not fully controlled.
    func startedBeforeTheSchedule(_ what: String) {
        fromOutside("the provider's factory started \(what) while it made the instances, which the kit does not schedule")
    }

    /// The run depends on work it does not schedule: it is partially controlled, and a wait that
    /// work may end is not a deadlock.
    private func fromOutside(_ reason: String) {
        world.withLock { $0.outsideWork = true }
        scheduler.loseControl(reason)
    }

    /// Adds a participant, `what` (a job, a timer) posted by `parent`, that runs `body` as a
    /// participant of this run when chosen. It is described with the initial participant whose
    /// work it is: "job 4 (from thread 1)".
    private func join(_ what: String, parent: Int, _ body: @escaping @Sendable () -> Void) {
        let origin = world.withLock { $0.origins[parent] } ?? "participant \(parent)"
        let role = "\(what) (from \(origin))"
        // The new participant runs only when chosen, after its parent's next point (or after the
        // quiet world is done): its role is filed before anyone can ask for it.
        let participant = scheduler.spawnParticipant(role, parent: parent) { [self] participant in
            enter(participant)
            body()
            leave(participant)
        }
        world.withLock { world in
            world.roles[participant] = role
            world.origins[participant] = origin
        }
    }

    /// Nobody can go on: the run's time moves to the earliest timed wait or timer.
    private func quiesce() -> ControlledScheduler.Quiet {
        let (event, timer, outside) = world.withLock { world -> (LockTable.TimeEvent?, Timer?, Bool) in
            let event = world.table.advance()
            var timer: Timer?
            if case .timer(let number) = event {
                timer = world.timers.removeValue(forKey: number)
                world.timersRun += 1
            }
            return (event, timer, world.outsideWork)
        }
        switch event {
        case .timedOut(let participant):
            scheduler.unpark(participant)
            return .acted
        case .timer:
            if let timer { join("timer \(timer.name)", parent: timer.participant, timer.body) }
            return .acted
        case nil:
            return outside ? .awaitingOutside : .idle
        }
    }
}
