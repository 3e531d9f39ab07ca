import IdpWireFormats
import Testing

@Suite("HTTPRequest's path and query")
struct HTTPRequestTargetTests {
    /// The parts as the target's characters give them: before the first `?`, and after it.
    static func expected(_ target: String) -> (path: String, query: String) {
        guard let mark = target.firstIndex(of: "?") else { return (target, "") }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    @Test("the path is the target before its first '?' and the query what follows it, wherever the '?' is")
    func splitAtFirstMark() {
        // Given targets short (inline strings) and long (searched a word at a time), with the mark
        // at every place, twice, or not at all, and letters beyond ASCII before and after it
        var targets = ["", "?", "??", "/", "/a?", "?b", "/é?q=ü", "/ü", "/a?b?c"]
        for length in 1...24 {
            for place in 0..<length {
                var characters = (0..<length).map { Character(Unicode.Scalar(UInt8(ascii: "a") + UInt8($0 % 26))) }
                characters[place] = "?"
                targets.append(String(characters))
                targets.append("/é" + String(characters) + "?x")
            }
            targets.append(String(repeating: "p", count: length))
        }
        for target in targets {
            let request = HTTPRequest(method: "GET", target: target)
            // Then both parts are the ones the characters give
            let (path, query) = Self.expected(target)
            #expect(String(request.path) == path, "\(target)")
            #expect(String(request.query) == query, "\(target)")
        }
    }
}
