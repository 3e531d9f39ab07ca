import Foundation
import Testing
@testable import IdpServer

/// The token endpoint's hand-written JSON (`Page.json`), written as bytes.
@Suite("Page.json")
struct JSONWriterTests {
    @Test("keys in code-point order; strings, integers and booleans as JSON")
    func layout() {
        let response = Page.json(status: 200, ["b": "x", "a": 7, "c": true, "B": -3, "d": false])
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"B":-3,"a":7,"b":"x","c":true,"d":false}"#)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.headers["Cache-Control"] == "no-store")
    }

    @Test("quotes, backslashes and control characters are escaped; other text, non-ASCII included, is kept")
    func escaping() throws {
        let text = "q\"b\\n\nr\rt\t\u{1}\u{1F}\u{7F} é 😀 </"
        let response = Page.json(status: 400, ["error": text])
        #expect(String(decoding: response.body, as: UTF8.self)
            == "{\"error\":\"q\\\"b\\\\n\\nr\\rt\\t\\u0001\\u001f\u{7F} é 😀 </\"}")
        let decoded = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        #expect(decoded?["error"] as? String == text)
    }

    @Test("typed members give the same text as the dictionary form, in any order")
    func typedMembers() {
        let dictionary: [String: any Sendable] = ["b": "x\"y", "a": 7, "é": "ü", "B": -3, "": ""]
        let expected = Page.json(status: 200, dictionary).body
        let members: [(key: String, value: Page.JSONValue)] = [("", .string("")), ("B", .int(-3)), ("a", .int(7)), ("b", .string("x\"y")), ("é", .string("ü"))]
        #expect(Page.json(status: 200, members: members).body == expected)
        #expect(Page.json(status: 200, members: members.reversed()).body == expected)
        #expect(Page.json(status: 200, members: []).body == Array("{}".utf8))
    }

    @Test("a grant member is written as its text is")
    func grantMember() {
        for route in [0, 17, 63] {
            let handle = GrantHandle.draft(route: route).placed(in: .refreshTokens, at: UInt64(route) << 20 | 5)
            let written = Page.json(status: 200, members: [("a", .int(1)), ("token", .grant(handle))]).body
            #expect(written == Page.json(status: 200, members: [("a", .int(1)), ("token", .string(handle.text))]).body)
            var appended = Array("x".utf8)
            handle.appendText(to: &appended)
            #expect(appended == Array(("x" + handle.text).utf8))
        }
    }

    @Test("an empty object and empty strings")
    func empty() {
        #expect(Page.json(status: 200, [:]).body == Array("{}".utf8))
        #expect(Page.json(status: 200, ["": ""]).body == Array(#"{"":""}"#.utf8))
    }
}
