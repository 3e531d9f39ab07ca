import Foundation

/// The decisions of one ``FlowTimerShard`` as a plain value: its deadlines and whether the
/// ``TimerDriver`` serves it. A shard is armed and cancelled on any thread while the driver looks
/// at it from its own, and whether the driver must be told (register, wake) depends on both; so
/// every such decision is taken here, under the shard's lock, from inputs read before it (the
/// clock, the monotonic time), and acted on by the storage after the lock.
///
/// Generic over the payload only so that its tests can use payloads of their own; the SDK uses
/// ``Flow``.
///
/// The rules it keeps:
/// - an arm that finds the shard ``Registration/unregistered`` registers it, under a token no
///   earlier registration of this shard had (so the driver can tell a stale removal from a fresh
///   registration: see ``TimerDriverStateMachine``); any other arm registers nothing;
/// - the driver stops serving the shard only after finding its heap empty for ``linger``, with no
///   arm in between;
/// - a shard that fires on the thread that moves its clock (``Pacing/inline``) never registers.
struct FlowTimerShardStateMachine<Payload: DeadlineHeapElement> {
    /// How the driver learns that a shard's clock has moved.
    enum Pacing: Sendable {
        /// The system clock: sleep until the earliest deadline, at most ``longestSystemSleep``.
        case system
        /// A ``ManualClock`` that wakes the driver when it moves.
        case woken
        /// A clock that cannot say when it moves: look every ``pollPeriod``.
        case polled
        /// A controlled run's ``ManualClock``: due timers fire on the thread that moves it.
        case inline
    }

    /// Whether the driver serves this shard. Each registration has a token, counted from 1.
    enum Registration: Equatable, Sendable {
        /// The driver does not serve it: nothing was armed since the driver found the heap empty
        /// for ``linger``, or ever.
        case unregistered
        /// The driver serves it, and has not found its heap empty since the last arm.
        case registered(token: UInt64)
        /// The driver serves it and found its heap empty at `since` (monotonic nanoseconds), with
        /// no arm since.
        case emptySince(UInt64, token: UInt64)
    }

    /// What the storage does after an arm, the lock released.
    enum ArmAction {
        /// Nothing: the driver looks at this shard soon enough.
        case none
        /// Register the shard with the driver under this token.
        case register(token: UInt64)
        /// Wake the driver: the new deadline is earlier than it will look on its own.
        case wake
        /// Time these out now, on this thread, in order (``Pacing/inline``).
        case fire([Payload])
    }

    /// What the driver does after one look at this shard, the lock released.
    enum LookAction {
        /// Time these out, in order, then look again at once.
        case fire([Payload])
        /// Look again within this long (`nil`: when woken).
        case wait(Duration?)
        /// Stop serving the shard: forget its registration `token` (and only that one).
        case idle(token: UInt64)
    }

    /// How often the driver looks at a clock that is neither the system's nor a ``ManualClock``.
    static var pollPeriod: Duration { .milliseconds(10) }
    /// How long the driver keeps serving a heap that has become empty (so a service whose flows
    /// come one at a time does not register and wake the driver for each), and the longest it
    /// may sleep on a registered heap of a system or polled clock without being woken.
    static var linger: Duration { .seconds(2) }
    /// The longest the driver sleeps on the system clock, so that a wall-clock jump is noticed
    /// within it.
    static var longestSystemSleep: Duration { .seconds(1) }

    let pacing: Pacing
    private(set) var registration = Registration.unregistered
    /// The token of the latest registration (0: none yet).
    private(set) var lastToken: UInt64 = 0
    private(set) var deadlines = DeadlineHeap<Payload>()

    init(pacing: Pacing) { self.pacing = pacing }

    /// Timers armed and not yet fired or cancelled.
    var armed: Int { deadlines.count }

    /// How many times the heap grew by a chunk made under the shard's lock (see
    /// ``DeadlineHeap/chunksMadeUnderLock``).
    var chunksMadeUnderLock: Int { deadlines.chunksMadeUnderLock }

    /// Arms `payload`'s timer for `deadline`; `now` is the shard's clock, read before the lock.
    /// A payload armed already (and not fired or cancelled) is left as it is: ``ArmAction/none``.
    mutating func arm(_ payload: Payload, at deadline: Date, now: Date) -> ArmAction {
        let earliest = deadlines.nextDeadline
        guard deadlines.insert(payload, deadline: deadline) else { return .none }
        if pacing == .inline {
            return deadline <= now ? .fire(deadlines.popDue(at: now)) : .none
        }
        switch registration {
        case .unregistered:
            lastToken += 1
            registration = .registered(token: lastToken)
            return .register(token: lastToken)
        case .registered(let token), .emptySince(_, let token):
            registration = .registered(token: token)
            // The driver looks at a registered heap again within `linger` (system and polled
            // clocks) or when the clock moves (a manual clock): only a deadline before that, and
            // before every deadline it knows of, needs a wake.
            let soon = pacing == .woken ? deadline <= now : deadline < now.addingTimeInterval(Self.linger.timeInterval)
            let first = earliest.map { deadline < $0 } ?? true
            return soon && first ? .wake : .none
        }
    }

    /// Forgets `payload`'s timer (its flow ended). The driver needs no word: it finds the heap
    /// empty on its next look.
    mutating func cancel(_ payload: Payload) {
        deadlines.remove(payload)
    }

    /// The slots of the heap's next chunk, to make after the lock, or 0 (see
    /// ``DeadlineHeap/takeSpareRequest()``).
    mutating func takeSpareRequest() -> Int? { deadlines.takeSpareRequest() }

    /// Hands in a heap chunk made after the lock (see ``DeadlineHeap/install(_:)``).
    mutating func install(_ made: inout DeadlineHeap<Payload>.Chunk?) { deadlines.install(&made) }

    /// Takes the timers due at `now`, earliest first (``Pacing/inline``: the clock moved).
    mutating func takeDue(at now: Date) -> [Payload] {
        deadlines.popDue(at: now)
    }

    /// The driver's look: `now` is the shard's clock and `monotonic` the uptime in nanoseconds,
    /// both read before the lock.
    mutating func look(now: Date, monotonic: UInt64) -> LookAction {
        let token: UInt64
        switch registration {
        case .unregistered:
            // A registration the driver still holds after the shard left it: drop it.
            return .idle(token: lastToken)
        case .registered(let registered), .emptySince(_, let registered):
            token = registered
        }
        let due = deadlines.popDue(at: now)
        if !due.isEmpty { return .fire(due) }
        guard let next = deadlines.nextDeadline else {
            guard case .emptySince(let since, _) = registration else {
                registration = .emptySince(monotonic, token: token)
                return .wait(Self.linger)
            }
            let empty = Duration.nanoseconds(Int64(bitPattern: monotonic &- since))
            guard empty >= Self.linger else { return .wait(Self.linger - empty) }
            registration = .unregistered
            return .idle(token: token)
        }
        return switch pacing {
        case .system: .wait(min(Self.longestSystemSleep, .seconds(max(0, next.timeIntervalSince(now)))))
        case .woken: .wait(nil)
        case .polled: .wait(Self.pollPeriod)
        case .inline: .idle(token: token)   // never registered: not reached
        }
    }
}

extension FlowTimerShardStateMachine: Sendable where Payload: Sendable {}
extension FlowTimerShardStateMachine.ArmAction: Equatable where Payload: Equatable {}
extension FlowTimerShardStateMachine.LookAction: Equatable where Payload: Equatable {}
