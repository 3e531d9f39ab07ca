import IdpWireFormats
import Testing

@Suite("ByteScan.isASCII")
struct ByteScanASCIITests {
    @Test("a byte above 0x7F at any place of a text of 0 to 19 bytes makes it non-ASCII")
    func asciiCheck() {
        for count in 0..<20 {
            let plain = [UInt8](repeating: UInt8(ascii: "a"), count: count)
            #expect(plain.withUnsafeBufferPointer(ByteScan.isASCII))
            for index in 0..<count {
                var marked = plain
                marked[index] = 0x80
                #expect(!marked.withUnsafeBufferPointer(ByteScan.isASCII), "length \(count), byte \(index)")
            }
        }
    }
}
