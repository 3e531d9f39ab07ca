import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("Base64URL")
struct Base64URLTests {
    /// RFC 4648 §10 test vectors; none of them uses '+' or '/', so they are the same in the
    /// URL alphabet once padding is dropped.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"),
        ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ]

    @Test("encodes the RFC 4648 §10 vectors without padding")
    func encodeVectors() {
        for (plain, encoded) in Self.vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        }
    }

    @Test("decodes the RFC 4648 §10 vectors with and without padding")
    func decodeVectors() {
        let padded = ["", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"]
        for ((plain, encoded), paddedText) in zip(Self.vectors, padded) {
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
            #expect(Base64URL.decode(paddedText) == Array(plain.utf8))
        }
    }

    @Test("uses '-' and '_' for the bytes 0xfb 0xff")
    func urlAlphabet() {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
        #expect(Base64URL.decode("-_8=") == [0xfb, 0xff])
    }

    @Test("round-trips every byte value and every length up to 70")
    func roundTrip() {
        let all = (0...255).map { UInt8($0) }
        #expect(Base64URL.decode(Base64URL.encode(all)) == all)
        for length in 0...70 {
            let bytes = Array(all.prefix(length))
            let encoded = Base64URL.encode(bytes)
            #expect(encoded.utf8.count == (length * 4 + 2) / 3)
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }

    @Test("rejects the standard alphabet, whitespace, bad padding and impossible lengths")
    func rejectsBadInput() {
        #expect(Base64URL.decode("+/8") == nil)
        #expect(Base64URL.decode("Zm9v YmFy") == nil)
        #expect(Base64URL.decode("Zm9v\n") == nil)
        #expect(Base64URL.decode("Z") == nil)
        #expect(Base64URL.decode("Zm9vY") == nil)
        #expect(Base64URL.decode("Zg=") == nil)
        #expect(Base64URL.decode("Zg===") == nil)
        #expect(Base64URL.decode("Z===") == nil)
        #expect(Base64URL.decode("====") == nil)
        #expect(Base64URL.decode("Zm9v====") == nil)
        #expect(Base64URL.decode("Zg=a") == nil)
        #expect(Base64URL.decode("=Zg=") == nil)
        #expect(Base64URL.decode("Zm9vYg==Zg==") == nil)
        #expect(Base64URL.decode("Zé") == nil)
    }

    @Test("decoding into a buffer gives the array's bytes, and nothing for bad text or too little room")
    func decodeIntoBuffer() {
        let all = (0...255).map { UInt8($0) }
        var texts = ["+/8", "Zm9v YmFy", "Z", "Zg=", "Zg===", "Zm9vYg==Zg==", "Zé", "Zh", "Zm9", "Zg==", "Zm8=", "-_8="]
        for length in 0...70 { texts.append(Base64URL.encode(all.prefix(length))) }
        for text in texts {
            var room = [UInt8](repeating: 0, count: 128)
            let written = room.withUnsafeMutableBytes { Base64URL.decode(text, into: $0) }
            #expect(written.map { Array(room.prefix($0)) } == Base64URL.decode(text), "\(text)")
        }
        var small = [UInt8](repeating: 0, count: 2)
        #expect(small.withUnsafeMutableBytes { Base64URL.decode("Zm9v", into: $0) } == nil)
        #expect(small.withUnsafeMutableBytes { Base64URL.decode("Zm8", into: $0) } == 2)
    }

    @Test("rejects non-zero unused trailing bits")
    func rejectsTrailingBits() {
        #expect(Base64URL.decode("Zh") == nil)
        #expect(Base64URL.decode("Zm9") == nil)
        #expect(Base64URL.decode("Zm8") == Array("fo".utf8))
    }
}
