import Dispatch
import IdpPrimitives

/// The result of `postEvent`: observe it with `then`, await ``value``, or block with ``get()``
/// from a thread that is not a Swift task.
///
/// ```swift
/// masterController.postEvent(KSMStartEvent()).then { resultEvent in
///     if let start = resultEvent as? KSMStartResultEvent { print(start.sdkState) }
/// }
/// ```
public final class McFuture<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var callbacks: [@Sendable (Value) -> Void] = []
    }

    private let state = LockedValue(State(), site: mcFutureLockSite)

    init() {}

    func resolve(_ value: Value) {
        let callbacks = state.withLock { state -> [@Sendable (Value) -> Void] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.callbacks = [] }
            return state.callbacks
        }
        for callback in callbacks { callback(value) }
    }

    /// Runs `body` once with the result: on the thread that resolves the future, or on a Dispatch
    /// global queue if it is resolved already. Never blocks.
    @discardableResult
    public func then(_ body: @escaping @Sendable (Value) -> Void) -> McFuture<Value> {
        let ready = state.withLock { state -> Value? in
            if let value = state.value { return value }
            state.callbacks.append(body)
            return nil
        }
        if let ready { DispatchQueue.global().async { body(ready) } }
        return self
    }

    /// The result, awaited without blocking a thread.
    public var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                then { continuation.resume(returning: $0) }
            }
        }
    }

    /// Blocks the calling thread until the result is there.
    /// - Throws: ``McFutureError/blockingCallInsideTask`` when called from inside a Swift task,
    ///   where blocking could starve the pool the result needs.
    public func get() throws(McFutureError) -> Value {
        if withUnsafeCurrentTask(body: { $0 != nil }) { throw .blockingCallInsideTask }
        let semaphore = DispatchSemaphore(value: 0)
        let box = LockedValue<Value?>(nil)
        then { value in
            box.withLock { $0 = value }
            semaphore.signal()
        }
        semaphore.wait()
        return box.withLock { $0! }
    }
}

/// Why ``McFuture/get()`` refused.
public enum McFutureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// ``McFuture/get()`` was called inside a Swift task, where blocking the thread could starve
    /// the concurrency pool; use `then { }` or `await value` there.
    case blockingCallInsideTask

    /// Says what was called where, and what to use instead.
    public var description: String {
        "McFuture.get() blocks its thread and was called from inside a Swift task; use then { } or await .value"
    }
}

/// Every future's lock counts as `McFuture` in `LockProfiler`; registered once (a generic class
/// cannot hold a static stored property).
private let mcFutureLockSite = LockProfiler.Site(label: "McFuture")
