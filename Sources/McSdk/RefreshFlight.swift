import IdpPrimitives

/// The decisions of one refresh in flight, as a value: the storage (``RefreshFlight``) asks it what
/// to do under its lock and does it after. Generic over the waiter, so tests drive it with plain
/// values, without tasks or threads.
struct RefreshFlightMachine<Waiter> {
    enum State {
        /// The refresh runs: who waits, whose cancellation came before they registered, and the
        /// last waiter number given out.
        case flying(waiters: [UInt64: Waiter], cancelledEarly: Set<UInt64>, lastWaiter: UInt64)
        /// The refresh ended with this outcome; nobody waits any more.
        case landed(Result<String, McTokenError>)
    }

    private(set) var state = State.flying(waiters: [:], cancelledEarly: [], lastWaiter: 0)

    /// A new waiter's number.
    mutating func newWaiter() -> UInt64 {
        switch state {
        case .flying(let waiters, let early, let last):
            state = .flying(waiters: waiters, cancelledEarly: early, lastWaiter: last + 1)
            return last + 1
        case .landed:
            return 0
        }
    }

    /// Waiter `id` is ready to wait: it waits (`nil`), or ends at once with the returned outcome
    /// (the flight landed, or its cancellation came first).
    mutating func register(_ id: UInt64, _ waiter: Waiter) -> Result<String, McTokenError>? {
        switch state {
        case .landed(let outcome):
            return outcome
        case .flying(var waiters, var early, let last):
            if early.remove(id) != nil {
                state = .flying(waiters: waiters, cancelledEarly: early, lastWaiter: last)
                return .failure(.cancelled)
            }
            waiters[id] = waiter
            state = .flying(waiters: waiters, cancelledEarly: early, lastWaiter: last)
            return nil
        }
    }

    /// Waiter `id`'s task was cancelled: the waiter to resume with ``McTokenError/cancelled``, if
    /// it waits; if it has not registered yet, it ends at its registration.
    mutating func cancel(_ id: UInt64) -> Waiter? {
        guard case .flying(var waiters, var early, let last) = state else { return nil }
        let waiting = waiters.removeValue(forKey: id)
        if waiting == nil { early.insert(id) }
        state = .flying(waiters: waiters, cancelledEarly: early, lastWaiter: last)
        return waiting
    }

    /// The refresh ended with `outcome`: the waiters to resume with it, or `nil` if it had ended
    /// already (the first end wins).
    mutating func land(_ outcome: Result<String, McTokenError>) -> [Waiter]? {
        guard case .flying(let waiters, _, _) = state else { return nil }
        state = .landed(outcome)
        return waiters.keys.sorted().map { waiters[$0]! }
    }
}

extension RefreshFlightMachine: Sendable where Waiter: Sendable {}
extension RefreshFlightMachine.State: Sendable where Waiter: Sendable {}

/// One token refresh that any number of callers wait for (single flight).
///
/// ``complete(_:)`` is the one door to the end: the first call wins — the refresh's answer or its
/// timeout — and resumes every waiter; later calls do nothing. A waiter whose task is cancelled is
/// resumed at once with ``McTokenError/cancelled`` and removed; the refresh and the other waiters
/// go on. Continuations are resumed after the lock is released.
/// Its decisions are ``RefreshFlightMachine``'s, taken under its lock.
final class RefreshFlight: Sendable {
    /// A waiting caller, and how its resume is handed over (a controlled run's turn), if at all.
    private struct Waiter: Sendable {
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

    private let machine = LockedValue(RefreshFlightMachine<Waiter>())

    /// Suspends until the flight ends; returns its token or throws its ``McTokenError``.
    /// - Parameters: controller, seam: a controlled run's hold on the waiting task (see
    ///   `ExecutionController/resumeHandOver(at:)`).
    func wait(controller: (any ExecutionController)? = nil, seam: Seam? = nil) async throws -> String {
        let id = machine.withLock { $0.newWaiter() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                // A controlled run hands the resume over (asked outside the lock: it may call
                // out), and parks the waiter only once it is registered or resumed: parked
                // earlier, it would look blocked to the run while it still registers.
                let handOver = seam.flatMap { controller?.resumeHandOver(at: $0) }
                let waiter = Waiter(continuation: continuation, handOver: handOver)
                if let immediate = machine.withLock({ $0.register(id, waiter) }) { waiter.resume(with: immediate) }
                if handOver != nil, let controller, let seam { controller.suspending(at: seam) }
            }
        } onCancel: {
            machine.withLock { $0.cancel(id) }?.resume(with: .failure(.cancelled))
        }
    }

    /// Ends the flight with `outcome` unless it has ended; returns whether this call ended it.
    @discardableResult
    func complete(_ outcome: Result<String, McTokenError>) -> Bool {
        guard let waiters = machine.withLock({ $0.land(outcome) }) else { return false }
        for waiter in waiters { waiter.resume(with: outcome) }
        return true
    }
}
