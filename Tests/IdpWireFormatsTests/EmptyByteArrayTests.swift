import IdpPrimitives
import Testing
@testable import IdpWireFormats

@Suite("Byte arrays that come out empty")
struct EmptyByteArrayTests {
    @Test("an empty text decodes to no bytes and one symbol to none at all; no pairs encode to no bytes")
    func emptyResults() {
        #expect(Base64URL.decode("") == [])
        for single in ["Z", "=", "-", "A"] { #expect(Base64URL.decode(single) == nil, "\(single)") }
        #expect(FormURLEncoding.encodeBytes([]) == [])
        #expect(FormURLEncoding.encodeBytes([("", "")]) == Array("=".utf8))
    }

    @Test("OS threads making empty byte arrays while others read an empty array race on nothing (under ThreadSanitizer)")
    func emptyArraysShareNoWrite() async {
        // Given four threads released together: two make empty results, two read empty arrays
        let results = await OSThreads.run(4, together: true) { index -> Int in
            var total = 0
            for _ in 0..<2_000 {
                if index < 2 {
                    // When the decoder and the encoder give empty arrays
                    total += (Base64URL.decode("") ?? [1]).count + FormURLEncoding.encodeBytes([]).count
                } else {
                    let empty: [UInt8] = []
                    total += empty.withUnsafeBufferPointer { $0.count }
                }
            }
            return total
        }
        // Then every array was empty; ThreadSanitizer, on in the suite's runs, reports any write
        // the shared empty storage took from them
        #expect(results == [0, 0, 0, 0])
    }
}
