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
    private let shards: [FlowTimerShard]
    /// `shards.count - 1` (a power of two minus one).
    private let mask: Int

    /// - Parameter firesOnMove: With a ``ManualClock``, fire due timeouts on the thread that moves
    ///   the clock (see ``FlowTimerShard/init(clock:firesOnMove:)``).
    init(clock: any IdpClock, firesOnMove: Bool = false) {
        let count = clock is SystemClock && !firesOnMove ? ThreadStripe.count : 1
        shards = (0..<count).map { _ in FlowTimerShard(clock: clock, firesOnMove: firesOnMove) }
        mask = count - 1
    }

    private func shard(_ flow: Flow) -> FlowTimerShard { shards[Int(truncatingIfNeeded: flow.id.rawValue) & mask] }

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

/// One shard of an ``IdpSdkService``'s flow timeouts (``FlowTimers``): one ``DeadlineHeap`` on the
/// service's clock, instead of a Dispatch timer per flow. One process-wide OS thread (``TimerDriver``) serves the
/// heaps of every service, so a process with many services does not hold a thread for each.
///
/// A flow's timer is armed when it starts and cancelled when it ends, so an ended flow is released
/// at once.
///
/// How long the driver may sleep depends on the clock:
/// - ``SystemClock``: until the earliest deadline, at most one second at a time (so a wall-clock
///   jump is noticed within a second);
/// - ``ManualClock``: until the clock is moved (``ManualClock`` wakes the driver), so a test that
///   advances the clock past a deadline sees the flow time out without waiting any wall time;
/// - any other ``IdpClock``: at most ``pollPeriod`` at a time, as it cannot say when it moves.
///
/// Expired flows are ended on the driver's thread after every lock is released; ``Flow`` hands
/// their completions to the worker pool from there.
final class FlowTimerShard: Sendable {
    /// How often the timers look at a clock that is neither the system's nor a ``ManualClock``.
    static let pollPeriod: Duration = .milliseconds(10)
    /// How long the driver keeps serving a heap that has become empty (so a service whose flows
    /// come one at a time does not register and wake the driver for each), and the longest it
    /// sleeps on a registered heap of a system or polled clock.
    static let linger: Duration = .seconds(2)

    private struct State: Sendable {
        var deadlines = DeadlineHeap<Flow>()
        /// Whether the driver serves this heap (it has or had timers since the driver last
        /// found it empty for ``FlowTimers/linger``).
        var registered = false
        /// When the driver first found the heap empty (monotonic ns), or `nil` while it has timers.
        var emptySince: UInt64?
    }

    /// `inline`: a controlled run's manual clock; due timers fire on the thread that moves it.
    private enum Pacing: Sendable { case system, woken, polled, inline }

    private let state = LockedValue(State(), label: "IdpSdk.FlowTimers")
    private let clock: any IdpClock
    private let pacing: Pacing

    /// - Parameter firesOnMove: With a ``ManualClock``, fire due timeouts on the thread that moves
    ///   the clock, in deadline order, instead of on the driver's thread (a controlled run, where
    ///   which thread does what must repeat).
    init(clock: any IdpClock, firesOnMove: Bool = false) {
        self.clock = clock
        if firesOnMove, let manual = clock as? ManualClock {
            pacing = .inline
            manual.whenMoved { [weak self] in
                guard let self else { return false }
                fireDue()
                return true
            }
        } else if clock is SystemClock {
            pacing = .system
        } else if let manual = clock as? ManualClock {
            pacing = .woken
            manual.whenMoved { [weak self] in
                guard self != nil else { return false }
                TimerDriver.shared.wake()
                return true
            }
        } else {
            pacing = .polled
        }
    }

    /// Times `flow` out at `deadline` on the service's clock, unless cancelled first.
    func arm(_ flow: Flow, at deadline: Date) {
        let now = clock.now()
        if pacing == .inline {
            state.withLock { $0.deadlines.insert(flow, id: flow.id.rawValue, deadline: deadline) }
            if deadline <= now { fireDue() }
            return
        }
        // The driver looks at a registered heap again within `linger` (system and polled clocks)
        // or when the clock moves (a manual clock): only a deadline before that needs a wake.
        let soon = pacing == .woken ? deadline <= now : deadline < now.addingTimeInterval(Self.linger.timeInterval)
        let action = state.withLock { state -> (register: Bool, wake: Bool) in
            let earliest = state.deadlines.nextDeadline()
            state.deadlines.insert(flow, id: flow.id.rawValue, deadline: deadline)
            state.emptySince = nil
            let register = !state.registered
            state.registered = true
            return (register, soon && earliest.map { deadline < $0 } ?? true)
        }
        if action.register {
            TimerDriver.shared.register(self)
        } else if action.wake {
            TimerDriver.shared.wake()
        }
    }

