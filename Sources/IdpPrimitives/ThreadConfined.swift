/// One object per OS thread for each instance of an owner: a thread's cache of a provider, a
/// thread's stripe of a log. Unlike ``ThreadSpecific`` (one key per type, made once), an owner
/// makes one per instance, as many as it likes; an instance is one small object with no state.
///
/// ```swift
/// final class Store: Sendable {
///     private let caches = ThreadConfined<Cache>()
///     func answer(_ key: String) -> String? {
///         caches.withCurrent(orMake: { Cache() }) { cache in cache.lookup(key) }
///     }
/// }
/// ```
///
/// The calling thread's object is made by `make`, on that thread, at its first
/// ``withCurrent(orMake:_:)``, and only that thread reaches it through this instance: an object
/// that only its thread touches needs no lock, and writing it writes no cache line another thread
/// writes. Finding it costs a thread-specific read and a comparison (the instance a thread used
/// last comes first), and writes nothing.
///
/// Each thread keeps the objects of the ``capacity`` instances it used last; a thread that uses
/// another one forgets its oldest, and a later use of that instance on that thread makes a new
/// object. A thread that remembers an instance keeps it (it is its own name in the thread's table,
/// so its address is not reused meanwhile) and its object alive until it forgets them or ends,
/// which may be after the instance's owner is gone: keep in the object only what may outlive the
/// owner that long.
package final class ThreadConfined<Object: AnyObject>: Sendable {
    /// Instances remembered per thread.
    package static var capacity: Int { ThreadObjects.capacity }

    /// An instance no thread has an object of yet.
    package init() {}

    /// Runs `body` with the calling thread's object, made now with `make` if this thread has none.
    /// - Parameters:
    ///   - make: Makes the calling thread's object, at its first use on this thread.
    ///   - body: Uses the object; it runs on the calling thread, and the object stays alive during it.
    /// - Returns: What `body` returns.
    @inlinable
    package func withCurrent<Result>(orMake make: () -> Object, _ body: (Object) throws -> Result) rethrows -> Result {
        try threadObjects.withValue(orMake: { ThreadObjects() }) { objects in
            // While a body runs the table forgets nothing, so an object in use stays alive and a
            // nested use of the same instance finds the same object.
            if let found = objects.object(for: ObjectIdentifier(self)) {
                objects.using += 1
                defer { objects.using -= 1 }
                // Made by `make` for this instance (its name is this instance): an `Object`, kept
                // alive by the thread's table, which only this thread changes.
                return try Unmanaged<Object>.fromOpaque(found.toOpaque())._withUnsafeGuaranteedRef(body)
            }
            let made = make()
            objects.add(made, for: self)
            objects.using += 1
            defer { objects.using -= 1 }
            return try body(made)
        }
    }
}

/// The objects of the instances a thread used last, most recent first. Only its thread reaches it.
@usableFromInline final class ThreadObjects {
    @usableFromInline static let capacity = 8

    @usableFromInline init() {}

    @usableFromInline struct Entry {
        @usableFromInline let id: ObjectIdentifier
        /// The object, unretained: `owned` keeps it alive.
        @usableFromInline let object: Unmanaged<AnyObject>
        /// Keeps the instance alive, so that its address is not reused while it names an entry
        /// here, and its object.
        let owned: (instance: AnyObject, object: AnyObject)
    }

    // Unchecked exclusivity: only this thread reaches the table, and no access overlaps another.
    @usableFromInline @exclusivity(unchecked) var entries: [Entry] = []

    /// The object of the instance `id`, unretained, if this thread has one; moves it to the front.
    @inlinable
    func object(for id: ObjectIdentifier) -> Unmanaged<AnyObject>? {
        let found: Int? = entries.withUnsafeBufferPointer { entries in
            guard !entries.isEmpty else { return nil }
            if entries[0].id == id { return 0 }
            var index = 1
            while index < entries.count {
                if entries[index].id == id { return index }
                index &+= 1
            }
            return nil
        }
        guard let found else { return nil }
        if found != 0 { moveToFront(found) }
        return entries.withUnsafeBufferPointer { $0[0].object }
    }

    @usableFromInline
    func moveToFront(_ index: Int) {
        let entry = entries.remove(at: index)
        entries.insert(entry, at: 0)
    }

    /// How many bodies are using an object of the table now (nested uses of several instances):
    /// while any is, the table forgets nothing.
    @usableFromInline @exclusivity(unchecked) var using = 0

    /// Keeps `object` as the thread's object of `instance`, forgetting the oldest ones when the
    /// table is full and no object of it is in use.
    @usableFromInline
    func add(_ object: AnyObject, for instance: AnyObject) {
        if using == 0, entries.count >= Self.capacity { entries.removeLast(entries.count - Self.capacity + 1) }
        entries.insert(Entry(id: ObjectIdentifier(instance), object: Unmanaged.passUnretained(object), owned: (instance, object)), at: 0)
    }
}

@available(*, unavailable, message: "a thread's objects belong to its thread")
extension ThreadObjects: Sendable {}

/// Every thread's table of objects.
@usableFromInline let threadObjects = ThreadSpecific<ThreadObjects>()
