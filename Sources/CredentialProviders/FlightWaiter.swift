import Dispatch
import IdpPrimitives

/// One caller waiting for a refresh: an SDK thread that blocks on it, or a task that suspends on
/// it. Settled once (the first outcome wins; later ones are dropped), under its lock; the thread
/// is woken by the semaphore, the task by its continuation, resumed after the lock.
final class FlightWaiter<Outcome: Sendable>: Sendable {
    private enum State {
        case pending
        case suspended(CheckedContinuation<Outcome, Never>)
        case settled(Outcome)
    }

    private let state = LockedValue(State.pending)
    private let wake = DispatchSemaphore(value: 0)

    /// Settles the wait with `outcome`; returns whether this call decided it.
    @discardableResult
    func settle(_ outcome: Outcome) -> Bool {
        let (decided, continuation) = state.withLock { state -> (Bool, CheckedContinuation<Outcome, Never>?) in
            switch state {
            case .settled:
                return (false, nil)
            case .pending:
                state = .settled(outcome)
                return (true, nil)
            case .suspended(let continuation):
                state = .settled(outcome)
                return (true, continuation)
            }
        }
        guard decided else { return false }
        if let continuation { continuation.resume(returning: outcome) } else { wake.signal() }
        return true
    }

    /// Blocks the calling OS thread until settled, or until `timeout` has passed: then it
    /// settles with `timedOut` unless something settled first.
    func wait(timeout: Duration, timedOut: Outcome) -> Outcome {
        if wake.wait(timeout: .now(plus: timeout)) == .timedOut { settle(timedOut) }
        return state.withLock { state in
            if case .settled(let outcome) = state { return outcome }
            return timedOut
        }
    }

    /// Suspends the calling task until settled; a cancelled task settles it with `cancelled`.
    func value(cancelled: Outcome) async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let settled = state.withLock { state -> Outcome? in
                    if case .settled(let outcome) = state { return outcome }
                    state = .suspended(continuation)
                    return nil
                }
                if let settled { continuation.resume(returning: settled) }
            }
        } onCancel: {
            settle(cancelled)
        }
    }
}
