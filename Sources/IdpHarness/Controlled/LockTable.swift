/// Who holds which controlled lock in a controlled run, and who waits for a lock or on a
/// condition: a plain value, asked under its storage's lock (``ScheduledLocks``), which then parks
/// or unparks participants as it says.
///
/// Locks and conditions are named by the identity of their object. Waiters are kept in arrival
/// order and a timed-out waiter is the lowest-numbered one, so what it decides repeats with the
/// schedule (it never depends on a dictionary's order).
struct LockTable: Sendable, Equatable {
    struct Waiter: Sendable, Equatable {
        let participant: Int
        let timed: Bool
    }

    /// The participant holding each lock.
    private(set) var holders: [ObjectIdentifier: Int] = [:]
    /// The participants waiting for each lock, in arrival order.
    private(set) var lockWaiters: [ObjectIdentifier: [Int]] = [:]
    /// The participants waiting on each condition, in arrival order.
    private(set) var conditionWaiters: [ObjectIdentifier: [Waiter]] = [:]
    /// Participants whose condition wait ended by its timeout, until they learn it.
    private var timedOut: Set<Int> = []
    /// Each lock's name, for a deadlock's description.
    private(set) var names: [ObjectIdentifier: String] = [:]

    /// `participant` asks for `lock`: whether it now holds it; if not, it waits for it (a lock
    /// it holds itself included: the controlled locks are not reentrant).
    mutating func acquire(_ lock: ObjectIdentifier, name: String, by participant: Int) -> Bool {
        names[lock] = name
        guard holders[lock] == nil else {
            lockWaiters[lock, default: []].append(participant)
            return false
        }
        holders[lock] = participant
        return true
    }

    /// `participant` tries `lock`: whether it now holds it. Never waits.
    mutating func tryAcquire(_ lock: ObjectIdentifier, name: String, by participant: Int) -> Bool {
        names[lock] = name
        guard holders[lock] == nil else { return false }
        holders[lock] = participant
        return true
    }

    /// `participant` released `lock`: the participants that waited for it, to be unparked (each
    /// asks again). A release by a participant that does not hold it changes nothing.
    mutating func release(_ lock: ObjectIdentifier, by participant: Int) -> [Int] {
        guard holders[lock] == participant else { return [] }
        holders[lock] = nil
        return lockWaiters.removeValue(forKey: lock) ?? []
    }

    /// `participant`, holding `lock`, waits on `condition`: it releases the lock (the returned
    /// participants waited for it) and waits for a signal, or with `timed`, for its timeout.
    mutating func wait(on condition: ObjectIdentifier, releasing lock: ObjectIdentifier, by participant: Int, timed: Bool) -> [Int] {
        conditionWaiters[condition, default: []].append(Waiter(participant: participant, timed: timed))
        return release(lock, by: participant)
    }

    /// A signal on `condition`: the first waiter (`all`: every one), to be unparked.
    mutating func signal(_ condition: ObjectIdentifier, all: Bool) -> [Int] {
        guard var waiters = conditionWaiters[condition], !waiters.isEmpty else { return [] }
        let woken = all ? waiters : [waiters.removeFirst()]
        conditionWaiters[condition] = all || waiters.isEmpty ? nil : waiters
        return woken.map(\.participant)
    }

    /// Nothing else can go on: the lowest-numbered participant in a timed wait has its wait end
    /// by its timeout (to be unparked), or `nil` when no wait is timed.
    mutating func timeOutOne() -> Int? {
        let timed = conditionWaiters.flatMap { condition, waiters in waiters.filter(\.timed).map { (condition, $0.participant) } }
        guard let (condition, participant) = timed.min(by: { $0.1 < $1.1 }) else { return nil }
        conditionWaiters[condition]?.removeAll { $0.participant == participant }
        if conditionWaiters[condition]?.isEmpty == true { conditionWaiters[condition] = nil }
        timedOut.insert(participant)
        return participant
    }

    /// Whether `participant`'s last condition wait ended by its timeout; forgets it.
    mutating func tookTimeout(_ participant: Int) -> Bool {
        timedOut.remove(participant) != nil
    }

    /// What each waiting participant waits for, and who holds it, by participant: for a
    /// deadlock's description.
    var waits: [Int: String] {
        var waits: [Int: String] = [:]
        for (lock, waiters) in lockWaiters {
            let holder = holders[lock].map { "held by thread \($0)" } ?? "free"
            for waiter in waiters { waits[waiter] = "waits for \(names[lock] ?? "a lock") (\(holder))" }
        }
        for (condition, waiters) in conditionWaiters {
            for waiter in waiters { waits[waiter.participant] = "waits on \(names[condition] ?? "a condition") for a signal no thread sends" }
        }
        return waits
    }
}
