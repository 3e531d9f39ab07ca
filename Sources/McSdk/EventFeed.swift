import IdpPrimitives

/// Delivers the MC's own events to its listeners in the order they were posted, off the actor,
/// one at a time.
///
/// ``post(_:)`` decides under the lock whether a drain is running; if not, it starts one task that
/// takes events until the queue is empty. Listeners are called after the lock is released.
final class EventFeed: Sendable {
    private struct State {
        var listeners: [any KSMEventListener] = []
        var queue: [any KsEvent] = []
        var draining = false
    }

    private let state = LockedValue(State())

    func register(_ listener: any KSMEventListener) { state.withLock { $0.listeners.append(listener) } }

    func post(_ event: any KsEvent) {
        let startDrain = state.withLock { state -> Bool in
            guard !state.listeners.isEmpty else { return false }
            state.queue.append(event)
            if state.draining { return false }
            state.draining = true
            return true
        }
        if startDrain { Task { self.drain() } }
    }

    private func drain() {
        while true {
            let next = state.withLock { state -> (any KsEvent, [any KSMEventListener])? in
                guard !state.queue.isEmpty else {
                    state.draining = false
                    return nil
                }
                return (state.queue.removeFirst(), state.listeners)
            }
            guard let (event, listeners) = next else { return }
            for listener in listeners { listener.executeEvent(event) }
        }
    }
}
