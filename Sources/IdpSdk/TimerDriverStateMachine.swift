/// The decisions of the ``TimerDriver`` as a plain value: which shards it serves, and whether its
/// thread is stopped, looking at the shards or sleeping. Shards register and wake it from any
/// thread while its own thread looks and sleeps, so whether to start the thread, signal it, let it
/// sleep or let it exit is decided here, under the driver's lock, and acted on after it.
///
/// It never reads a shard: what it knows of one is the token of the registration that put it in
/// the table. A shard decides on its own, under its own lock, that the driver may stop serving it
/// (``FlowTimerShardStateMachine/LookAction/idle(token:)``), and the driver then forgets that
/// registration under this lock. So no lock is taken while another is held.
///
/// Why an arm that re-registers a shard while the driver finds it idle loses no timer:
/// 1. The shard's machine leaves ``FlowTimerShardStateMachine/Registration/unregistered`` only
///    in an arm, which inserts its timer and takes a new token `k`, larger than every token of that
///    shard before it, in the same lock section; and it becomes unregistered only in the driver's
///    look, with its heap empty, returning `idle(token: j)` for the registration it ends (`j < k`).
///    Both happen under the shard's lock, so one comes first.
/// 2. The arm then calls ``register(_:key:token:)`` (here, `k`), and the driver
///    ``forget(_:token:)`` (here, `j`). Both run under the driver's lock, in either order:
///    - forget first: it removes the entry (holding `j` or less), and register puts `k` back;
///    - register first: the entry holds `k` (a register keeps the larger token), and the forget of
///      `j` finds `k`, not `j`, and leaves it.
///    Either way the table ends with the shard under `k` while the shard holds timers under `k`;
///    and the registration wakes the thread (or starts it), so the next look includes the shard.
/// 3. A forget removes only the token it names, and a shard names `k` only once it is
///    unregistered after `k`: its heap found empty for ``FlowTimerShardStateMachine/linger``, and
///    no arm since (an arm would have taken a newer token). So a removal never takes away a
///    registration whose shard has timers.
/// 4. A late register (its arm's thread delayed past the driver's forget of that very token) may
///    leave an entry for an unregistered shard; the shard's next look answers `idle` with its
///    latest token, which then matches, and the entry goes. So no entry keeps the thread alive
///    for ever.
///
/// Generic over the shard only so that its tests can use plain objects; the SDK uses
/// `any DrivenTimers`.
struct TimerDriverStateMachine<Shard> {
    /// The driver's thread.
    enum Thread: Equatable, Sendable {
        /// No thread: the next registration starts one.
        case stopped
        /// The thread is looking at the shards; `woken`: a registration or wake came since it took
        /// its list of shards, so it must look again before it sleeps.
        case looking(woken: Bool)
        /// The thread waits on the lock's condition; a registration or wake must signal it.
        case sleeping
    }

    /// What a registration or a wake does after the lock.
    enum Signal: Equatable, Sendable {
        /// Nothing: the thread will look again before it sleeps, or there is no thread to wake.
        case none
        /// Signal the sleeping thread.
        case signal
        /// Start the thread.
        case startThread
    }

    /// What the thread does after looking at every shard (``sleep(_:timedOut:)``).
    enum SleepAction: Equatable, Sendable {
        /// Look at the shards again now.
        case lookAgain
        /// Wait on the condition this long (`nil`: until signalled), then decide again.
        case wait(Duration?)
        /// Exit: no shard is served; the next registration starts a new thread.
        case stop
    }

    /// How long the shards let the thread sleep, gathered from their looks.
    struct Nap: Equatable, Sendable {
        /// The shortest wait a shard asked for.
        private(set) var shortest: Duration?
        /// Whether a shard waits for its clock to move, which wakes the thread.
        private(set) var untilWoken = false

        init() {}

        /// Takes in one shard's wait (`nil`: until woken).
        mutating func include(_ wait: Duration?) {
            guard let wait else { untilWoken = true; return }
            shortest = min(shortest ?? wait, wait)
        }

        /// How long to sleep: the shortest wait; with none, until woken if a shard waits for
        /// that, else ``TimerDriverStateMachine/keepAlive`` (no shard left, or every one idle).
        var timeout: Duration? { shortest ?? (untilWoken ? nil : TimerDriverStateMachine.keepAlive) }
    }

    /// How long the thread stays with no shard to serve before it exits.
    static var keepAlive: Duration { .seconds(2) }

    private(set) var thread = Thread.stopped
    private var shards: [ObjectIdentifier: (shard: Shard, token: UInt64)] = [:]

    init() {}

    /// The number of shards served.
    var served: Int { shards.count }

    /// The token under which the shard `key` is served, or `nil` if it is not.
    func token(of key: ObjectIdentifier) -> UInt64? { shards[key]?.token }

    /// Serves `shard` (whose identity is `key`) under registration `token`, until
    /// ``forget(_:token:)`` names that token. An older token than the one held changes nothing.
    mutating func register(_ shard: Shard, key: ObjectIdentifier, token: UInt64) -> Signal {
        shards[key] = (shard, max(token, shards[key]?.token ?? 0))
        return wake()
    }

    /// Makes the thread look at every shard again (an earlier deadline, a moved clock).
    mutating func wake() -> Signal {
        switch thread {
        case .stopped:
            guard !shards.isEmpty else { return .none }
            thread = .looking(woken: false)
            return .startThread
        case .looking:
            thread = .looking(woken: true)
            return .none
        case .sleeping:
            thread = .looking(woken: true)
            return .signal
        }
    }

    /// The thread starts a round of looks: the shards to look at.
    mutating func beginLook() -> [Shard] {
        precondition(thread != .stopped, "only the driver's thread looks, and it runs")
        thread = .looking(woken: false)
        return shards.values.map(\.shard)
    }

    /// Stops serving the shard `key` under registration `token`: a shard that registered again
    /// since (a larger token) stays.
    mutating func forget(_ key: ObjectIdentifier, token: UInt64) {
        guard shards[key]?.token == token else { return }
        shards[key] = nil
    }

    /// The thread has looked at every shard and fired nothing: whether it sleeps, for how long,
    /// or exits. Called again after each wait, with `timedOut` saying whether the wait ran out.
    mutating func sleep(_ nap: Nap, timedOut: Bool) -> SleepAction {
        switch thread {
        case .stopped:
            preconditionFailure("only the driver's thread sleeps, and it runs")
        case .looking(woken: true):
            return .lookAgain
        case .looking(woken: false):
            thread = .sleeping
            return .wait(nap.timeout)
        case .sleeping:
            // Woken with nothing new (a signal another decision already took, or a spurious
            // wake-up): sleep again.
            guard timedOut else { return .wait(nap.timeout) }
            guard shards.isEmpty else {
                thread = .looking(woken: false)
                return .lookAgain
            }
            thread = .stopped
            return .stop
        }
    }
}

extension TimerDriverStateMachine: Sendable where Shard: Sendable {}
