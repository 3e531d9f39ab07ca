import Foundation
import IdpPrimitives

/// An OS thread of its own that runs the closures handed to it one at a time, in order: for a test
/// of what a thread keeps between calls (a per-thread cache), whose steps on that thread are
/// interleaved with steps on another.
///
/// ```swift
/// let reader = StepThread()
/// defer { reader.stop() }
/// #expect(reader.run { network.tag(at: url) } == nil)
/// network.register(transport, at: url)
/// #expect(reader.run { network.tag(at: url) } == "first")
/// ```
public final class StepThread: Sendable {
    /// The steps not yet run, and whether the thread is to end once they have.
    private let queue = ConditionLockedValue<(steps: [@Sendable () -> Void], stopping: Bool)>(([], false))
    private let limit: Duration

    /// Starts the thread.
    /// - Parameter limit: How long a step may take, and how long the thread waits idle for the
    ///   next one before it ends: deadlines for a stuck run, not expected times.
    public init(limit: Duration = .seconds(600)) {
        self.limit = limit
        Thread { [queue] in
            while let step = queue.wait({ state, wake -> Decision in
                if !state.steps.isEmpty { return .done(state.steps.removeFirst()) }
                return state.stopping || wake == .timedOut ? .done(nil) : .wait(timeout: limit)
            }) {
                step()
            }
        }.start()
    }

    private typealias Decision = ConditionLockedValue<(steps: [@Sendable () -> Void], stopping: Bool)>.Decision<(@Sendable () -> Void)?>

    /// Runs `body` on the thread, after the steps handed to it before, and returns its result.
    ///
    /// Blocks the calling thread (never a Swift task's). A step still running after the limit
    /// stops the process with a message that says so: the test cannot go on without its result.
    public func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = LockedValue<T?>(nil)
        let done = Gate()
        queue.withLock { $0.steps.append { result.withLock { $0 = body() }; done.open() } }
        queue.signal()
        guard done.wait(timeout: limit) else { fatalError("a StepThread step did not return within \(limit)") }
        return result.withLock { $0! }
    }

    /// Lets the thread end once the steps handed to it have run.
    public func stop() {
        queue.withLock { $0.stopping = true }
        queue.signal()
    }
}
