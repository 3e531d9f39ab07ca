/// Storage a value grows into or by, measured in slots (a ``JobQueue``'s ring, a
/// ``DeadlineHeap``'s chunk).
protocol SlottedStorage {
    /// How many slots it has.
    var slotCount: Int { get }
}

extension ContiguousArray: SlottedStorage {
    var slotCount: Int { count }
}

/// The storage a value kept under a lock grows by next (a larger ring it moves into, one more
/// chunk): asked for under the lock once the value is nearly full (``request(_:due:)``), made
/// after the lock and handed in under it (``install(_:slots:)``), so that growing moves words and
/// allocates nothing under the lock. Growing before a spare arrives makes the storage there,
/// counted in ``madeUnderLock``.
///
/// Not thread-safe: a part of a value kept inside its owner's lock.
struct SpareStorage<Storage: SlottedStorage> {
    private var spare: Storage?
    /// Whether a spare was asked for and not yet handed in.
    private var asked = false
    /// How many times the value grew into storage made under the lock, for want of a spare.
    private(set) var madeUnderLock = 0

    /// The slots of the storage to make after the lock, `slots`, when `due` and no spare is kept
    /// or asked for; 0 otherwise. Asks once until ``install(_:slots:)`` is called.
    mutating func request(_ slots: Int, due: Bool) -> Int {
        guard due, !asked, spare == nil else { return 0 }
        asked = true
        return slots
    }

    /// Keeps `storage` (made after the lock) as the spare if none is kept and it has `slots`, what
    /// the value grows by next; otherwise leaves it in `storage`, for the caller to release after
    /// the lock.
    mutating func install(_ storage: inout Storage?, slots: Int) {
        asked = false
        guard spare == nil, storage?.slotCount == slots else { return }
        spare = storage.take()
    }

    /// The spare to grow by, if one of `slots` arrived; otherwise `nil`, and the caller makes the
    /// storage now, under the lock (counted).
    mutating func take(slots: Int) -> Storage? {
        if let made = spare.take(), made.slotCount == slots { return made }
        madeUnderLock += 1
        return nil
    }
}

extension SpareStorage: Sendable where Storage: Sendable {}
