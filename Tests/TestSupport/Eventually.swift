import Foundation
import IdpPrimitives

/// Polls `condition` until it holds, for at most `limit`, and returns whether it held.
///
/// The default limit is a deadline for a stuck run, not an expected time: a loaded
/// ThreadSanitizer suite can keep the Swift concurrency pool busy for minutes, and a condition that
/// holds returns at once.
public func eventually(within limit: Duration = .seconds(600), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}

/// Polls `condition` from a new OS thread every 100 µs until it holds, for at most `limit`, and
/// returns whether it held: for a state that lasts only a moment (a thread spinning before it
/// sleeps), which a poll from a task every few milliseconds could miss, and for a condition that
/// must not wait for a pool thread to be checked.
public func eventuallyOnOSThread(within limit: Duration = .seconds(600), _ condition: @escaping @Sendable () -> Bool) async -> Bool {
    await OSThreads.run { pollOnThisThread(within: limit, every: 100, condition) }
}

/// Polls `condition` on the calling thread every `microseconds` until it holds, for at most
/// `limit`, and returns whether it held. It blocks: call it from a thread you own, never from a task.
public func pollOnThisThread(within limit: Duration, every microseconds: UInt32, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        usleep(microseconds)
    }
    return true
}

/// How long a test waits for a gate a blocked provider or a step of the test opens: a deadline for
/// a stuck run, not an expected time. Under ThreadSanitizer with every core busy a step has taken
/// minutes, and a wait whose gate opens returns at once.
public let stuckRunDeadline: Duration = .seconds(1800)
