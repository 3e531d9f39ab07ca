import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("AuthorizationRedirect")
struct AuthorizationRedirectTests {
    static let redirectURI = "https://kobil/OpenIdRedirectUri"

    /// Asserts that parsing `location` fails for exactly `reason`.
    func expectReason(
        _ location: String, expected: String? = nil, _ reason: AuthorizationRedirectError.Reason,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(throws: AuthorizationRedirectError(reason), sourceLocation: sourceLocation) {
            try AuthorizationRedirect.parse(location: location, expectedRedirectURI: expected)
        }
    }

    @Test("reads code, state and session_state from the fragment")
    func successFragment() throws {
        let redirect = try AuthorizationRedirect.parse(
            location: "https://kobil/OpenIdRedirectUri#code=abc&state=xyz&session_state=s1",
            expectedRedirectURI: Self.redirectURI
        )
        #expect(redirect == AuthorizationRedirect(code: "abc", state: "xyz", sessionState: "s1"))
    }

    @Test("reads an error and its percent-encoded description")
    func errorFragment() throws {
        let redirect = try AuthorizationRedirect.parse(
            location: "https://kobil/OpenIdRedirectUri#error=access_denied&error_description=too%20many%20failed%20attempts",
            expectedRedirectURI: Self.redirectURI
        )
        #expect(redirect == AuthorizationRedirect(error: "access_denied", errorDescription: "too many failed attempts"))
    }

    @Test("reads the query when there is no fragment, with plus as space")
    func successQuery() throws {
        let redirect = try AuthorizationRedirect.parse(
            location: "https://kobil/OpenIdRedirectUri?code=a+b%2Fc&state=%C3%A9&iss=https%3A%2F%2Fidp",
            expectedRedirectURI: nil
        )
        #expect(redirect == AuthorizationRedirect(code: "a b/c", state: "é"))
    }

    @Test("prefers a non-empty fragment over the query, and an empty fragment falls back to the query")
    func fragmentWins() throws {
        let fromFragment = try AuthorizationRedirect.parse(location: "app.demo:/cb?code=query#code=fragment", expectedRedirectURI: "app.demo:/cb")
        #expect(fromFragment.code == "fragment")
        let fromQuery = try AuthorizationRedirect.parse(location: "app.demo:/cb?code=query#", expectedRedirectURI: "app.demo:/cb")
        #expect(fromQuery.code == "query")
    }

    @Test("reports the error, without the code, when both are present")
    func codeAndError() throws {
        let redirect = try AuthorizationRedirect.parse(location: "https://x/cb?code=abc&error=server_error&state=s", expectedRedirectURI: nil)
        #expect(redirect == AuthorizationRedirect(code: nil, state: "s", error: "server_error"))
    }

    @Test("refuses the empty location")
    func empty() {
        expectReason("", .empty)
    }

    @Test("refuses a location over the length limit")
    func tooLong() throws {
        let location = "https://x/cb?code=" + String(repeating: "a", count: AuthorizationRedirect.maximumLength)
        expectReason(location, .tooLong(AuthorizationRedirect.maximumLength + 18))
        let atLimit = "https://x/cb?code=" + String(repeating: "a", count: AuthorizationRedirect.maximumLength - 18)
        #expect(try AuthorizationRedirect.parse(location: atLimit, expectedRedirectURI: nil).code?.utf8.count == AuthorizationRedirect.maximumLength - 18)
    }

    @Test("refuses locations that are not absolute URIs")
    func malformedURL() {
        expectReason("/relative?code=abc", .malformedURL)
        expectReason("no scheme here", .malformedURL)
        expectReason("https://x/cb?code=a b", .malformedURL)
        expectReason("https://x/cb#code=a#b", .malformedURL)
        expectReason("1https://x/cb?code=a", .malformedURL)
        expectReason("https:", .malformedURL)
        expectReason("https://x/cé?code=a", .malformedURL)
        expectReason("https://x/cb?code=a\n", .malformedURL)
    }

    @Test("refuses a location for another redirect URI")
    func redirectURIMismatch() {
        expectReason(
            "https://evil/OpenIdRedirectUri#code=abc", expected: Self.redirectURI,
            .redirectURIMismatch(expected: Self.redirectURI, actual: "https://evil/OpenIdRedirectUri")
        )
        expectReason(
            "https://kobil/OpenIdRedirectUri/?code=abc", expected: Self.redirectURI,
            .redirectURIMismatch(expected: Self.redirectURI, actual: "https://kobil/OpenIdRedirectUri/")
        )
    }

    @Test("refuses a repeated parameter")
    func duplicateParameter() {
        expectReason("https://x/cb?code=a&state=1&state=2", .duplicateParameter("state"))
        expectReason("https://x/cb#code=a&code=a", .duplicateParameter("code"))
    }

    @Test("refuses a redirect with neither code nor error")
    func missingCode() {
        expectReason("https://x/cb?state=1", .missingCode)
        expectReason("https://x/cb", .missingCode)
        expectReason("https://x/cb?code=&error=", .missingCode)
        expectReason("https://x/cb?code=abc#state=1", .missingCode)
    }

    @Test("refuses malformed percent-encoding, naming the parameter")
    func invalidEncoding() {
        expectReason("https://x/cb?code=%ZZ", .invalidEncoding("code"))
        expectReason("https://x/cb?code=a&state=%C3", .invalidEncoding("state"))
    }

    @Test("error descriptions name the problem without quoting values")
    func errorDescriptions() {
        #expect(AuthorizationRedirectError(.missingCode).description == "invalid authorization redirect: neither 'code' nor 'error' is present")
        #expect(AuthorizationRedirectError(.duplicateParameter("state")).description == "invalid authorization redirect: parameter 'state' appears more than once")
        #expect(AuthorizationRedirectError(.redirectURIMismatch(expected: "https://a/cb", actual: "https://b/cb")).description
            == "invalid authorization redirect: redirect URI 'https://b/cb' is not the expected 'https://a/cb'")
        #expect(AuthorizationRedirectError(.tooLong(9000)).description == "invalid authorization redirect: location is 9000 bytes, more than the 8192 allowed")
    }
}
