import Foundation
import Testing
@testable import IdpServer

/// The server's own version-4 UUIDs (the `session_state` of every login).
@Suite("IdpServer.randomUUID")
struct RandomUUIDTests {
    @Test("lower-case RFC 9562 version 4, variant 10, that Foundation reads back, all distinct")
    func version4() throws {
        var seen = Set<String>()
        var digits = Set<Character>()
        for _ in 0..<1_000 {
            let text = IdpServer.randomUUID()
            let characters = Array(text)
            #expect(characters.count == 36)
            #expect([8, 13, 18, 23].allSatisfy { characters[$0] == "-" })
            #expect(characters[14] == "4", "version 4: \(text)")
            #expect("89ab".contains(characters[19]), "variant 10: \(text)")
            let hex = characters.enumerated().filter { ![8, 13, 18, 23].contains($0.offset) }.map(\.element)
            #expect(hex.allSatisfy { "0123456789abcdef".contains($0) }, "lower-case hex: \(text)")
            #expect(UUID(uuidString: text)?.uuidString.lowercased() == text)
            digits.formUnion(hex)
            seen.insert(text)
        }
        #expect(seen.count == 1_000)
        #expect(digits == Set("0123456789abcdef"))
    }
}
