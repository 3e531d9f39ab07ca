import Dispatch

extension DispatchTime {
    /// `duration` from now, for Dispatch timers and semaphore waits. Capped at one year, so an
    /// "effectively forever" timeout cannot overflow the nanosecond count.
    package static func now(plus duration: Duration) -> DispatchTime {
        .now() + .nanoseconds(Int(min(max(0, duration.timeInterval), 365 * 24 * 3600) * 1e9))
    }
}
