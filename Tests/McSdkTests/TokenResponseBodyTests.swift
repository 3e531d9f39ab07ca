import Foundation
import Testing
@testable import McSdk

/// The MC's reader of token-endpoint answers: the flat fast path must read every body exactly as
/// `JSONSerialization` with `as? String` / `as? Int` did.
@Suite("TokenResponseBody")
struct TokenResponseBodyTests {
    /// What Foundation's JSON reader makes of the body: the reference the MC's own reader is checked against.
    static func foundation(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    static func expectSame(_ text: String, keys: [String], flat: Bool? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        let body = TokenResponseBody(Array(text.utf8))
        let reference = foundation(text)
        for key in keys {
            #expect(body.string(key) == reference[key] as? String, "\(key) in \(text)", sourceLocation: sourceLocation)
            #expect(body.int(key) == reference[key] as? Int, "\(key) in \(text)", sourceLocation: sourceLocation)
        }
        if let flat { #expect(body.isFlat == flat, "\(text)", sourceLocation: sourceLocation) }
    }

    @Test("an IDP token answer is read by the fast path")
    func tokenAnswer() {
        let text = #"{"access_token":"aA0-_","ast_client_id":"00000000-0000-0000-0000-000000000000","expires_in":300,"offline_expires_in":2592000,"offline_token":"o","refresh_expires_in":1800,"refresh_token":"r","scope":"openid offline_access","token_type":"Bearer","user_id":"alice"}"#
        Self.expectSame(text, keys: ["access_token", "ast_client_id", "expires_in", "offline_token", "refresh_token", "user_id", "scope", "missing"], flat: true)
        let body = TokenResponseBody(Array(text.utf8))
        #expect(body.string("access_token") == "aA0-_")
        #expect(body.int("expires_in") == 300)
        #expect(body.string("expires_in") == nil)
        #expect(body.int("user_id") == nil)
    }

    @Test("whitespace, escapes, negative numbers and non-ASCII text")
    func flatVariants() {
        Self.expectSame(" {\n\t\"a\" : \"x\\\"y\\\\z\\/\\n\\t\\b\\f\\r\" , \"b\" : -42 ,\"c\":0, \"é\":\"ü 😀\"}\r\n", keys: ["a", "b", "c", "é"], flat: true)
        Self.expectSame("{}", keys: ["a"], flat: true)
    }

    @Test("a key is found as Swift compares text: by canonical equivalence, not by bytes")
    func canonicalKeys() {
        // U+212A KELVIN SIGN is canonically equivalent to "K"; "é" composed to "e" and U+0301.
        Self.expectSame("{\"\u{212A}\":\"kelvin\",\"caf\u{E9}\":\"composed\",\"b\":7}",
                        keys: ["K", "\u{212A}", "cafe\u{301}", "caf\u{E9}", "b", "k"], flat: true)
        #expect(TokenResponseBody(Array("{\"\u{212A}\":\"kelvin\"}".utf8)).string("K") == "kelvin")
        // The same key twice, once in each spelling: left to JSONSerialization.
        Self.expectSame("{\"K\":\"x\",\"\u{212A}\":\"y\"}", keys: ["K"], flat: false)
        // An escaped key is left to JSONSerialization.
        Self.expectSame(#"{"a\/b":"x","c":"y"}"#, keys: ["a/b", "c"], flat: false)
    }

    @Test("anything else goes to JSONSerialization and reads as it did")
    func fallback() {
        let cases = [
            #"{"a":1.5,"b":"x"}"#, #"{"a":1e3}"#, #"{"a":true,"b":null}"#, #"{"a":{"b":1}}"#, #"{"a":[1]}"#,
            #"{"a":"\u0041"}"#, #"{"a":"x","a":"y"}"#, #"{"a":-0}"#, #"{"a":12345678901234567890}"#, #"{"a":01}"#,
            #"{"a":1,}"#, #"{"a" 1}"#, #"["a"]"#, #""a""#, "", "   ", #"{"a":"x"} trailing"#, "{\"a\":\"\u{1}\"}",
            #"{"a":"unterminated}"#, #"{"a":-}"#, #"{"a":"x\q"}"#,
        ]
        for text in cases {
            Self.expectSame(text, keys: ["a", "b"], flat: false)
        }
        // Not valid UTF-8 inside a string.
        let bytes: [UInt8] = Array(#"{"a":""#.utf8) + [0xFF] + Array(#""}"#.utf8)
        #expect(!TokenResponseBody(bytes).isFlat)
        #expect(TokenResponseBody(bytes).string("a") == ((try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any])?["a"] as? String)
    }

    /// Where a string's bytes live: two strings with the same address share one storage.
    static func storage(of text: String) -> UnsafeRawPointer? {
        text.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
    }

    @Test("a string the caller holds already is handed back, not made again; any other text reads as string(_:) reads it")
    func reusedString() {
        // Given a known text long enough to live in storage of its own
        let known = String(repeating: "0123456789abcdef", count: 3)
        let text = "{\"id\":\"\(known)\",\"other\":\"\(known)x\",\"escaped\":\"\(known)\\/\",\"n\":5}"
        let body = TokenResponseBody(Array(text.utf8))
        #expect(body.isFlat)
        // When the member's bytes are the known text, then the known string itself comes back
        let same = body.string("id", reusing: known)
        #expect(same == known)
        #expect(Self.storage(of: same!) == Self.storage(of: known))
        // and a fresh read of the same member is a string of its own
        #expect(Self.storage(of: body.string("id")!) != Self.storage(of: known))
        // Otherwise the member reads as string(_:) reads it
        for key in ["other", "escaped", "n", "missing"] {
            #expect(body.string(key, reusing: known) == body.string(key), "\(key)")
        }
        // and a body JSONSerialization reads gives what it read
        let fallback = TokenResponseBody(Array("{\"id\":\"\(known)\",\"x\":1.5}".utf8))
        #expect(!fallback.isFlat)
        #expect(fallback.string("id", reusing: known) == known)
    }
}
