import Synchronization

/// A fixed number of atomic integers, each on 128 bytes of its own (two cache lines, against the
/// adjacent-line prefetcher): writing one never writes a line another is on. What a
/// ``StripedCounter`` stripes over, and what a sharded table keeps its per-shard versions in.
///
/// ```swift
/// let versions = SpacedAtomics(count: 16)
/// versions.addReleasing(1, at: shard)         // a writer, after changing the shard
/// let seen = versions.loadAcquiring(at: shard) // a reader, before trusting its copy
/// ```
package final class SpacedAtomics: Sendable {
    /// Atomics between two cells' atomics: 128 bytes apart.
    private static let spacing = 16
    /// How many cells there are.
    package let count: Int
    // Sound as `Sendable`: the pointer is set once in `init` and freed in `deinit`; every access
    // in between goes through an `Atomic`.
    nonisolated(unsafe) private let cells: UnsafeMutablePointer<Atomic<Int>>

    /// `count` cells, each 0.
    package init(count: Int) {
        self.count = count
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count * Self.spacing * MemoryLayout<Atomic<Int>>.stride, alignment: 128)
        cells = raw.bindMemory(to: Atomic<Int>.self, capacity: count * Self.spacing)
        for cell in 0..<count { (cells + cell * Self.spacing).initialize(to: Atomic(0)) }
    }

    deinit {
        for cell in 0..<count { _ = (cells + cell * Self.spacing).deinitialize(count: 1) }
        UnsafeMutableRawPointer(cells).deallocate()
    }

    /// Adds `delta` to cell `index` (relaxed) and returns the new value.
    @discardableResult
    package func add(_ delta: Int, at index: Int) -> Int {
        cell(index).pointee.wrappingAdd(delta, ordering: .relaxed).newValue
    }

    /// Adds `delta` to cell `index` with release ordering, so a thread that reads the new value
    /// with ``loadAcquiring(at:)`` sees every write made before it; returns the new value.
    @discardableResult
    package func addReleasing(_ delta: Int, at index: Int) -> Int {
        cell(index).pointee.wrappingAdd(delta, ordering: .releasing).newValue
    }

    /// Raises cell `index` to `value` if it holds less (relaxed): a maximum many threads keep.
    package func raise(to value: Int, at index: Int) {
        var current = cell(index).pointee.load(ordering: .relaxed)
        while current < value {
            let (exchanged, original) = cell(index).pointee.compareExchange(expected: current, desired: value, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// The value of cell `index` (relaxed).
    package func load(at index: Int) -> Int { cell(index).pointee.load(ordering: .relaxed) }

    /// The value of cell `index`, with acquire ordering.
    package func loadAcquiring(at index: Int) -> Int { cell(index).pointee.load(ordering: .acquiring) }

    @inline(__always)
    private func cell(_ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        precondition(index >= 0 && index < count, "SpacedAtomics: cell \(index) of \(count)")
        return cells + index * Self.spacing
    }
}
