import Dispatch
import Foundation
import IdpPrimitives
import Synchronization

/// A FIFO of jobs: a ring of slots, a power of two of them, that doubles when full and never
/// shrinks, so once the pool has seen its longest queue an append or a pop under the pool's lock
/// allocates nothing, copies nothing and touches no page it has not touched before.
///
/// A job is kept in a ``Slot``, a struct: a closure stored straight into a generic container
/// (`[Job?]`) is converted to the container's generic form, which allocates a thunk's context per
/// append, under the lock, and calls through the thunk at the pop.
struct JobQueue: Sendable {
    struct Slot: Sendable {
        var job: WorkerPool.Job?
    }

    typealias Ring = ContiguousArray<Slot>

    private var slots = JobQueue.makeRing(slots: JobQueue.initialSlots)
    private var head = 0
    /// Jobs waiting.
    private(set) var count = 0
    /// The ring to grow into, made after the lock (``takeSpareRequest()``, ``install(_:)``).
    private var spare = GrowthSpare<Ring>()
    #if DEBUG
    /// The planted bug (``init(planting:)``).
    var planted = PlantedBugSwitch()
    #endif

    /// An empty queue.
    init() {}

    /// Slots of a new queue.
    static var initialSlots: Int { 64 }

    var isEmpty: Bool { count == 0 }

    /// How many jobs the queue holds before it grows.
    var capacity: Int { slots.count }

    mutating func append(_ job: @escaping WorkerPool.Job) {
        if count == slots.count { grow() }
        slots[(head &+ count) & (slots.count &- 1)].job = job
        count += 1
    }

    /// The slots of the ring to make after the lock, when the queue is three quarters full and
    /// has none and asked for none; `nil` otherwise. Asks once: ``install(_:)`` hands it in.
    mutating func takeSpareRequest() -> Int? {
        spare.request(2 * slots.count, due: count >= slots.count - slots.count / 4)
    }

    /// Takes `ring` (made by ``makeRing(slots:)`` after the lock) as the spare if the queue can
    /// still grow into it; otherwise leaves it in `ring`, for the caller to release after the lock.
    mutating func install(_ ring: inout Ring?) {
        let larger = 2 * slots.count
        spare.install(&ring) { $0.count == larger }
    }

    /// How many times the ring grew into one made under the lock, for want of a spare.
    var ringsMadeUnderLock: Int { spare.madeUnderLock }

    /// An empty ring of `slots` slots, every one written (so its pages are mapped when it is made,
    /// not one by one by later appends): heavy work for a ring of a page or more
    /// (``LockProfiler/noteHeavyWork(_:)``).
    static func makeRing(slots: Int) -> Ring {
        if slots >= 256 { LockProfiler.noteHeavyWork(.largeAllocation) }
        return Ring(repeating: Slot(), count: slots)
    }

    mutating func popFirst() -> WorkerPool.Job? {
        guard count > 0 else { return nil }
        // Moved out, not copied: no reference count of the job (made on another thread) is
        // touched while the pool's lock is held.
        let job = plantedKeptJob(slots[head].job) ?? slots[head].job.take()
        head = (head &+ 1) & (slots.count &- 1)
        count -= 1
        return job
    }

    /// Doubles the ring, its jobs moved to the front in order.
    private mutating func grow() {
        let size = 2 * slots.count
        var larger = spare.take { $0.count == size } ?? Self.makeRing(slots: size)
        let first = plantedGrowthStart ?? head
        for index in 0..<count { larger[index].job = slots[(first &+ index) & (slots.count &- 1)].job.take() }
        slots = larger
        head = 0
    }

}

