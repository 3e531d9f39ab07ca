import Dispatch
import Foundation
import IdpPrimitives
import IdpSdk

/// The blocking half of a bridge from a synchronous `provideCredentials` into async code: the
/// SDK thread waits, in a `FlightWaiter`, for an answer that a task delivers, until a timeout or
/// a cancel (the first of answer, failure, timeout, cancel wins).
enum BlockingWait {
    enum Outcome: Sendable {
        case answered([String: String])
        case failed(IdpSdkError)
        case timedOut
        case cancelled
    }

    /// Whether blocking the current thread could deadlock: inside a Swift task (the answer may
    /// need the very pool thread we would block) or on the main thread (a main-actor prompt).
    static var blockingIsUnsafeHere: Bool {
        withUnsafeCurrentTask { $0 != nil } || Thread.isMainThread
    }

    static func refusal(_ who: String) -> IdpSdkProvideCredentialsResult {
        .init(error: CredentialProviderError.make(
            .calledWhereBlockingIsUnsafe,
            "\(who) blocks its thread and was called from inside a Swift task or on the main thread; it refused instead of risking a deadlock"))
    }
}

/// Waits registered by flow, so a flow's end can cancel its wait: `cancelled` is what a cancelled
/// wait gets.
final class WaitRegistry<Outcome: Sendable>: Sendable {
    private let waits = LockedValue<[IdpSdkFlowID: FlightWaiter<Outcome>]>([:])
    private let cancelled: Outcome

    init(cancelled: Outcome) { self.cancelled = cancelled }

    func register(_ wait: FlightWaiter<Outcome>, for flowId: IdpSdkFlowID) {
        waits.withLock { $0[flowId] = wait }
    }

    func unregister(_ flowId: IdpSdkFlowID) {
        waits.withLock { _ = $0.removeValue(forKey: flowId) }
    }

    func cancel(_ flowId: IdpSdkFlowID) {
        waits.withLock { $0[flowId] }?.settle(cancelled)
    }

    func cancelAll() {
        for wait in waits.withLock({ Array($0.values) }) { wait.settle(cancelled) }
    }

    var count: Int { waits.withLock { $0.count } }
}

extension WaitRegistry<BlockingWait.Outcome> {
    /// A registry of bridges' waits, which a cancel settles with `cancelled`.
    convenience init() { self.init(cancelled: .cancelled) }

    /// Runs `operation` in a task and blocks the calling (SDK) thread for its answer.
    func answer(
        _ data: IdpSdkInteractionData,
        timeout: Duration,
        who: String,
        operation: @escaping @Sendable () async throws -> [String: String]
    ) -> IdpSdkProvideCredentialsResult {
        guard !BlockingWait.blockingIsUnsafeHere else { return BlockingWait.refusal(who) }
        let wait = FlightWaiter<BlockingWait.Outcome>()
        register(wait, for: data.flowId)
        defer { unregister(data.flowId) }
        let task = Task {
            do {
                wait.settle(.answered(try await operation()))
            } catch let error as IdpSdkError {
                wait.settle(.failed(error))
            } catch {
                wait.settle(.failed(CredentialProviderError.make(.answerFailed, "\(who)'s answer threw: \(error)")))
            }
        }
        switch wait.wait(timeout: timeout, timedOut: .timedOut) {
        case .answered(let credentials):
            return .init(credentials: credentials)
        case .failed(let error):
            return .init(error: error)
        case .timedOut:
            task.cancel()
            return .init(error: CredentialProviderError.make(.timedOut, "\(who) got no answer within \(timeout)"))
        case .cancelled:
            task.cancel()
            return .init(error: CredentialProviderError.make(.cancelled, "the flow ended while \(who) waited for its answer"))
        }
    }
}
