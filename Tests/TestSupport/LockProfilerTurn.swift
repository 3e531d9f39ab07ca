/// The lock profiler is one per process, and its planted faults are process-wide switches: a test
/// that starts, stops or plants into it takes this turn first, whichever suite or test target it
/// is in, so no other such test resets, stops or distorts its counts meanwhile.
///
/// ```swift
/// let figures = await LockProfilerTurn.take {
///     LockProfiler.start()
///     runWorkload()
///     return LockProfiler.stop()
/// }
/// ```
public actor LockProfilerTurn {
    private static let shared = LockProfilerTurn()
    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once no other test holds the turn, and hands the turn on after it.
    public static func take<Result: Sendable>(_ body: @Sendable () async throws -> Result) async rethrows -> Result {
        await shared.acquire()
        do {
            let result = try await body()
            await shared.release()
            return result
        } catch {
            await shared.release()
            throw error
        }
    }

    private func acquire() async {
        guard taken else {
            taken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            taken = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
