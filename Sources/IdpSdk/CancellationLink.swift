import Synchronization

/// Carries what a task's cancellation handler must cancel from the task's operation, which makes
/// it, to the handler, which may run before it exists, while it is being made, or after.
///
/// The operation calls ``publish(_:)`` once, the handler ``cancel()`` at most once, in either
/// order or at the same time; the payload is cancelled exactly once if both are called, by
/// whichever of the two comes second, and never otherwise.
///
/// Sound as `Sendable` with its one `nonisolated(unsafe)` field: `payload` is written only by
/// ``publish(_:)``, before the compare-and-exchange that moves `state` from `idle` to `published`
/// (releasing), and read only by ``cancel()`` after its own compare-and-exchange found
/// `published` (acquiring), so the read happens after the write. When ``cancel()`` comes first
/// (`idle` to `cancelled`) it reads nothing, and ``publish(_:)`` cancels its own argument.
final class CancellationLink<Payload: Sendable>: Sendable {
    private static var idle: Int { 0 }
    private static var published: Int { 1 }
    private static var cancelled: Int { 2 }

    private let state = Atomic<Int>(0)
    nonisolated(unsafe) private var payload: Payload?

    init() {}

    /// Hands `payload` to the handler.
    /// - Returns: `true` when the handler has run already: the caller must cancel `payload` now.
    func publish(_ payload: Payload) -> Bool {
        self.payload = payload
        return !state.compareExchange(expected: Self.idle, desired: Self.published, ordering: .acquiringAndReleasing).exchanged
    }

    /// The handler's side.
    /// - Returns: the payload to cancel, or `nil` when it is not published yet (``publish(_:)``
    ///   then tells its caller to cancel it).
    func cancel() -> Payload? {
        let (exchanged, original) = state.compareExchange(expected: Self.idle, desired: Self.cancelled, ordering: .acquiringAndReleasing)
        guard !exchanged, original == Self.published else { return nil }
        return payload
    }
}
