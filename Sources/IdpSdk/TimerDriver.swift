import Foundation
import IdpPrimitives

/// What the ``TimerDriver`` serves: a protocol so that the driver holds shards of any payload
/// without knowing it (``FlowTimerShard``).
protocol DrivenTimers: AnyObject, Sendable {
    /// One look, on the driver's thread: times out what is due (after the shard's lock is
    /// released) and says when to look again.
    func look() -> TimerLook
}

/// What one look at a ``DrivenTimers`` found.
enum TimerLook: Equatable, Sendable {
    /// Timers fired: look again at once.
    case fired
    /// Look again within this long (`nil`: when woken).
    case wait(Duration?)
    /// Nothing is armed: stop serving it under registration `token`.
    case idle(token: UInt64)
}

/// The one OS thread (`IdpSdk-timers`) that fires the flow timeouts of every ``FlowTimerShard`` with
/// timers armed. It starts with the first armed timer and exits after
/// ``TimerDriverStateMachine/keepAlive`` with none.
///
/// The storage of a ``TimerDriverStateMachine``: it decides under its own lock, and looks at each
/// shard (taking that shard's lock) only after releasing it; why a shard registered again while
/// the driver lets it go loses no timer is argued there.
final class TimerDriver: Sendable {
    static let shared = TimerDriver()

    private typealias Machine = TimerDriverStateMachine<any DrivenTimers>

    private let state = ConditionLockedValue(Machine(), label: "IdpSdk.TimerDriver")

    /// Serves `timers` under registration `token` until a look finds them idle under that token.
    func register(_ timers: any DrivenTimers, token: UInt64) {
        act(state.withLock { $0.register(timers, key: ObjectIdentifier(timers), token: token) })
    }

    /// Makes the driver look at every shard again (an earlier deadline, a moved clock).
    func wake() {
        act(state.withLock { $0.wake() })
    }

    private func act(_ signal: Machine.Signal) {
        switch signal {
        case .none:
            break
        case .signal:
            state.signal()
        case .startThread:
            let thread = Thread { [self] in run() }
            thread.name = "IdpSdk-timers"
            thread.start()
        }
    }

    private func run() {
        while true {
            let shards = state.withLock { $0.beginLook() }
            var nap = Machine.Nap()
            var fired = false
            for timers in shards {
                switch timers.look() {
                case .fired:
                    fired = true
                case .wait(let wait):
                    nap.include(wait)
                case .idle(let token):
                    state.withLock { $0.forget(ObjectIdentifier(timers), token: token) }
                }
            }
            if fired { continue }
            let keepRunning = state.wait { machine, wake -> ConditionLockedValue<Machine>.Decision<Bool> in
                switch machine.sleep(nap, timedOut: wake == .timedOut) {
                case .lookAgain: .done(true)
                case .wait(let timeout): .wait(timeout: timeout)
                case .stop: .done(false)
                }
            }
            if !keepRunning { return }
        }
    }
}
