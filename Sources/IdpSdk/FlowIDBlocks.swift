import IdpPrimitives
import Synchronization

/// Hands out flow numbers, unique within the process, without a shared write per flow: each
/// thread takes a block of ``blockSize`` numbers from the process-wide counter and numbers its
/// flows from it.
enum FlowIDBlocks {
    /// Numbers a thread takes at once.
    static let blockSize: UInt64 = 256

    /// The last number handed out in blocks: written once per block, not per flow.
    private static let counter = Atomic<UInt64>(0)

    /// A thread's block: the next number and the end of its block (exclusive). Only its thread
    /// reaches it.
    private final class Block {
        var next: UInt64 = 0
        var end: UInt64 = 0
    }

    private static let blocks = ThreadSpecific<Block>()

    /// The next flow number for the calling thread.
    static func next() -> UInt64 {
        let block = blocks.value { Block() }
        if block.next == block.end {
            let start = counter.wrappingAdd(blockSize, ordering: .relaxed).oldValue
            block.next = start + 1
            block.end = start + 1 + blockSize
        }
        defer { block.next += 1 }
        return block.next
    }
}
