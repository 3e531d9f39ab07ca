import IdpPrimitives

/// A gate that OS threads wait at until it opens; once open it stays open, so every waiter, early
/// or late, passes: for a provider that must block until the test lets it go, and for a thread
/// that must wait for an event that may already have happened.
public final class Gate: Sendable {
    private let opened = ConditionLockedValue(false)

    public init() {}

    /// Opens the gate for good and lets every waiter through.
    public func open() {
        opened.withLock { $0 = true }
        opened.broadcast()
    }

    /// Blocks the calling thread (never a Swift task's) until the gate opens or `timeout` passes;
    /// returns whether it opened.
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        return opened.wait { isOpen, _ in
            if isOpen { return .done(true) }
            let left = deadline - ContinuousClock.now
            return left > .zero ? .wait(timeout: left) : .done(false)
        }
    }
}
