#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Hands out flow numbers, unique within the process, without a shared write per flow: each
/// thread takes a block of ``blockSize`` numbers from the process-wide counter and numbers its
/// flows from it.
enum FlowIDBlocks {
    /// Numbers a thread takes at once.
    static let blockSize: UInt64 = 256

    /// The last number handed out in blocks: written once per block, not per flow.
    private static let counter = Atomic<UInt64>(0)

    /// A thread's block: the next number and the end of its block (exclusive).
    private struct Block {
        var next: UInt64
        var end: UInt64
    }

    // Created once, process-wide (a `static let` is initialised once, thread-safely). Each thread's
    // value is a block it allocated itself; the destructor frees it when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            pointer?.assumingMemoryBound(to: Block.self).deinitialize(count: 1).deallocate()
        }
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// The next flow number for the calling thread.
    static func next() -> UInt64 {
        let block: UnsafeMutablePointer<Block>
        if let stored = pthread_getspecific(key) {
            block = stored.assumingMemoryBound(to: Block.self)
        } else {
            block = UnsafeMutablePointer<Block>.allocate(capacity: 1)
            block.initialize(to: Block(next: 0, end: 0))
            _ = pthread_setspecific(key, block)
        }
        if block.pointee.next == block.pointee.end {
            let start = counter.wrappingAdd(blockSize, ordering: .relaxed).oldValue
            block.pointee = Block(next: start + 1, end: start + 1 + blockSize)
        }
        defer { block.pointee.next += 1 }
        return block.pointee.next
    }
}
