import IdpPrimitives

/// Who holds which lock in a controlled run, who waits for a lock, on a condition or on a
/// semaphore, which timers are set, and the run's own time: a plain value, asked under its
/// storage's lock (``ScheduledLocks``), which then parks or unparks participants as it says.
///
/// Locks, conditions and semaphores are known by their address (``ControlledObject``). Waiters
/// are kept in arrival order. The run's time moves only when nothing else can go on: then the
/// earliest of the timed waits and the timers ends (``advance()``), ties going to the one set
/// first, so what it decides repeats with the schedule (it never depends on a dictionary's order
/// or on the machine's clock).
struct LockTable: Sendable, Equatable {
    /// A participant waiting, with when its wait ends by its timeout (`nil`: never).
    struct Waiter: Sendable, Equatable {
        let participant: Int
        let deadline: Deadline?
    }

    /// A point of the run's time: nanoseconds since it began, and the order in which it was set,
    /// which breaks ties.
    struct Deadline: Sendable, Equatable, Comparable {
        let nanoseconds: Int64
        let order: Int

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.nanoseconds, lhs.order) < (rhs.nanoseconds, rhs.order)
        }
    }

    /// A lock's holder, and how many times it took it (a reentrant lock's depth).
    struct Hold: Sendable, Equatable {
        let participant: Int
        var depth: Int
    }

    /// What the run's time reached when nothing else could go on.
    enum TimeEvent: Sendable, Equatable {
        /// This participant's wait ended by its timeout.
        case timedOut(Int)
        /// This timer is due.
        case timer(Int)
    }

    /// The holder of each lock.
    private(set) var holders: [ControlledObject: Hold] = [:]
    /// The participants waiting for each lock, in arrival order.
    private(set) var lockWaiters: [ControlledObject: [Waiter]] = [:]
    /// The participants waiting on each condition, in arrival order.
    private(set) var conditionWaiters: [ControlledObject: [Waiter]] = [:]
    /// The participants waiting on each semaphore, in arrival order.
    private(set) var semaphoreWaiters: [ControlledObject: [Waiter]] = [:]
    /// Signals from outside the run that found no participant waiting on their semaphore or
    /// condition: the next wait on it tries again (a condition's waiter wakes at once, as a
    /// spurious wake-up may) instead of waiting. An outside thread may signal between a
    /// participant's look at its state and its wait, which the run cannot order.
    private var unclaimedSignals: [ControlledObject: Int] = [:]
    /// The timers set and not yet due, by number.
    private(set) var timers: [Int: Deadline] = [:]
    private var nextTimer = 0
    /// Participants whose wait ended by its timeout, until they learn it.
    private var timedOut: Set<Int> = []
    /// Each object's name, for a deadlock's description: the name it was last used under. An
    /// intercepted object is named by its kind ("mutex", "semaphore"): its address may be reused
    /// by another object once it is freed, which the run does not see.
    private(set) var names: [ControlledObject: String] = [:]
    /// The run's time, in nanoseconds since it began: moved only by ``advance()``.
    private(set) var now: Int64 = 0
    private var order = 0

    /// Names `object` `name` from now on.
    mutating func name(_ object: ControlledObject, _ name: String) {
        names[object] = name
    }

    /// A deadline `timeout` from now: rounded up to the millisecond, so a timeout computed from
    /// the machine's clock a few microseconds late lands on the same deadline.
    private mutating func deadline(after timeout: Duration?) -> Deadline? {
        guard let timeout else { return nil }
        order += 1
        let nanoseconds = max(Int64(0), timeout.nanoseconds)
        let milliseconds = (nanoseconds + 999_999) / 1_000_000
        let (sum, overflow) = now.addingReportingOverflow(milliseconds &* 1_000_000)
        return Deadline(nanoseconds: overflow || milliseconds > Int64.max / 1_000_000 ? .max : sum, order: order)
    }

    /// `participant` asks for `lock`: whether it now holds it; if not, it waits for it (with a
    /// `timeout`, until nothing else can go on). A lock it holds itself is taken again only if
    /// `reentrant`; otherwise it waits for itself, a deadlock.
    mutating func acquire(_ lock: ControlledObject, by participant: Int, reentrant: Bool = false, timeout: Duration? = nil) -> Bool {
        if tryAcquire(lock, by: participant, reentrant: reentrant) { return true }
        lockWaiters[lock, default: []].append(Waiter(participant: participant, deadline: deadline(after: timeout)))
        return false
    }

    /// `participant` tries `lock`: whether it now holds it. Never waits.
    mutating func tryAcquire(_ lock: ControlledObject, by participant: Int, reentrant: Bool = false) -> Bool {
        if let hold = holders[lock] {
            guard reentrant, hold.participant == participant else { return false }
            holders[lock]?.depth += 1
            return true
        }
        holders[lock] = Hold(participant: participant, depth: 1)
        return true
    }

    /// `participant` released `lock` once: the participants that waited for it, to be unparked
    /// (each asks again), once its last hold is released. A release by a participant that does
    /// not hold it changes nothing.
    mutating func release(_ lock: ControlledObject, by participant: Int) -> [Int] {
        guard let hold = holders[lock], hold.participant == participant else { return [] }
        guard hold.depth <= 1 else {
            holders[lock]?.depth -= 1
            return []
        }
        holders[lock] = nil
        return (lockWaiters.removeValue(forKey: lock) ?? []).map(\.participant)
    }

    /// `participant`, holding `lock`, waits on `condition`: it releases the lock (the returned
    /// participants waited for it) and waits for a signal, or with a `timeout`, until nothing else
    /// can go on. `waits` says whether it waits: not when a signal from outside the run came, with
    /// nobody waiting, since the run last met the condition (it wakes at once).
    mutating func wait(on condition: ControlledObject, releasing lock: ControlledObject, by participant: Int,
                       timeout: Duration?) -> (released: [Int], waits: Bool) {
        let released = release(lock, by: participant)
        if let unclaimed = unclaimedSignals[condition], unclaimed > 0 {
            unclaimedSignals[condition] = unclaimed == 1 ? nil : unclaimed - 1
            return (released, false)
        }
        conditionWaiters[condition, default: []].append(Waiter(participant: participant, deadline: deadline(after: timeout)))
        return (released, true)
    }

    /// A signal on `condition`: the first waiter (`all`: every one), to be unparked. `outside`,
    /// with nobody waiting on a condition the run knows, the signal is kept for the next wait.
    mutating func signal(_ condition: ControlledObject, all: Bool, outside: Bool = false) -> [Int] {
        guard var waiters = conditionWaiters[condition], !waiters.isEmpty else {
            if outside, names[condition] != nil { unclaimedSignals[condition] = 1 }
            return []
        }
        let woken = all ? waiters : [waiters.removeFirst()]
        conditionWaiters[condition] = all || waiters.isEmpty ? nil : waiters
        return woken.map(\.participant)
    }

    /// `participant` found `semaphore` empty: whether it waits for a signal (with a `timeout`,
    /// until nothing else can go on); `false` when a signal from outside the run came since, so it
    /// tries again at once.
    mutating func waitOnSemaphore(_ semaphore: ControlledObject, by participant: Int, timeout: Duration?) -> Bool {
        if let unclaimed = unclaimedSignals[semaphore], unclaimed > 0 {
            unclaimedSignals[semaphore] = unclaimed == 1 ? nil : unclaimed - 1
            return false
        }
        semaphoreWaiters[semaphore, default: []].append(Waiter(participant: participant, deadline: deadline(after: timeout)))
        return true
    }

    /// A signal on `semaphore`: its first waiter, to be unparked (it tries again); `outside`, with
    /// nobody waiting on a semaphore the run has waited on, the signal is kept for the next wait.
    mutating func signalSemaphore(_ semaphore: ControlledObject, outside: Bool) -> [Int] {
        guard var waiters = semaphoreWaiters[semaphore], !waiters.isEmpty else {
            if outside, names[semaphore] != nil { unclaimedSignals[semaphore, default: 0] += 1 }
            return []
        }
        let woken = waiters.removeFirst()
        semaphoreWaiters[semaphore] = waiters.isEmpty ? nil : waiters
        return [woken.participant]
    }

    /// Sets a timer due `delay` from now; returns its number.
    mutating func setTimer(after delay: Duration) -> Int {
        nextTimer += 1
        timers[nextTimer] = deadline(after: delay)
        return nextTimer
    }

    /// Whether anything ends on its own: a timed wait or a timer.
    var hasTimeEvents: Bool { !timers.isEmpty || earliestTimedWait() != nil }

    /// Nothing else can go on: the run's time moves to the earliest deadline of a timed wait or a
    /// timer, and that wait ends (its participant, to be unparked) or that timer is due; `nil`
    /// when nothing ends on its own.
    mutating func advance() -> TimeEvent? {
        let wait = earliestTimedWait()
        let timer = timers.min { $0.value < $1.value }
        if let timer, wait.map({ timer.value < $0.deadline }) ?? true {
            timers[timer.key] = nil
            now = max(now, timer.value.nanoseconds)
            return .timer(timer.key)
        }
        guard let wait else { return nil }
        now = max(now, wait.deadline.nanoseconds)
        func remove(_ table: inout [ControlledObject: [Waiter]]) {
            table[wait.object]?.removeAll { $0.participant == wait.participant }
            if table[wait.object]?.isEmpty == true { table[wait.object] = nil }
        }
        switch wait.kind {
        case .lock: remove(&lockWaiters)
        case .condition: remove(&conditionWaiters)
        case .semaphore: remove(&semaphoreWaiters)
        }
        timedOut.insert(wait.participant)
        return .timedOut(wait.participant)
    }

    private enum WaitKind { case lock, condition, semaphore }

    private func earliestTimedWait() -> (participant: Int, object: ControlledObject, kind: WaitKind, deadline: Deadline)? {
        var earliest: (participant: Int, object: ControlledObject, kind: WaitKind, deadline: Deadline)?
        for (kind, table) in [(WaitKind.lock, lockWaiters), (.condition, conditionWaiters), (.semaphore, semaphoreWaiters)] {
            for (object, waiters) in table {
                for waiter in waiters {
                    guard let deadline = waiter.deadline else { continue }
                    if earliest.map({ deadline < $0.deadline }) ?? true { earliest = (waiter.participant, object, kind, deadline) }
                }
            }
        }
        return earliest
    }

    /// Whether `participant`'s last wait ended by its timeout; forgets it.
    mutating func tookTimeout(_ participant: Int) -> Bool {
        timedOut.remove(participant) != nil
    }

    /// What each waiting participant waits for, and who holds it, by participant, each
    /// participant named by `describe`: for a deadlock's description.
    func waits(describing describe: (Int) -> String) -> [Int: String] {
        var waits: [Int: String] = [:]
        for (lock, waiters) in lockWaiters {
            let holder = holders[lock].map { "held by \(describe($0.participant))" } ?? "free"
            for waiter in waiters { waits[waiter.participant] = "waits for \(names[lock] ?? "a lock") (\(holder))" }
        }
        for (condition, waiters) in conditionWaiters {
            for waiter in waiters { waits[waiter.participant] = "waits on \(names[condition] ?? "a condition") for a signal no thread sends" }
        }
        for (semaphore, waiters) in semaphoreWaiters {
            for waiter in waiters { waits[waiter.participant] = "waits on \(names[semaphore] ?? "a semaphore") for a signal no thread sends" }
        }
        return waits
    }
}
