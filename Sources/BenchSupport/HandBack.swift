import Foundation
import IdpPrimitives

/// How long a task waits to run again after a busy OS thread resumes its continuation while
/// Swift's pool is idle: the thread wake-up that `await getAuthorizationCode` pays when its flow
/// is alone. The SDK ends a flow on its own thread, which stays busy (it cleans up and looks for
/// the next job), so the caller's task is woken on another, idle core. With many flows in flight
/// the pool's threads are awake and the wake is not paid.
///
/// A task suspends on a continuation `samples` times. Each time, an OS thread of the
/// measurement's own takes the continuation, works (spins) for `before`, as the SDK thread works
/// on a lone flow's steps while the pool parks, reads the clock, resumes the continuation, and
/// spins on for `after`; the task reads the clock as soon as it runs. Every continuation is
/// resumed exactly once, by that thread. It keeps one core busy for the whole measurement.
///
/// - Parameters:
///   - samples: How many resumptions to measure.
///   - before: capped at one second; a negative duration counts as zero.
///   - after: likewise.
/// - Returns: the nanoseconds from each resumption to the task running, as a histogram of
///   `samples` values.
/// - Precondition: `samples` ≥ 1.
package func measureHandBack(samples: Int, before: Duration = .microseconds(40), after: Duration = .microseconds(100)) async -> LatencyHistogram {
    precondition(samples >= 1, "measureHandBack needs at least one sample")
    let exchange = HandBackExchange()
    let before = nanoseconds(before), after = nanoseconds(after)
    let resumer = Thread {
        for _ in 0..<samples {
            let continuation = exchange.take()
            spin(for: before, from: DispatchTime.now().uptimeNanoseconds)
            let resumedAt = DispatchTime.now().uptimeNanoseconds
            continuation.resume(returning: resumedAt)
            spin(for: after, from: resumedAt)
        }
    }
    resumer.stackSize = 1 << 18
    resumer.start()
    var histogram = LatencyHistogram()
    for _ in 0..<samples {
        let resumedAt = await withCheckedContinuation { exchange.put($0) }
        histogram.record(DispatchTime.now().uptimeNanoseconds &- resumedAt)
    }
    return histogram
}

/// `duration` in nanoseconds, within 0...1 s.
private func nanoseconds(_ duration: Duration) -> UInt64 {
    UInt64(min(max(duration, .zero), .seconds(1)).nanoseconds)
}

/// Keeps the calling OS thread busy until `nanoseconds` after `start`.
private func spin(for nanoseconds: UInt64, from start: UInt64) {
    while DispatchTime.now().uptimeNanoseconds &- start < nanoseconds {}
}

/// One continuation passed from the measuring task to the resuming thread. The thread waits for
/// it on a condition (an OS thread of the measurement's own, never a pool thread), so the task
/// never blocks.
private final class HandBackExchange: Sendable {
    private let slot = ConditionLockedValue<CheckedContinuation<UInt64, Never>?>(nil, label: "BenchSupport.HandBack")

    func put(_ continuation: CheckedContinuation<UInt64, Never>) {
        slot.withLock { $0 = continuation }
        slot.signal()
    }

    func take() -> CheckedContinuation<UInt64, Never> {
        slot.wait { slot, _ in
            guard let continuation = slot else { return .wait(timeout: nil) }
            slot = nil
            return .done(continuation)
        }
    }
}
