import Foundation
import IdpPrimitives
import Testing

/// Runs `body(index)` for each index in `0..<count`, each on a new OS thread, releases them
/// together once all have been started (so that their bodies overlap as much as the machine
/// allows), and waits for all of them to return, for at most `limit`.
///
/// The threads are real OS threads, never the Swift concurrency pool's, so a body may block, and
/// the awaiting task does not.
/// - Parameters:
///   - count: How many threads; 0 returns at once.
///   - limit: How long the threads may take, all together: a deadline for a stuck run, not an
///     expected time.
///   - stackSize: Each thread's stack size in bytes.
///   - body: The work of one thread, given its index.
/// - Returns: `body`'s results in index order; `nil`, with an issue recorded at the caller, when a
///   thread was still running at the deadline (it is left running).
@discardableResult
package func onOSThreads<T: Sendable>(
    _ count: Int, within limit: Duration = .seconds(600), stackSize: Int = OSThreads.defaultStackSize,
    sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping @Sendable (Int) -> T
) async -> [T]? {
    guard count > 0 else { return [] }
    let start = Gate(), finished = Gate()
    let state = LockedValue<(results: [T?], running: Int)>((Array(repeating: nil, count: count), count))
    for index in 0..<count {
        let thread = Thread {
            start.wait(timeout: limit)
            let value = body(index)
            let running = state.withLock { state in
                state.results[index] = value
                state.running -= 1
                return state.running
            }
            if running == 0 { finished.open() }
        }
        thread.stackSize = stackSize
        thread.start()
    }
    start.open()
    guard await OSThreads.run({ finished.wait(timeout: limit) }) else {
        let running = state.withLock { $0.running }
        Issue.record("\(running) of \(count) OS threads still running after \(limit)", sourceLocation: sourceLocation)
        return nil
    }
    return state.withLock { $0.results.map { $0! } }
}
