#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Memory for the slots of a large table (``SlotStorage``), made and freed outside a lock.
///
/// A probe reads one slot at a random place in a table that can span hundreds of megabytes: with
/// the kernel's 4 KB pages nearly every probe misses the TLB, and in a virtual machine a TLB miss
/// walks two page tables. So a block of at least ``hugePage`` bytes is mapped on its own, aligned
/// to a huge page, and asks the kernel for huge pages (`MADV_HUGEPAGE`, on Linux; a kernel set to
/// `never` ignores it), which a few hundred TLB entries cover. A smaller block comes from the
/// allocator. Either way every byte is written (zero) when the block is made, so no page is first
/// mapped by a change under the lock.
enum TableMemory {
    /// The size of a huge page, and the smallest block mapped on its own.
    static var hugePage: Int { 2 << 20 }

    /// A zeroed block of `bytes` bytes (at least one), aligned to `alignment`.
    static func allocate(bytes: Int, alignment: Int) -> UnsafeMutableRawPointer {
        let bytes = max(1, bytes)
        #if os(Linux)
        if bytes >= hugePage { return mapped(bytes: bytes) }
        #endif
        let block = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: alignment)
        block.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        return block
    }

    /// Frees a block of `bytes` bytes made by ``allocate(bytes:alignment:)``. A mapped block's
    /// pages go back to the kernel a few megabytes at a time first (`MADV_DONTNEED`, during which
    /// the process's other threads can still fault pages in), so the unmapping, during which they
    /// cannot, is short.
    static func release(_ block: UnsafeMutableRawPointer, bytes: Int) {
        let bytes = max(1, bytes)
        #if os(Linux)
        if bytes >= hugePage {
            let length = roundedUp(bytes)
            let piece = 2 * hugePage
            var offset = 0
            while offset < length {
                _ = madvise(block + offset, min(piece, length - offset), MADV_DONTNEED)
                offset += piece
            }
            munmap(block, length)
            return
        }
        #endif
        block.deallocate()
    }

    #if os(Linux)
    /// `bytes` rounded up to whole huge pages.
    private static func roundedUp(_ bytes: Int) -> Int { (bytes + hugePage - 1) & ~(hugePage - 1) }

    /// An anonymous mapping of `bytes` rounded up to huge pages, aligned to one, with huge pages
    /// asked for and every page written. A refused mapping stops the process, as the allocator
    /// does when it runs out of memory.
    private static func mapped(bytes: Int) -> UnsafeMutableRawPointer {
        let length = roundedUp(bytes)
        // Mapped a huge page larger, so that an aligned start lies inside; the ends are unmapped.
        guard let raw = mmap(nil, length + hugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), raw != MAP_FAILED else {
            fatalError("TableMemory: out of memory mapping \(length) bytes (errno \(errno))")
        }
        let start = (Int(bitPattern: raw) + hugePage - 1) & ~(hugePage - 1)
        let head = start - Int(bitPattern: raw)
        if head > 0 { munmap(raw, head) }
        let tail = hugePage - head
        if tail > 0 { munmap(UnsafeMutableRawPointer(bitPattern: start + length), tail) }
        let block = UnsafeMutableRawPointer(bitPattern: start)!
        _ = madvise(block, length, MADV_HUGEPAGE)
        // Written a page at a time: a fresh mapping reads as zero, and a write maps the page (a
        // huge one where the kernel grants it).
        var offset = 0
        while offset < length {
            block.storeBytes(of: 0, toByteOffset: offset, as: UInt8.self)
            offset += 4096
        }
        return block
    }
    #endif
}
