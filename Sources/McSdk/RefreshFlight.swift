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

        /// How waiter `id` ends at once, if it does: the flight has ended, or the waiter's
        /// cancellation came before it registered.
        mutating func settled(_ id: UInt64) -> Result<String, McTokenError>? {
            if let outcome { return outcome }
            if cancelledEarly.remove(id) != nil { return .failure(.cancelled) }
            return nil
        }
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
    ///   `ExecutionController/resumeHandOver(at:)`).
    func wait(controller: (any ExecutionController)? = nil, seam: Seam? = nil) async throws -> String {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                // A controlled run hands the resume over (asked outside the lock: it may call
                // out), and parks the waiter only once it is registered or resumed: parked
                // earlier, it would look blocked to the run while it still registers.
                let handOver = seam.flatMap { controller?.resumeHandOver(at: $0) }
                let waiter = Waiter(continuation: continuation, handOver: handOver)
                let immediate = state.withLock { state -> Result<String, McTokenError>? in
                    if let settled = state.settled(id) { return settled }
                    state.waiters[id] = waiter
                    return nil
                }
                if let immediate { waiter.resume(with: immediate) }
                if handOver != nil, let controller, let seam { controller.suspending(at: seam) }
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
