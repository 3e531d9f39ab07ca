import Synchronization

/// Where one request's answer meets the task that waits for it: the first answer a transport
/// delivers wins, and either the task finds it there or the answer finds the task's
/// continuation, whichever comes second.
///
/// Why `@unchecked Sendable` is sound: `answer` is written once, by the one delivery that won
/// `claimed` (an atomic exchange: later deliveries return without touching anything), before that
/// delivery's exchange of `state` (acquiring and releasing); it is read only by the waiter after it
/// saw `answered` in `state` (acquiring). `continuation` is written once, by the waiter, before its
/// exchange of `state`; it is read only by the delivery after its exchange saw `waiting`. Each
/// side exchanges `state` once, each with its own value, so exactly one of them sees the other's
/// value and acts on the other's field, whose write happens before its own read; no field is
/// ever touched by two threads without that order.
package final class TransportAnswer: @unchecked Sendable {
    private enum State: UInt8, AtomicRepresentable {
        /// Neither the answer nor the waiter is here.
        case empty
        /// The answer is in `answer`.
        case answered
        /// The waiter's continuation is in `continuation`.
        case waiting
    }

    /// An empty slot.
    package init() {}

    private let claimed = Atomic<Bool>(false)
    private let state = Atomic<State>(.empty)
    private var answer: Result<HTTPResponse, TransportError>?
    private var continuation: UnsafeContinuation<Result<HTTPResponse, TransportError>, Never>?

    /// The transport's completion: the first call hands `result` over, later ones are dropped.
    package func deliver(_ result: Result<HTTPResponse, TransportError>) {
        guard !claimed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        answer = result
        if state.exchange(.answered, ordering: .acquiringAndReleasing) == .waiting {
            continuation!.resume(returning: result)
        }
    }

    /// The answer, if it is already here.
    package func takeIfAnswered() -> Result<HTTPResponse, TransportError>? {
        state.load(ordering: .acquiring) == .answered ? answer : nil
    }

    /// Leaves `continuation` for the answer, or resumes it at once if the answer came meanwhile.
    package func wait(with continuation: UnsafeContinuation<Result<HTTPResponse, TransportError>, Never>) {
        self.continuation = continuation
        if state.exchange(.waiting, ordering: .acquiringAndReleasing) == .answered {
            continuation.resume(returning: answer!)
        }
    }
}
