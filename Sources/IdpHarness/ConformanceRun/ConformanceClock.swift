import Foundation
import IdpPrimitives
import Synchronization

/// The kit's clock: the time every provider instance of one run reads through
/// ``ProviderConformanceKit/User/clock``. It stands still until the kit moves it forward at an
/// expiry crossing, and it counts its reads, so the kit can tell whether the provider looked at
/// the time after a crossing (whether its expiry was exercised at all).
///
/// In the kit's controlled phase each read is a point where the kit's scheduler may run another of
/// its threads; outside it, a read costs one relaxed load more.
///
/// Lock-free on purpose: a read is two relaxed atomic operations, which order nothing for
/// ThreadSanitizer. A clock behind a lock would order every provider call that reads it after
/// every earlier one, and hide the provider's own races from the hammer. Reads are counted on the
/// reading thread's stripe, so threads reading at once do not all write one cache line.
final class ConformanceClock: IdpClock {
    /// Where the clock starts: where a `ManualClock` does, so test output is reproducible.
    static let start = ManualClock.defaultStart

    /// Nanoseconds past ``start``; moved only by ``advance(by:)``.
    private let offset = Atomic<Int64>(0)
    private let readCount = StripedCounter()

    /// The kit's time: ``start`` plus every advance so far. Counts the read.
    func now() -> Date {
        // In the kit's controlled phase, a read is a point where another thread may go first.
        ControlPoints.point("read the kit's clock")
        readCount.add(1)
        return Self.start.addingTimeInterval(Double(offset.load(ordering: .relaxed)) / 1e9)
    }

    /// How often ``now()`` has been called since the clock was made.
    var reads: Int { readCount.value }

    /// How far the clock has moved since it was made, in nanoseconds.
    var elapsedNanoseconds: Int64 { offset.load(ordering: .relaxed) }

    /// Moves the clock forward by `duration` (one thread at a time: the kit's crossing thread).
    func advance(by duration: Duration) {
        offset.add(duration.nanoseconds, ordering: .relaxed)
    }
}
