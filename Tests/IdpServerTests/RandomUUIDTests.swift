import Foundation
import IdpPrimitives
import Testing
@testable import IdpServer

/// The server's own version-4 UUIDs (the `session_state` of every login).
@Suite("IdpServer.randomUUID")
struct RandomUUIDTests {
    @Test("lower-case RFC 9562 version 4, variant 10, that Foundation reads back, all distinct")
    func version4() async {
        // Made and read byte by byte on an OS thread; judged here.
        let (texts, malformed, digits) = await OSThreads.run { () -> (texts: Set<String>, malformed: [String], digits: Set<UInt8>) in
            var texts = Set<String>(), malformed: [String] = [], digits = Set<UInt8>()
            for _ in 0..<1_000 {
                let text = IdpServer.randomUUID()
                texts.insert(text)
                let bytes = Array(text.utf8)
                var wellFormed = bytes.count == 36 && bytes[14] == UInt8(ascii: "4")
                    && [UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(bytes[19])
                for index in 0..<bytes.count where wellFormed {
                    if index == 8 || index == 13 || index == 18 || index == 23 {
                        wellFormed = bytes[index] == UInt8(ascii: "-")
                    } else if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(bytes[index]) {
                        digits.insert(bytes[index])
                    } else {
                        wellFormed = false
                    }
                }
                if !wellFormed || UUID(uuidString: text)?.uuidString.lowercased() != text { malformed.append(text) }
            }
            return (texts, malformed, digits)
        }
        // 36 characters, dashes at 8, 13, 18 and 23, version 4, variant 10, lower-case hex.
        #expect(malformed.isEmpty, "\(malformed.prefix(5))")
        #expect(texts.count == 1_000)
        #expect(digits == Set("0123456789abcdef".utf8))
    }
}
