import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("ByteScan.isVisibleASCII")
struct ByteScanVisibleASCIITests {
    static func byByte(_ bytes: [UInt8]) -> Bool {
        for byte in bytes where byte <= 0x20 || byte >= 0x7F { return false }
        return true
    }

    @Test("every byte value at every place of texts up to 20 bytes long is judged as byte by byte")
    func everyByteEverywhere() {
        // Given visible texts of each length with one byte replaced, by every value, at every place
        for length in 1...20 {
            for place in 0..<length {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a") + UInt8(place % 26), count: length)
                    bytes[place] = UInt8(value)
                    // Then the word-wise answer is the byte-wise one
                    let answer = bytes.withUnsafeBufferPointer { ByteScan.isVisibleASCII($0) }
                    #expect(answer == Self.byByte(bytes), "length \(length), byte \(value) at \(place)")
                }
            }
        }
        #expect([UInt8]().withUnsafeBufferPointer { ByteScan.isVisibleASCII($0) })
    }

    @Test("random texts near the boundaries are judged as byte by byte")
    func randomTexts() {
        var random = SeededRandom(seed: 3)
        let edges: [UInt8] = [0x00, 0x1F, 0x20, 0x21, 0x22, 0x7D, 0x7E, 0x7F, 0x80, 0xFE, 0xFF, 0x41]
        for _ in 0..<20_000 {
            let bytes = (0..<random.below(40)).map { _ in random.below(4) == 0 ? UInt8(random.below(256)) : edges[random.below(edges.count)] }
            #expect(bytes.withUnsafeBufferPointer { ByteScan.isVisibleASCII($0) } == Self.byByte(bytes), "\(bytes)")
        }
    }
}
