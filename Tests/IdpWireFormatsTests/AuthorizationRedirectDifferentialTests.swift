import IdpPrimitives
import IdpWireFormats
import Testing

/// The redirect parser as it read a location from an array of its bytes, split into segments:
/// the reference the in-place parser must agree with, result for result and error for error.
enum ReferenceAuthorizationRedirect {
    static func parse(location: String, expectedRedirectURI: String?, expectedState: String?) throws(AuthorizationRedirectError) -> AuthorizationRedirect {
        let bytes = Array(location.utf8)
        guard !bytes.isEmpty else { throw AuthorizationRedirectError(.empty) }
        guard bytes.count <= AuthorizationRedirect.maximumLength else { throw AuthorizationRedirectError(.tooLong(bytes.count)) }
        guard isAbsoluteURI(bytes) else { throw AuthorizationRedirectError(.malformedURL) }
        let hash = bytes.firstIndex(of: UInt8(ascii: "#"))
        let beforeFragment = hash ?? bytes.count
        let question = bytes[..<beforeFragment].firstIndex(of: UInt8(ascii: "?"))
        let baseEnd = question ?? beforeFragment
        if let expectedRedirectURI, !expectedRedirectURI.utf8.elementsEqual(bytes[..<baseEnd]) {
            throw AuthorizationRedirectError(.redirectURIMismatch(expected: expectedRedirectURI, actual: String(decoding: bytes[..<baseEnd], as: UTF8.self)))
        }
        let fragment = hash.map { bytes[($0 + 1)...] } ?? []
        let query = question.map { bytes[($0 + 1)..<beforeFragment] } ?? []
        var parameters: [(name: String, value: String)] = []
        for segment in (fragment.isEmpty ? query : fragment).split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = segment.firstIndex(of: UInt8(ascii: "="))
            let rawName = segment[..<(equals ?? segment.endIndex)]
            let rawValue = equals.map { segment[($0 + 1)...] } ?? []
            guard let name = try? FormURLEncoding.percentDecode(String(decoding: rawName, as: UTF8.self), plusAsSpace: true),
                  let value = try? FormURLEncoding.percentDecode(String(decoding: rawValue, as: UTF8.self), plusAsSpace: true) else {
                throw AuthorizationRedirectError(.invalidEncoding(String(decoding: rawName, as: UTF8.self)))
            }
            guard !parameters.contains(where: { $0.name == name }) else { throw AuthorizationRedirectError(.duplicateParameter(name)) }
            parameters.append((name, value))
        }
        func parameter(_ name: String) -> String? { parameters.first { $0.name == name }?.value }
        func nonEmpty(_ text: String?) -> String? { text?.isEmpty == false ? text : nil }
        let code = nonEmpty(parameter("code")), error = nonEmpty(parameter("error"))
        guard code != nil || error != nil else { throw AuthorizationRedirectError(.missingCode) }
        if let expectedState, parameter("state") != expectedState { throw AuthorizationRedirectError(.stateMismatch) }
        return AuthorizationRedirect(code: error == nil ? code : nil, state: parameter("state"), error: error,
                                     errorDescription: parameter("error_description"), errorURI: parameter("error_uri"),
                                     sessionState: parameter("session_state"))
    }

    static func isAbsoluteURI(_ bytes: [UInt8]) -> Bool {
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), bytes.count(where: { $0 == UInt8(ascii: "#") }) <= 1,
              let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, colon + 1 < bytes.count, isLetter(bytes[0])
        else { return false }
        return bytes[1..<colon].allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }
}

@Suite("AuthorizationRedirect read in place agrees with the reference")
struct AuthorizationRedirectDifferentialTests {
    static let redirectURI = "https://kobil/OpenIdRedirectUri"

    /// A location from pieces that reach every check: schemes good and bad, the redirect URI and
    /// near misses, spaces, control and non-ASCII characters, a second `#`, and parameters with
    /// every kind of escape, empty segments and repeated names.
    static func location(_ random: inout SeededRandom) -> String {
        let bases = [redirectURI, redirectURI + "X", "http://kobil/OpenIdRedirectUri", "1https://kobil/x", ":x", "a:", "", "a+b-c.d:rest",
                     "https://kobil/Open Id", "https://kobil/é", "https://kobil/\u{7F}", "h_t:x", "HTTPS://kobil/OpenIdRedirectUri", "x:", "x:y:z"]
        let names = ["code", "state", "error", "error_description", "error_uri", "session_state", "locked_until", "x", "", "co%64e", "%ZZ",
                     "%C3", "%C3%A9", "a+b", "code%00"]
        let values = ["abc", "", "a%20b", "a+b", "%", "%4", "%E2%82%AC", "%FF", "x=y", "s1", "%2B", "%c3%a9", "a:b"]
        func parameters() -> String {
            var text = ""
            for index in 0..<random.below(5) {
                if index > 0 || random.below(4) == 0 { text += random.below(5) == 0 ? "&&" : "&" }
                text += names[random.below(names.count)]
                if random.below(6) > 0 { text += "=" + values[random.below(values.count)] }
            }
            return text
        }
        var location = bases[random.below(bases.count)]
        if random.below(2) == 0 { location += "?" + parameters() }
        if random.below(3) > 0 { location += "#" + parameters() }
        if random.below(20) == 0 { location += "#" }
        if random.below(40) == 0 { location += String(repeating: "a", count: AuthorizationRedirect.maximumLength - location.utf8.count + random.below(3)) }
        return location
    }

    @Test("every location gives the reference's redirect or error, with each expected redirect URI and state")
    func agreesWithReference() {
        var random = SeededRandom(seed: 11)
        var outcomes = Set<String>()
        for round in 0..<20_000 {
            let location = Self.location(&random)
            let expectedURI = [nil, Self.redirectURI, ""][random.below(3)]
            let expectedState = [nil, "s1", ""][random.below(3)]
            let parsed = Result { () throws(AuthorizationRedirectError) in
                try AuthorizationRedirect.parse(location: location, expectedRedirectURI: expectedURI, expectedState: expectedState)
            }
            let reference = Result { () throws(AuthorizationRedirectError) in
                try ReferenceAuthorizationRedirect.parse(location: location, expectedRedirectURI: expectedURI, expectedState: expectedState)
            }
            #expect(parsed == reference, "round \(round): \(location.debugDescription)")
            switch reference {
            case .success(let redirect): outcomes.insert(redirect.code != nil ? "code" : "error")
            case .failure(let error): outcomes.insert("\(error.reason)".prefix { $0 != "(" }.description)
            }
        }
        // Every outcome was reached
        #expect(outcomes == ["code", "error", "empty", "tooLong", "malformedURL", "redirectURIMismatch", "duplicateParameter", "missingCode",
                             "invalidEncoding", "stateMismatch"])
    }
}
