import IdpPrimitives
import Synchronization

/// The controlled primitives' side of one controlled run: a ``ControlledScheduler`` runs the
/// participants one at a time, and a ``LockTable`` says who holds which lock and who waits. A
/// participant asking for a lock another holds parks until that one releases it; one waiting on a
/// condition parks until a signal; when nobody can go on, the lowest-numbered timed waiter's wait
/// times out, and with no timed wait the scheduler ends the run as a deadlock.
///
/// Every acquisition, try, condition wait and clock read is a point where the scheduler may run
/// another participant. Releases and signals are not: the next point of the releasing participant
/// lets the woken ones go.
final class ScheduledLocks: ControlledSchedule {
    let scheduler: ControlledScheduler
    private let table = LockedValue(LockTable())
    /// Set once the run is given up (a deadlock): every call returns at once.
    private let abandoned = Atomic<Bool>(false)
    /// Points the participants reached inside the primitives: locks (acquisitions, tries, waits)
    /// and clock reads.
    private let lockPoints = Atomic<Int>(0)
    private let clockPoints = Atomic<Int>(0)
    private let ignoresHolders: Bool

    /// A run of `participants` threads.
    /// - Parameter ignoresHolders: Plants ``ControlledPhase/Plant/locksIgnoreHolders`` (tests only).
    init(participants: Int, strategy: ScheduleStrategy, seed: UInt64, replay: [Int], stallTimeout: Duration, ignoresHolders: Bool = false) {
        self.ignoresHolders = ignoresHolders
        let table = self.table
        let slot = LockedValue<ControlledScheduler?>(nil)
        scheduler = ControlledScheduler(participants: participants, strategy: strategy, seed: seed, replay: replay,
                                        stallTimeout: stallTimeout, deadlockTimeout: stallTimeout * 4,
                                        onQuiescence: {
                                            // Nobody can go on: a timed wait ends by its timeout.
                                            guard let participant = table.withLock({ $0.timeOutOne() }) else { return false }
                                            slot.withLock { $0 }?.unpark(participant)
                                            return true
                                        })
        slot.withLock { $0 = scheduler }
    }

    /// How many lock points and clock points the participants reached.
    var points: (locks: Int, clock: Int) { (lockPoints.load(ordering: .relaxed), clockPoints.load(ordering: .relaxed)) }

    /// What each participant still waits for (a deadlock's description).
    var waits: [Int: String] { table.withLock { $0.waits } }

    /// The run is over: a deadlock's parked participants stay parked, and a straggler's later calls
    /// (a participant set aside as uncontrolled) return at once.
    func abandon() {
        abandoned.store(true, ordering: .relaxed)
    }

    private var isAbandoned: Bool { abandoned.load(ordering: .relaxed) }

    func acquire(_ lock: ObjectIdentifier, name: String, participant: Int) {
        guard !isAbandoned else { return }
        lockPoints.add(1, ordering: .relaxed)
        scheduler.seam(participant, "acquire \(name)")
        while !isAbandoned, !ignoresHolders, !table.withLock({ $0.acquire(lock, name: name, by: participant) }) {
            scheduler.park(participant, "wait for \(name)")
        }
    }

    func tryAcquire(_ lock: ObjectIdentifier, name: String, participant: Int) -> Bool {
        guard !isAbandoned else { return true }
        lockPoints.add(1, ordering: .relaxed)
        scheduler.seam(participant, "try \(name)")
        return table.withLock { $0.tryAcquire(lock, name: name, by: participant) }
    }

    func release(_ lock: ObjectIdentifier, name: String, participant: Int) {
        guard !isAbandoned else { return }
        for waiter in table.withLock({ $0.release(lock, by: participant) }) { scheduler.unpark(waiter) }
    }

    func wait(on condition: ObjectIdentifier, releasing lock: ObjectIdentifier, name: String, timed: Bool, participant: Int) -> Bool {
        guard !isAbandoned else { return timed }
        lockPoints.add(1, ordering: .relaxed)
        for waiter in table.withLock({ $0.wait(on: condition, releasing: lock, by: participant, timed: timed) }) { scheduler.unpark(waiter) }
        scheduler.park(participant, "wait on \(name)")
        let timedOut = table.withLock { $0.tookTimeout(participant) }
        while !isAbandoned, !table.withLock({ $0.acquire(lock, name: name, by: participant) }) {
            scheduler.park(participant, "wait for \(name)")
        }
        return timedOut
    }

    func signal(_ condition: ObjectIdentifier, all: Bool) {
        guard !isAbandoned else { return }
        for waiter in table.withLock({ $0.signal(condition, all: all) }) { scheduler.unpark(waiter) }
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
}
