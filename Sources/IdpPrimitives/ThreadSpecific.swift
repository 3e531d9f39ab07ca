#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One object per OS thread, in thread-specific storage (a pthread key): a thread reaches only its
/// own, and it is released when the thread exits. For per-thread state the thread alone uses (a
/// worker's record, a thread's cache); make one as a `static let`, since the system has a limited
/// number of keys.
///
/// ```swift
/// static let caches = ThreadSpecific<Cache>()
/// let mine = caches.value { Cache() }
/// ```
///
/// Sound as `Sendable`: its one stored property, the key, is immutable; each thread's object is
/// reached only by that thread (the object type itself need not be `Sendable`).
///
/// Its reads are inlinable: callers in other modules, on their hot paths, get them specialised.
@usableFromInline
package final class ThreadSpecific<Value: AnyObject>: @unchecked Sendable {
    @usableFromInline let key: pthread_key_t

    /// A new key; no thread has an object yet.
    package init() {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        precondition(status == 0, "pthread_key_create failed: \(status)")
        self.key = key
    }

    /// The calling thread's object, if it has one.
    @inlinable
    package var value: Value? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Value>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// The calling thread's object, made with `make` at its first use.
    /// - Parameter make: Makes the thread's object.
    @inlinable
    package func value(orMake make: () -> Value) -> Value {
        if let value { return value }
        let made = make()
        set(made)
        return made
    }

    /// Runs `body` with the calling thread's object, made with `make` at its first use, without
    /// retaining it: the thread's slot keeps it alive, and only this thread can replace it.
    /// - Parameters:
    ///   - make: Makes the thread's object.
    ///   - body: Uses it.
    /// - Returns: What `body` returns.
    @inlinable
    package func withValue<Result>(orMake make: () -> Value, _ body: (Value) throws -> Result) rethrows -> Result {
        if let pointer = pthread_getspecific(key) {
            return try Unmanaged<Value>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
        }
        let made = make()
        set(made)
        return try body(made)
    }

    /// Makes `value` the calling thread's object, releasing the one it had.
    /// - Parameter value: The thread's new object.
    @usableFromInline
    package func set(_ value: Value) {
        let old = pthread_getspecific(key)
        let status = pthread_setspecific(key, Unmanaged.passRetained(value).toOpaque())
        precondition(status == 0, "pthread_setspecific failed: \(status)")
        if let old { Unmanaged<AnyObject>.fromOpaque(old).release() }
    }

    /// Releases the calling thread's object; the thread has none afterwards.
    package func clear() {
        let old = pthread_getspecific(key)
        let status = pthread_setspecific(key, nil)
        precondition(status == 0, "pthread_setspecific failed: \(status)")
        if let old { Unmanaged<AnyObject>.fromOpaque(old).release() }
    }
}