    /// Ends the flows whose deadline has passed, on the calling thread (``Pacing/inline`` only).
    private func fireDue() {
        let now = clock.now()
        let due = state.withLock { $0.deadlines.popDue(at: now) }
        for flow in due {
            flow.context.configuration.controller?.pause(at: Seam("timer", trace: flow.context.seamTrace))
            flow.timeOut()
        }
    }

    /// Forgets `flow`'s timer (it ended).
    func cancel(_ flow: Flow) {
        state.withLock { _ = $0.deadlines.remove(flow.id.rawValue) }
    }

    /// Timers armed and not yet fired or cancelled.
    var armed: Int { state.withLock { $0.deadlines.count } }

    /// Whether the driver is to serve this heap.
    var isRegistered: Bool { state.withLock { $0.registered } }

    /// What the driver is to do with this heap after one look.
    enum Look {
        /// Fire these flows' timeouts (after the lock), then look again.
        case fire([Flow])
        /// Look again within this long (`nil`: when woken).
        case wait(Duration?)
        /// Nothing is armed: stop serving this heap until the next ``arm(_:at:)``.
        case idle
    }

    /// The driver's look at this heap, on the driver's thread.
    func look() -> Look {
        let now = clock.now()
        return state.withLock { state -> Look in
            let due = state.deadlines.popDue(at: now)
            if !due.isEmpty { return .fire(due) }
            guard let next = state.deadlines.nextDeadline() else {
                let monotonic = DispatchTime.now().uptimeNanoseconds
                guard let emptySince = state.emptySince else {
                    state.emptySince = monotonic
                    return .wait(Self.linger)
                }
                let empty = Duration.nanoseconds(Int64(bitPattern: monotonic &- emptySince))
                guard empty >= Self.linger else { return .wait(Self.linger - empty) }
                state.registered = false
                state.emptySince = nil
                return .idle
            }
            return switch pacing {
            case .system: .wait(min(.seconds(1), .seconds(max(0, next.timeIntervalSince(now)))))
            case .woken: .wait(nil)
            case .polled: .wait(Self.pollPeriod)
            case .inline: .idle   // never registered with the driver
            }
        }
    }
}

/// The one OS thread (`IdpSdk-timers`) that fires the flow timeouts of every ``FlowTimerShard`` with
/// timers armed. It starts with the first armed timer and exits after two seconds with none.
final class TimerDriver: Sendable {
    static let shared = TimerDriver()

    private struct State: Sendable {
        var heaps: [ObjectIdentifier: FlowTimerShard] = [:]
        var threadRunning = false
        /// Bumped by every registration and wake: a sleeping driver that sees it changed looks again.
        var generation: UInt64 = 0
    }

    private let state = ConditionLockedValue(State(), label: "IdpSdk.TimerDriver")
    private let keepAlive: Duration = .seconds(2)

    /// Serves `timers` until it is found empty.
    func register(_ timers: FlowTimerShard) {
        let start = state.withLock { state -> Bool in
            state.heaps[ObjectIdentifier(timers)] = timers
            state.generation &+= 1
            guard !state.threadRunning else { return false }
            state.threadRunning = true
            return true
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "IdpSdk-timers"
            thread.start()
        } else {
            state.signal()
        }
    }

    /// Makes the driver look at every heap again (an earlier deadline, a moved clock).
    func wake() {
        state.withLock { $0.generation &+= 1 }
        state.signal()
    }

    private func run() {
        while true {
            let (heaps, generation) = state.withLock { (Array($0.heaps.values), $0.generation) }
            var sleep: Duration?
            var untilWoken = false
            var fired = false
            for timers in heaps {
                switch timers.look() {
                case .fire(let flows):
                    for flow in flows { flow.timeOut() }
                    fired = true
                case .wait(let wait):
                    if let wait { sleep = min(sleep ?? wait, wait) } else { untilWoken = true }
                case .idle:
                    // Forget it unless an arm re-registered it meanwhile (it then is registered
                    // again: its flag is set under its own lock before it registers here).
                    state.withLock { state in
                        if !timers.isRegistered { state.heaps[ObjectIdentifier(timers)] = nil }
                    }
                }
            }
            if fired { continue }
            if sleep == nil && !untilWoken { sleep = keepAlive }
            let keepRunning = state.wait { state, wake -> ConditionLockedValue<State>.Decision<Bool> in
                if state.generation != generation { return .done(true) }
                if wake != .timedOut { return .wait(timeout: sleep) }
                guard state.heaps.isEmpty else { return .done(true) }
                state.threadRunning = false
                return .done(false)
            }
            if !keepRunning { return }
        }
    }
}
