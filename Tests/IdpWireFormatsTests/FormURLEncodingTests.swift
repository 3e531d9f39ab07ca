import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("FormURLEncoding")
struct FormURLEncodingTests {
    /// Pairs as comparable arrays, since tuples are not Equatable.
    func flat(_ pairs: [(name: String, value: String)]) -> [[String]] {
        pairs.map { [$0.name, $0.value] }
    }

    @Test("encodes pairs keeping unreserved characters, space as plus, the rest as upper-case escapes")
    func encode() {
        #expect(FormURLEncoding.encode([("a", "1"), ("b", "x y"), ("c", "&=+"), ("d", "-._~*/")]) == "a=1&b=x+y&c=%26%3D%2B&d=-._~%2A%2F")
        #expect(FormURLEncoding.encode([("é", "😀")]) == "%C3%A9=%F0%9F%98%80")
        #expect(FormURLEncoding.encode([]) == "")
        #expect(FormURLEncoding.encode([("empty", "")]) == "empty=")
    }

    @Test("encodeBytes writes exactly the bytes of encode, for every kind of field")
    func encodeBytes() {
        let cases: [[(String, String)]] = [
            [], [("empty", "")], [("", "")], [("a", "1"), ("b", "x y"), ("c", "&=+"), ("d", "-._~*/")],
            [("é", "😀")], [("naïve café", "é 😀 \u{1F1E9}\u{1F1EA}"), ("a&b=c", "100% + more")],
            [(String(repeating: "k", count: 300), String(repeating: "v w%", count: 200))],
        ]
        for pairs in cases {
            let bytes = FormURLEncoding.encodeBytes(pairs)
            #expect(bytes == Array(FormURLEncoding.encode(pairs).utf8), "\(pairs)")
            #expect(bytes.count == FormURLEncoding.encode(pairs).utf8.count)
        }
    }

    @Test("encoding after a prefix writes the prefix, the separator and exactly the text of encode")
    func encodeAfterPrefix() {
        let cases: [[(String, String)]] = [
            [], [("empty", "")], [("a", "1"), ("b", "x y"), ("c", "&=+")], [("naïve café", "é 😀 \u{1F1E9}\u{1F1EA}")],
            [(String(repeating: "k", count: 300), String(repeating: "v w%", count: 200))],
        ]
        for pairs in cases {
            for prefix in ["", "https://kobil/OpenIdRedirectUri", "app://cb?x=é", String(repeating: "p", count: 500)] {
                for separator in [UInt8(ascii: "#"), UInt8(ascii: "?"), UInt8(ascii: "&")] {
                    let written = FormURLEncoding.encode(pairs, after: prefix, separator: separator)
                    #expect(written == prefix + String(UnicodeScalar(separator)) + FormURLEncoding.encode(pairs), "\(prefix) \(pairs)")
                }
            }
        }
    }

