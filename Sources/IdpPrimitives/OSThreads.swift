import Foundation

/// Runs blocking work on new OS threads and suspends, without blocking, until it returns.
///
/// A Swift concurrency thread must never block: a body that waits on a lock, a semaphore or the
/// SDK runs here instead, on a thread of its own, and the awaiting task is resumed through a
/// continuation when it returns. A long CPU-bound body belongs here too, so that it does not hold
/// one of the few pool threads that every other task of the process needs.
///
/// ```swift
/// let results = await OSThreads.run(8, together: true) { index in
///     provider.provideCredentials(data[index])
/// }
/// ```
package enum OSThreads {
    /// The stack size of the threads these functions start: 1 MiB, enough for the SDK's and the
    /// IDP's deepest calls, and small enough for hundreds of threads at once.
    package static let defaultStackSize = 1 << 20

    /// Runs `body` on a new OS thread and returns its result.
    /// - Parameters:
    ///   - stackSize: The new thread's stack size in bytes.
    ///   - body: The work; it may block.
    /// - Returns: What `body` returned.
    package static func run<T: Sendable>(stackSize: Int = defaultStackSize, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.stackSize = stackSize
            thread.start()
        }
    }

    /// Runs `body` on a new OS thread and returns its result or rethrows its error.
    /// - Parameters:
    ///   - stackSize: The new thread's stack size in bytes.
    ///   - body: The work; it may block or throw.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw.
    package static func run<T: Sendable>(stackSize: Int = defaultStackSize, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await run(stackSize: stackSize) { Result { try body() } }.get()
    }

    /// Runs `body(index)` for each index in `0..<count`, each on a new OS thread, and returns the
    /// results in index order once all have returned.
    /// - Parameters:
    ///   - count: How many threads; 0 returns at once.
    ///   - together: Whether the threads are released together, once all have started, so that
    ///     their bodies overlap as much as the machine allows (for race tests).
    ///   - stackSize: Each thread's stack size in bytes.
    ///   - body: The work of one thread, given its index; it may block.
    /// - Returns: `body`'s results, indexed as the threads.
    @discardableResult
    package static func run<T: Sendable>(
        _ count: Int, together: Bool = false, stackSize: Int = defaultStackSize, _ body: @escaping @Sendable (Int) -> T
    ) async -> [T] {
        guard count > 0 else { return [] }
        let start = together ? DispatchSemaphore(value: 0) : nil
        // Each thread files its result; the last to finish takes them all, under the same lock.
        let collected = LockedValue<(results: [T?], remaining: Int)>((Array(repeating: nil, count: count), count))
        return await withCheckedContinuation { continuation in
            for index in 0..<count {
                let thread = Thread {
                    start?.wait()
                    let value = body(index)
                    let all = collected.withLock { state -> [T]? in
                        state.results[index] = value
                        state.remaining -= 1
                        return state.remaining == 0 ? state.results.compactMap { $0 } : nil
                    }
                    if let all { continuation.resume(returning: all) }
                }
                thread.stackSize = stackSize
                thread.start()
            }
            if let start { for _ in 0..<count { start.signal() } }
        }
    }
}
