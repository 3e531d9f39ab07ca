import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("HTTP header field names")
struct HTTPHeadersTests {
    @Test("names match case-insensitively exactly when their lowercased forms are equal")
    func namesMatchAgreesWithLowercased() {
        // ASCII letters in both cases, the neighbours that differ from letters by the case bit
        // ('@' and '`', '[' and '{', '^' and '~'), digits, and non-ASCII text.
        let alphabet: [String] = ["a", "A", "z", "Z", "@", "`", "[", "{", "^", "~", "-", "0", "é", "É", "İ", "i"]
        var names: [String] = [""]
        for first in alphabet {
            names.append(first)
            for second in alphabet { names.append(first + second) }
        }
        names += ["traceparent", "TraceParent", "X-KOBIL-ASTCLIENTDATA", "x-kobil-astclientdata", "x-kobil-astclientdatA1"]
        for lhs in names {
            for rhs in names {
                #expect(HTTPHeaders.namesMatch(lhs, rhs) == (lhs.lowercased() == rhs.lowercased()), "\(lhs) vs \(rhs)")
            }
        }
    }

    @Test("lookup, values, set and remove ignore the case of the name")
    func caseInsensitiveAccess() {
        var headers: HTTPHeaders = ["Content-Type": "text/html", "X-Trace": "a"]
        headers.add("x-trace", "b")
        #expect(headers["content-type"] == "text/html")
        #expect(headers.values("X-TRACE") == ["a", "b"])
        headers.set("CONTENT-TYPE", "application/json")
        #expect(headers.values("Content-Type") == ["application/json"])
        headers.remove("x-Trace")
        #expect(headers["X-Trace"] == nil)
        #expect(headers == ["content-type": "application/json"])
    }

    @Test("remove drops every field of the name, wherever it is, and keeps the others in their order")
    func removeKeepsOrder() {
        var headers = HTTPHeaders()
        for (name, value) in [("A", "1"), ("X", "2"), ("B", "3"), ("x", "4"), ("C", "5"), ("X", "6")] { headers.add(name, value) }
        headers.remove("x")
        #expect(headers == ["A": "1", "B": "3", "C": "5"])
        headers.remove("absent")
        #expect(headers == ["A": "1", "B": "3", "C": "5"])
        headers.remove("a")
        #expect(headers == ["B": "3", "C": "5"])
    }
}