    @Test("every ASCII character and a few multi-byte ones encode as the rule says, in forms and in percent-encoding")
    func everyCharacter() throws {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        let characters = (0..<128).map { String(UnicodeScalar(UInt8($0))) } + ["é", "€", "😀", "\u{7FF}", "\u{FFFD}"]
        for character in characters {
            let escaped = character.utf8.map { unreserved.contains($0) ? String(UnicodeScalar($0)) : "%" + String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
            #expect(FormURLEncoding.percentEncode(character) == escaped, "\(character.debugDescription)")
            #expect(FormURLEncoding.encode([(character, character)]) == (character == " " ? "+=+" : "\(escaped)=\(escaped)"), "\(character.debugDescription)")
            #expect(flat(try FormURLEncoding.decode(FormURLEncoding.encode([(character, "v" + character)]))) == [[character, "v" + character]])
        }
    }

    @Test("decodes pairs in order with plus as space")
    func decode() throws {
        let pairs = try FormURLEncoding.decode("a=1&b=x+y&c=%26%3D%2B&a=2")
        #expect(flat(pairs) == [["a", "1"], ["b", "x y"], ["c", "&=+"], ["a", "2"]])
    }

    @Test("decodes empty text, bare names, empty segments and lower-case escapes")
    func decodeEdgeCases() throws {
        #expect(try FormURLEncoding.decode("").isEmpty)
        #expect(flat(try FormURLEncoding.decode("flag")) == [["flag", ""]])
        #expect(flat(try FormURLEncoding.decode("a=1&&b=&")) == [["a", "1"], ["b", ""]])
        #expect(flat(try FormURLEncoding.decode("=x&k=v=w")) == [["", "x"], ["k", "v=w"]])
        #expect(flat(try FormURLEncoding.decode("e=%c3%a9")) == [["e", "é"]])
    }

    @Test("round-trips non-ASCII text")
    func roundTrip() throws {
        let pairs = [("naïve café", "é 😀 \u{1F1E9}\u{1F1EA}"), ("a&b=c", "100% + more"), ("", "")]
        let decoded = try FormURLEncoding.decode(FormURLEncoding.encode(pairs))
        #expect(flat(decoded) == pairs.map { [$0.0, $0.1] })
    }

    @Test("rejects malformed escapes with the offset into the whole text")
    func malformedEscapes() {
        #expect(throws: FormURLEncodingError(.malformedEscape(offset: 2), text: "a=%G1")) {
            try FormURLEncoding.decode("a=%G1")
        }
        #expect(throws: FormURLEncodingError(.malformedEscape(offset: 6), text: "a=1&b=%4")) {
            try FormURLEncoding.decode("a=1&b=%4")
        }
        #expect(throws: FormURLEncodingError(.malformedEscape(offset: 1), text: "a%=1")) {
            try FormURLEncoding.decode("a%=1")
        }
        #expect(throws: FormURLEncodingError(.malformedEscape(offset: 3), text: "abc%")) {
            try FormURLEncoding.percentDecode("abc%", plusAsSpace: false)
        }
    }

    @Test("rejects escapes that decode to invalid UTF-8")
    func invalidUTF8() {
        #expect(throws: FormURLEncodingError(.invalidUTF8, text: "a=%C3")) {
            try FormURLEncoding.decode("a=%C3")
        }
        #expect(throws: FormURLEncodingError(.invalidUTF8, text: "%FF%FE")) {
            try FormURLEncoding.percentDecode("%FF%FE", plusAsSpace: true)
        }
    }

    /// The pairs or the error of a decode, comparable.
    func outcome(_ decode: () throws(FormURLEncodingError) -> [(name: String, value: String)]?) -> Result<[[String]]?, FormURLEncodingError> {
        Result { () throws(FormURLEncodingError) in try decode().map(flat) }
    }

    @Test("a query decoded where it lies and a body decoded from its bytes give the text's pairs and errors")
    func decodeInPlace() {
        let texts = ["", "flag", "a=1&&b=&", "=x&k=v=w", "e=%c3%a9", "a=1&b=x+y&c=%26%3D%2B&a=2", "a=%G1", "a=1&b=%4", "a%=1", "a=%C3",
                     "naïve=café&é=😀", "x=é%ZZ", FormURLEncoding.encode([("naïve café", "é 😀"), ("a&b=c", "100% + more")]),
                     String(repeating: "k=v&", count: 40) + "z=%C3%28"]
        for text in texts {
            let expected = outcome { () throws(FormURLEncodingError) in try FormURLEncoding.decode(text) }
            let target = "/path?" + text + "#"
            let query = target.dropFirst(6).dropLast()
            #expect(outcome { () throws(FormURLEncodingError) in try FormURLEncoding.decode(query) } == expected, "\(text)")
            #expect(outcome { () throws(FormURLEncodingError) in try FormURLEncoding.decode(utf8: Array(text.utf8)) } == expected, "\(text)")
        }
        #expect(outcome { () throws(FormURLEncodingError) in try FormURLEncoding.decode(utf8: [0x61, 0x3D, 0xC3]) } == .success(nil))
        #expect(outcome { () throws(FormURLEncodingError) in try FormURLEncoding.decode(utf8: [0x61, 0x3D, 0xFF, 0x25]) } == .success(nil))
    }

    /// A byte-by-byte decoder to check ``FormURLEncoding/decode(_:)`` against: pieces split at
    /// `&`, the name ending at the first `=`, `+` as space, `%XX` escapes; `nil` for any error.
    static func referenceDecode(_ text: String) -> [[String]]? {
        func component(_ bytes: ArraySlice<UInt8>) -> String? {
            var output: [UInt8] = []
            var index = bytes.startIndex
            while index < bytes.endIndex {
                switch bytes[index] {
                case UInt8(ascii: "+"):
                    output.append(UInt8(ascii: " "))
                    index += 1
                case UInt8(ascii: "%"):
                    let hex = Array("0123456789abcdefABCDEF".utf8)
                    guard index + 2 < bytes.endIndex, hex.contains(bytes[index + 1]), hex.contains(bytes[index + 2]),
                          let byte = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16) else { return nil }
                    output.append(byte)
                    index += 3
                default:
                    output.append(bytes[index])
                    index += 1
                }
            }
            return String(validating: output, as: UTF8.self)
        }
        var pairs: [[String]] = []
        for piece in Array(text.utf8).split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = piece.firstIndex(of: UInt8(ascii: "=")) ?? piece.endIndex
            guard let name = component(piece[..<equals]),
                  let value = component(equals < piece.endIndex ? piece[(equals + 1)...] : []) else { return nil }
            pairs.append([name, value])
        }
        return pairs
    }

    @Test("delimiters and escapes at every position of long pieces, beside bytes that borrow, decode as byte by byte")
    func delimitersAtEveryPosition() {
        let fillers = ["a", "'", "\u{1}", "\u{7F}", "é", "~"]
        var generator = SeededRandom(seed: 7)
        for special in ["&", "=", "+", "%41", "%zz", "&&", "=&="] {
            for filler in fillers {
                for position in 0..<24 {
                    let before = String(repeating: filler, count: position), after = String(repeating: filler, count: 23 - position % 7)
                    let text = "k\(position)=" + before + special + after + "&z=" + String(repeating: "y", count: Int.random(in: 0..<20, using: &generator))
                    let decoded = try? FormURLEncoding.decode(text)
                    #expect(decoded.map(flat) == Self.referenceDecode(text), "\(text.debugDescription)")
                }
            }
        }
    }

    @Test("percent-encodes a space as %20 and keeps only unreserved characters")
    func percentEncode() {
        #expect(FormURLEncoding.percentEncode("a b&c/é~+") == "a%20b%26c%2F%C3%A9~%2B")
        #expect(FormURLEncoding.percentEncode("AZaz09-._~") == "AZaz09-._~")
    }

    @Test("percent-decodes plus as space only when asked")
    func percentDecode() throws {
        #expect(try FormURLEncoding.percentDecode("a+b%20c", plusAsSpace: false) == "a+b c")
        #expect(try FormURLEncoding.percentDecode("a+b%20c", plusAsSpace: true) == "a b c")
        #expect(try FormURLEncoding.percentDecode(FormURLEncoding.percentEncode("😀 é"), plusAsSpace: false) == "😀 é")
    }

    @Test("the error names the offset and quotes the text")
    func errorDescription() {
        #expect(FormURLEncodingError(.malformedEscape(offset: 2), text: "a=%G1").description == "malformed percent-escape at offset 2 in 'a=%G1'")
        #expect(FormURLEncodingError(.invalidUTF8, text: "a=%C3").description == "percent-decoded bytes are not valid UTF-8 in 'a=%C3'")
        let long = String(repeating: "x", count: 70)
        #expect(FormURLEncodingError(.invalidUTF8, text: long).description == "percent-decoded bytes are not valid UTF-8 in '\(String(repeating: "x", count: 64))…'")
    }
}

@Suite("XMLEscaping")
struct XMLEscapingTests {
    @Test("escapes the five XML special characters and nothing else")
    func escape() {
        #expect(XMLEscaping.escape(#"<a href="x">Tom & 'Jerry'</a>"#) == "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;")
        #expect(XMLEscaping.escape("plain é 😀") == "plain é 😀")
        #expect(XMLEscaping.escape("") == "")
        #expect(XMLEscaping.escape("&amp;") == "&amp;amp;")
    }

    @Test("escapes a special character followed by a combining mark")
    func combiningMark() {
        #expect(XMLEscaping.escape("<\u{301}") == "&lt;\u{301}")
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
