import Foundation
import IdpPrimitives

/// A one-shot gate that OS threads can wait on; for providers that must block.
public final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    public init() {}
    public func open() { semaphore.signal() }
    /// Blocks the calling (non-task) thread until opened or `timeout` passes; returns whether opened.
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
        semaphore.wait(timeout: .now(plus: timeout)) == .success
    }
}
