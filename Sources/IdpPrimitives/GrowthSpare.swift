/// The storage a value kept under a lock grows into or by next (a larger ring or table, one more
/// chunk), made after the lock, so that growing moves words and allocates nothing under it.
///
/// The value asks for it under the lock (``request(_:due:)``); its owner makes it after the lock
/// and hands it in under the lock again (``install(_:fits:)``): the cycle
/// ``ValueLock/withLockThenGrow(_:request:make:install:)`` runs. The value grows into it
/// (``take(fits:)``); growing before it arrives makes the storage under the lock, counted in
/// ``madeUnderLock``.
///
/// Not thread-safe: a part of a value kept inside its owner's lock.
@usableFromInline
package struct GrowthSpare<Storage> {
    // Inlinable, with its stored properties usable from inline code, so that each owner in
    // another module gets it specialized for its storage: no generic metadata on the hot path.
    @usableFromInline var spare: Storage?
    /// Whether a spare was asked for and not yet handed in.
    @usableFromInline var asked = false
    /// How many times the value grew into storage made under the lock, for want of a spare.
    @usableFromInline var made = 0

    /// No spare, none asked for.
    @inlinable
    package init() {}

    /// How many times the value grew into storage made under the lock, for want of a spare.
    @inlinable
    package var madeUnderLock: Int { made }

    /// The spare kept, if any.
    @inlinable
    package var kept: Storage? { spare }

    /// Whether no spare is kept and none is asked for.
    @inlinable
    package var isWanted: Bool { spare == nil && !asked }

    /// Under the lock: `size`, what to make after the lock, when `due` and no spare is kept or
    /// asked for; `nil` otherwise. Asks once until ``install(_:fits:)``.
    @inlinable
    package mutating func request<Size>(_ size: Size, due: Bool) -> Size? {
        guard due, isWanted else { return nil }
        asked = true
        return size
    }

    /// Under the lock: keeps `made` (made after the lock) as the spare if none is kept and `fits`
    /// accepts it; otherwise leaves it in `made`, for the caller to release after the lock. Ends
    /// the request.
    @inlinable
    package mutating func install(_ made: inout Storage?, fits: (Storage) -> Bool) {
        guard let candidate = made else { return }
        asked = false
        guard spare == nil, fits(candidate) else { return }
        spare = made.take()
    }

    /// Keeps `storage`, which the value no longer uses, as the spare if none is kept; returns
    /// whether it did.
    @inlinable
    package mutating func keep(_ storage: Storage) -> Bool {
        guard spare == nil else { return false }
        spare = storage
        return true
    }

    /// Under the lock, as the value grows: the spare, if one is kept and `fits` accepts it;
    /// otherwise `nil`, and the caller makes the storage now, under the lock (counted).
    @inlinable
    package mutating func take(fits: (inout Storage) -> Bool) -> Storage? {
        if var made = spare.take(), fits(&made) { return made }
        made += 1
        return nil
    }
}

extension GrowthSpare: Sendable where Storage: Sendable {}

/// A lock with one door to its value (``LockedValue``, ``ConditionLockedValue``): what
/// ``withLockThenGrow(_:request:make:install:)`` grows through.
@usableFromInline
package protocol ValueLock<Value>: AnyObject {
    associatedtype Value
    /// Runs `body` with exclusive access to the value.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result
}

extension LockedValue: ValueLock {}
extension ConditionLockedValue: ValueLock {}

extension ValueLock {
    /// Runs `body` under the lock, then grows the value after it: what `request` asks for (read
    /// under the lock after `body`, even when it throws) is made by `make` after the lock and
    /// handed in by `install` under the lock again; what the value does not take is released
    /// after the lock.
    /// - Warning: Call it with no other lock held; under another lock use
    ///   ``withLockTakingGrowth(_:request:)`` and ``grow(_:make:install:)`` after that lock too.
    @inlinable @inline(__always)
    package func withLockThenGrow<Result, Failure: Error, Request, Made>(
        _ body: (inout Value) throws(Failure) -> Result, request: (inout Value) -> Request?, make: (Request) -> Made?,
        install: (inout Value, inout Made) -> Void
    ) throws(Failure) -> Result {
        let (result, asked) = try withLockTakingGrowth(body, request: request)
        if let asked { grow(asked, make: make, install: install) }
        return result
    }

    /// Runs `body` under the lock and takes what `request` asks for (even when `body` throws),
    /// for ``grow(_:make:install:)`` once no lock is held.
    @inlinable @inline(__always)
    package func withLockTakingGrowth<Result, Failure: Error, Request>(
        _ body: (inout Value) throws(Failure) -> Result, request: (inout Value) -> Request?
    ) throws(Failure) -> (Result, Request?) {
        var asked: Request?
        let result = try withLock { (value) throws(Failure) -> Result in
            defer { asked = request(&value) }
            return try body(&value)
        }
        return (result, asked)
    }

    /// Makes what `request` asks for (outside any lock) and hands it in under the lock; makes and
    /// hands in nothing when `make` returns `nil`. What `install` leaves is released here, after
    /// the lock.
    @inlinable @inline(__always)
    package func grow<Request, Made>(_ request: Request, make: (Request) -> Made?, install: (inout Value, inout Made) -> Void) {
        guard var made = make(request) else { return }
        withLock { install(&$0, &made) }
    }
}
