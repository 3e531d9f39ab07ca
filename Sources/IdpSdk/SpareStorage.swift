/// Storage a value grows into, measured in slots (a ``JobQueue``'s ring, a ``DeadlineHeap``'s
/// entries and places).
protocol SlottedStorage {
    /// How many slots it has.
    var slotCount: Int { get }
}

extension ContiguousArray: SlottedStorage {
    var slotCount: Int { count }
}

/// The larger storage a value kept under a lock grows into next: asked for under the lock once
/// the value is three quarters full (``request(count:capacity:)``), made after the lock and handed
/// in under it (``install(_:capacity:)``), so that growing moves words and allocates nothing under
/// the lock. Growing before a spare arrives makes the storage there, counted in ``madeUnderLock``.
///
/// Not thread-safe: a part of a value kept inside its owner's lock.
struct SpareStorage<Storage: SlottedStorage> {
    private var spare: Storage?
    /// Whether a spare was asked for and not yet handed in.
    private var asked = false
    /// How many times the value grew into storage made under the lock, for want of a spare.
    private(set) var madeUnderLock = 0

    /// The slots of the storage to make after the lock: twice `capacity` once `count` reaches
    /// three quarters of it, while no spare is kept or asked for; 0 otherwise. Asks once until
    /// ``install(_:capacity:)`` is called.
    mutating func request(count: Int, capacity: Int) -> Int {
        guard !asked, spare == nil, count >= capacity - capacity / 4 else { return 0 }
        asked = true
        return 2 * capacity
    }

    /// Keeps `storage` (made after the lock) as the spare if none is kept and it is twice
    /// `capacity`, the value's present one; otherwise leaves it in `storage`, for the caller to
    /// release after the lock.
    mutating func install(_ storage: inout Storage?, capacity: Int) {
        asked = false
        guard spare == nil, storage?.slotCount == 2 * capacity else { return }
        spare = storage.take()
    }

    /// The spare to grow into from `capacity`, if one of twice that arrived; otherwise `nil`, and
    /// the caller makes the storage now, under the lock (counted).
    mutating func take(growingFrom capacity: Int) -> Storage? {
        if let made = spare.take(), made.slotCount == 2 * capacity { return made }
        madeUnderLock += 1
        return nil
    }
}

extension SpareStorage: Sendable where Storage: Sendable {}
