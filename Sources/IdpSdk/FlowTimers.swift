import Foundation
import IdpPrimitives

/// The flow timeouts of one ``IdpSdkService``, in shards: every flow arms a timeout when it
/// starts and cancels it when it ends, so with one heap behind one lock every flow of the service
/// would write the same cache lines. A flow's shard is picked by its id, so its start and its end
/// (often on different threads) find the same shard without remembering it.
///
/// On the system clock there are ``ThreadStripe/count`` shards. On any other clock there is one:
/// a test's manual clock fires its timeouts in deadline order, which shards would not keep.
final class FlowTimers: Sendable {
    private let shards: [FlowTimerShard<Flow>]
    /// `shards.count - 1` (a power of two minus one).
    private let mask: Int

    /// - Parameter firesOnMove: With a ``ManualClock``, fire due timeouts on the thread that moves
    ///   the clock (see ``FlowTimerShard/init(clock:firesOnMove:)``).
    init(clock: any IdpClock, firesOnMove: Bool = false) {
        let count = clock is SystemClock && !firesOnMove ? ThreadStripe.count : 1
        shards = (0..<count).map { _ in FlowTimerShard(clock: clock, firesOnMove: firesOnMove) }
        mask = count - 1
    }

    private func shard(_ flow: Flow) -> FlowTimerShard<Flow> { shards[Int(truncatingIfNeeded: flow.id.rawValue) & mask] }

    /// The deadline `timeout` after `now`: a negative timeout is due at once, and one over a
    /// hundred years is a hundred years.
    static func deadline(after timeout: Duration, from now: Date) -> Date {
        now.addingTimeInterval(min(max(0, timeout.timeInterval), 100 * 365 * 24 * 3600))
    }

    /// Times `flow` out at `deadline` on the service's clock, unless cancelled first.
    func arm(_ flow: Flow, at deadline: Date) { shard(flow).arm(flow, at: deadline) }

    /// Forgets `flow`'s timer (it ended).
    func cancel(_ flow: Flow) { shard(flow).cancel(flow) }

    /// Timers armed and not yet fired or cancelled, over every shard.
    var armed: Int { shards.reduce(0) { $0 + $1.armed } }
}

/// What a ``FlowTimerShard`` times out: a protocol so that a test can arm a payload of its own and
/// watch it fire; the SDK's payload is ``Flow``.
protocol FlowTimerPayload: DeadlineHeapElement, Sendable {
    /// The timer fired: end with a timeout. Called once, with no lock held.
    func timeOut()
    /// Called just before ``timeOut()`` when it runs on the thread that moved a controlled run's
    /// clock: the run's controller may pause there.
    func pauseAtTimerSeam()
}

extension Flow: FlowTimerPayload {
    func pauseAtTimerSeam() {
        context.shared.configuration.controller?.pause(at: Seam("timer", trace: context.seamTrace))
    }
}

/// One shard of an ``IdpSdkService``'s flow timeouts (``FlowTimers``): one ``DeadlineHeap`` on the
/// service's clock, instead of a Dispatch timer per flow. One process-wide OS thread
/// (``TimerDriver``) serves the shards of every service, so a process with many services does not
/// hold a thread for each.
///
/// The storage of a ``FlowTimerShardStateMachine``: each arm, cancel and look of the driver is one
/// section of its lock, the decision taken there and acted on after it (register with or wake the
/// driver, time flows out), so no other lock is ever taken while it is held.
///
/// How long the driver may sleep depends on the clock:
/// - ``SystemClock``: until the earliest deadline, at most one second at a time (so a wall-clock
///   jump is noticed within a second);
/// - ``ManualClock``: until the clock is moved (``ManualClock`` wakes the driver), so a test that
///   advances the clock past a deadline sees the flow time out without waiting any wall time;
/// - any other ``IdpClock``: at most ``FlowTimerShardStateMachine/pollPeriod`` at a time, as it
///   cannot say when it moves.
///
/// Expired flows are ended on the driver's thread after every lock is released; ``Flow`` hands
/// their completions to the worker pool from there.
final class FlowTimerShard<Payload: FlowTimerPayload>: DrivenTimers {
    typealias Machine = FlowTimerShardStateMachine<Payload>

    private let state: LockedValue<Machine>
    private let clock: any IdpClock

    /// - Parameter firesOnMove: With a ``ManualClock``, fire due timeouts on the thread that moves
    ///   the clock, in deadline order, instead of on the driver's thread (a controlled run, where
    ///   which thread does what must repeat).
    init(clock: any IdpClock, firesOnMove: Bool = false) {
        self.clock = clock
        let manual = clock as? ManualClock
        let pacing: Machine.Pacing =
            if firesOnMove && manual != nil {
                .inline
            } else if clock is SystemClock {
                .system
            } else if manual != nil {
                .woken
            } else {
                .polled
            }
        state = LockedValue(Machine(pacing: pacing), label: "IdpSdk.FlowTimers")
        switch pacing {
        case .inline:
            manual?.whenMoved { [weak self] in
                guard let self else { return false }
                let now = self.clock.now()
                fire(state.withLock { $0.takeDue(at: now) }, inline: true)
                return true
            }
        case .woken:
            manual?.whenMoved { [weak self] in
                guard self != nil else { return false }
                TimerDriver.shared.wake()
                return true
            }
        case .system, .polled:
            break
        }
    }

    /// Times `payload` out at `deadline` on the shard's clock, unless cancelled first.
    func arm(_ payload: Payload, at deadline: Date) {
        let now = clock.now()
        // A heap whose last chunk is three quarters full asks for its next chunk, made after the
        // lock and handed in under it.
        let action = state.withLockThenGrow({ $0.arm(payload, at: deadline, now: now) }, request: { $0.takeSpareRequest() },
                                            make: { DeadlineHeap<Payload>.makeChunk(slots: $0) }, install: { $0.install(&$1) })
        switch action {
        case .none: break
        case .register(let token): TimerDriver.shared.register(self, token: token)
        case .wake: TimerDriver.shared.wake()
        case .fire(let due): fire(due, inline: true)
        }
    }

    /// Forgets `payload`'s timer (it ended).
    func cancel(_ payload: Payload) {
        state.withLock { $0.cancel(payload) }
    }

    /// Timers armed and not yet fired or cancelled.
    var armed: Int { state.withLock { $0.armed } }

    /// How many times the shard's heap grew by a chunk made under its lock, for want of a spare.
    var chunksMadeUnderLock: Int { state.withLock { $0.chunksMadeUnderLock } }

    /// The driver's look at this shard, on the driver's thread.
    func look() -> TimerLook {
        let now = clock.now()
        let monotonic = DispatchTime.now().uptimeNanoseconds
        switch state.withLock({ $0.look(now: now, monotonic: monotonic) }) {
        case .fire(let due):
            fire(due, inline: false)
            return .fired
        case .wait(let wait):
            return .wait(wait)
        case .idle(let token):
            return .idle(token: token)
        }
    }

    /// Times out `due`, in order, with no lock held.
    private func fire(_ due: [Payload], inline: Bool) {
        for payload in due {
            if inline { payload.pauseAtTimerSeam() }
            payload.timeOut()
        }
    }
}
