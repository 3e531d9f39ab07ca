@testable import IdpServer
import Testing

@Suite("Table memory")
struct TableMemoryTests {
    @Test("a block of at least a huge page is aligned to one; every block reads as zero, takes writes to its last byte, and is freed", arguments: [
        1, 4_096, TableMemory.hugePage - 8, TableMemory.hugePage, 3 * TableMemory.hugePage + 100,
    ])
    func blocks(bytes: Int) {
        let block = TableMemory.allocate(bytes: bytes, alignment: 8)
        if bytes >= TableMemory.hugePage { #expect(Int(bitPattern: block) % TableMemory.hugePage == 0) }
        let view = block.bindMemory(to: UInt8.self, capacity: bytes)
        #expect((0..<bytes).allSatisfy { view[$0] == 0 })
        view[bytes - 1] = 0xA5
        #expect(view[bytes - 1] == 0xA5)
        view[0] = 0x5A
        #expect(view[0] == 0x5A)
        TableMemory.release(block, bytes: bytes)
    }
}
