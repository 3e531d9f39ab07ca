import IdpPrimitives

/// Values lent to one user at a time: ``lease()`` takes a free one, or waits (suspended, no
/// thread held) until one is given back with ``giveBack(_:)``. Waiters are served first come,
/// first served.
///
/// The open loop leases the benchmark's devices with it: a MasterController runs one login at a
/// time (a second `GetAstClientData` replaces the first's PKCE verifier, and the first's token
/// exchange is then refused), so an open loop that falls behind its arrivals must queue for a
/// device, which its latencies show, instead of running two logins on one (the first's token
/// exchange then fails).
///
/// ```swift
/// let devices = LeasePool(rig.devices)
/// let device = try await devices.lease()
/// defer { devices.giveBack(device) }
/// ```
package final class LeasePool<Element: Sendable>: Sendable {
    private struct State {
        var free: [Element]
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Element, any Error>)] = []
        /// Waiters before this index have been served (a queue without shifting on every serve).
        var head = 0
        var nextId: UInt64 = 0
        /// Leases neither served nor cancelled yet.
        var open: Set<UInt64> = []
    }

    private let state: LockedValue<State>

    /// What a lease found under the lock.
    private enum Decision { case take(Element), wait, cancelled }

    /// A pool that lends `elements`.
    /// - Parameter elements: What the pool lends; it may be empty, and ``giveBack(_:)`` adds to it.
    package init(_ elements: [Element]) {
        state = LockedValue(State(free: elements))
    }

    /// Values free now.
    package var freeCount: Int { state.withLock { $0.free.count } }

    /// Leases waiting for a value now.
    package var waiting: Int { state.withLock { $0.waiters.count - $0.head } }

    /// Takes a free value, or suspends until one is given back.
    /// - Throws: `CancellationError` if the task is cancelled before it has a value.
    package func lease() async throws -> Element {
        let id = state.withLock { state -> UInt64 in
            state.nextId &+= 1
            state.open.insert(state.nextId)
            return state.nextId
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element, any Error>) in
                let decision = state.withLock { state -> Decision in
                    // The cancellation handler ran first and closed the lease.
                    guard state.open.contains(id) else { return .cancelled }
                    if let element = state.free.popLast() {
                        state.open.remove(id)
                        return .take(element)
                    }
                    state.waiters.append((id, continuation))
                    return .wait
                }
                switch decision {
                case .take(let element): continuation.resume(returning: element)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Element, any Error>? in
                // Served already: the value is the caller's, nothing to undo.
                guard state.open.remove(id) != nil else { return nil }
                // Not queued yet: the operation will find the lease closed and throw.
                guard let index = state.waiters[state.head...].firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Returns a leased value: the longest waiter gets it, or it is free again.
    /// - Parameter element: A value ``lease()`` gave out (or a new one to add to the pool).
    package func giveBack(_ element: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Element, any Error>? in
            guard state.head < state.waiters.count else {
                state.free.append(element)
                return nil
            }
            let waiter = state.waiters[state.head]
            state.open.remove(waiter.id)
            state.head += 1
            if state.head == state.waiters.count || state.head >= 1_024 {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return waiter.continuation
        }
        waiter?.resume(returning: element)
    }
}
