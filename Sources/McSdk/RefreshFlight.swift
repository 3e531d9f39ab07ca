import IdpPrimitives

/// One token refresh that any number of callers wait for (single flight).
///
/// ``complete(_:)`` is the one door to the end: the first call wins — the refresh's answer or its
/// timeout — and resumes every waiter; later calls do nothing. A waiter whose task is cancelled is
/// resumed at once with ``McTokenError/cancelled`` and removed; the refresh and the other waiters
/// go on. Continuations are resumed after the lock is released.
final class RefreshFlight: Sendable {
    private struct State {
        var outcome: Result<String, McTokenError>?
        var waiters: [UInt64: CheckedContinuation<String, any Error>] = [:]
        /// Waiters whose cancellation ran before they registered.
        var cancelledEarly: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }

    private let state = LockedValue(State())

    /// Suspends until the flight ends; returns its token or throws its ``McTokenError``.
    func wait() async throws -> String {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let immediate = state.withLock { state -> Result<String, McTokenError>? in
                    if let outcome = state.outcome { return outcome }
                    if state.cancelledEarly.remove(id) != nil { return .failure(.cancelled) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate.mapError { $0 }) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<String, any Error>? in
                if let waiting = state.waiters.removeValue(forKey: id) { return waiting }
                if state.outcome == nil { state.cancelledEarly.insert(id) }
                return nil
            }
            continuation?.resume(throwing: McTokenError.cancelled)
        }
    }

    /// Ends the flight with `outcome` unless it has ended; returns whether this call ended it.
    @discardableResult
    func complete(_ outcome: Result<String, McTokenError>) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<String, any Error>]? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer {
                state.waiters = [:]
                state.cancelledEarly = []
            }
            return Array(state.waiters.values)
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(with: outcome.mapError { $0 }) }
        return true
    }
}
