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
        var waiters: [UInt64: Waiter] = [:]
        /// Waiters whose cancellation ran before they registered.
        var cancelledEarly: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }

    /// A waiting caller, and how its resume is handed over (a controlled run's turn), if at all.
    private struct Waiter {
        let continuation: CheckedContinuation<String, any Error>
        let handOver: (@Sendable (@escaping @Sendable () -> Void) -> Void)?

        func resume(with outcome: Result<String, McTokenError>) {
            let continuation = self.continuation
            if let handOver {
                handOver { continuation.resume(with: outcome.mapError { $0 }) }
            } else {
                continuation.resume(with: outcome.mapError { $0 })
            }
        }
    }

    private let state = LockedValue(State())

    /// Suspends until the flight ends; returns its token or throws its ``McTokenError``.
    /// - Parameters: controller, seam: a controlled run's hold on the waiting task (see
    ///   `ExecutionController/suspending(at:)`).
    func wait(controller: (any ExecutionController)? = nil, seam: Seam? = nil) async throws -> String {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let ready = state.withLock { state -> Result<String, McTokenError>? in
                    if let outcome = state.outcome { return outcome }
                    if state.cancelledEarly.remove(id) != nil { return .failure(.cancelled) }
                    return nil
                }
                if let ready {
                    continuation.resume(with: ready.mapError { $0 })
                    return
                }
                // Asked outside the lock (it may call out); the flight may end meanwhile, so the
                // outcome is looked at again when registering.
                let handOver = seam.flatMap { controller?.suspending(at: $0) }
                let immediate = state.withLock { state -> Result<String, McTokenError>? in
                    if let outcome = state.outcome { return outcome }
                    if state.cancelledEarly.remove(id) != nil { return .failure(.cancelled) }
                    state.waiters[id] = Waiter(continuation: continuation, handOver: handOver)
                    return nil
                }
                if let immediate { Waiter(continuation: continuation, handOver: handOver).resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                if let waiting = state.waiters.removeValue(forKey: id) { return waiting }
                if state.outcome == nil { state.cancelledEarly.insert(id) }
                return nil
            }
            waiter?.resume(with: .failure(.cancelled))
        }
    }

    /// Ends the flight with `outcome` unless it has ended; returns whether this call ended it.
    @discardableResult
    func complete(_ outcome: Result<String, McTokenError>) -> Bool {
        let waiters = state.withLock { state -> [Waiter]? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer {
                state.waiters = [:]
                state.cancelledEarly = []
            }
            return Array(state.waiters.values)
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(with: outcome) }
        return true
    }
}
