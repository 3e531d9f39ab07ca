import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("WebViewAuthorizationRequest and WebViewToken")
struct WebViewAuthorizationTests {
    static let challenge = PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    static let redirect = "https://kobil/OpenIdRedirectUri"

    func make(_ type: WebViewAuthorizationRequest.UserType = .newUser, baseURL: String = "https://idp.example.test/", realm: String = "maverimport",
              redirectURI: String = redirect, data: String = "ast-data", id: String? = "4f6c0d2e-8f7a-4b1e-9c55-0123456789ab",
              challenge: String = challenge, method: String = "S256", state: String? = nil) throws -> WebViewAuthorizationRequest {
        try WebViewAuthorizationRequest(baseURL: baseURL, realm: realm, userType: type, redirectURI: redirectURI, astClientData: data,
                                        astClientId: id, codeChallenge: challenge, codeChallengeMethod: method, nonce: "n0nce", state: state)
    }

    @Test("builds the documented URL, with each user type's client id, in the documents' parameter order")
    func url() throws {
        let encodedRedirect = "https%3A%2F%2Fkobil%2FOpenIdRedirectUri"
        for (type, client) in [(WebViewAuthorizationRequest.UserType.newUser, "IDPRegistration"), (.existingUser, "IDPLogin"), (.loginUser, "IDPSubsequentLogin")] {
            #expect(try make(type).url == "https://idp.example.test/auth/realms/maverimport/protocol/openid-connect/auth?client_id=\(client)"
                + "&redirect_uri=\(encodedRedirect)&scope=openid&response_type=code&response_mode=fragment&nonce=n0nce"
                + "&code_challenge=\(Self.challenge)&code_challenge_method=S256")
        }
        #expect(try make(state: "a b").url.hasSuffix("&code_challenge_method=S256&state=a+b"))
        // The default nonce: 32 hex characters, fresh each time.
        let first = try WebViewAuthorizationRequest(baseURL: "https://idp.example.test", realm: "r", userType: .newUser, redirectURI: Self.redirect,
                                                    astClientData: "d", astClientId: nil, codeChallenge: Self.challenge, codeChallengeMethod: "S256")
        let second = try WebViewAuthorizationRequest(baseURL: "https://idp.example.test", realm: "r", userType: .newUser, redirectURI: Self.redirect,
                                                     astClientData: "d", astClientId: nil, codeChallenge: Self.challenge, codeChallengeMethod: "S256")
        #expect(first.nonce.count == 32 && first.nonce.allSatisfy(\.isHexDigit))
        #expect(first.nonce != second.nonce)
    }

    @Test("header rule: a new user sends X-KOBIL-ASTCLIENTDATA only; existing and login users send X-KOBIL-ASTCLIENTID too")
    func headers() throws {
        let new = try make(.newUser)
        #expect(new.headers["X-KOBIL-ASTCLIENTDATA"] == "ast-data")
        #expect(new.headers["X-KOBIL-ASTCLIENTID"] == nil)
        for type in [WebViewAuthorizationRequest.UserType.existingUser, .loginUser] {
            let request = try make(type)
            #expect(request.headers["X-KOBIL-ASTCLIENTDATA"] == "ast-data")
            #expect(request.headers["X-KOBIL-ASTCLIENTID"] == "4f6c0d2e-8f7a-4b1e-9c55-0123456789ab")
        }
    }

    @Test("bad input is refused with an error that names it")
    func badInput() {
        func refused(_ message: String, _ build: () throws -> WebViewAuthorizationRequest) {
            #expect(throws: WebViewAuthorizationError(message)) { _ = try build() }
        }
        refused("base URL 'idp.example.test' is not an http(s) URL without query and fragment") { try make(baseURL: "idp.example.test") }
        refused("base URL 'https://idp.test?x=1' is not an http(s) URL without query and fragment") { try make(baseURL: "https://idp.test?x=1") }
        refused("realm 'a/b' is empty or not made of letters, digits and -._~") { try make(realm: "a/b") }
        refused("realm '' is empty or not made of letters, digits and -._~") { try make(realm: "") }
        refused("redirect URI 'not a uri' is not an absolute URI without fragment") { try make(redirectURI: "not a uri") }
        refused("redirect URI 'https://app/cb#x' is not an absolute URI without fragment") { try make(redirectURI: "https://app/cb#x") }
        refused("AST client data is empty, longer than 4096 bytes or not a valid header value") { try make(data: "") }
        refused("AST client data is empty, longer than 4096 bytes or not a valid header value") { try make(data: "a\r\nX-Evil: 1") }
        refused("AST client data is empty, longer than 4096 bytes or not a valid header value") { try make(data: String(repeating: "a", count: 4097)) }
        refused("code challenge is not an S256 challenge (43 base64url characters)") { try make(challenge: "short") }
        refused("code challenge method 'plain' is not S256") { try make(method: "plain") }
        refused("existingUser needs the AST client id of an activated device (X-KOBIL-ASTCLIENTID)") { try make(.existingUser, id: nil) }
        refused("loginUser needs the AST client id of an activated device (X-KOBIL-ASTCLIENTID)") { try make(.loginUser, id: "00000000-0000-0000-0000-000000000000") }
        refused("state is empty or longer than 1024 bytes") { try make(state: "") }
        let malformed = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331"
        var reason = ""
        do { _ = try TraceParent(parsing: malformed) } catch { reason = "\(error)" }
        refused("traceparent is malformed: \(reason)") {
            try WebViewAuthorizationRequest(baseURL: "https://idp.test", realm: "r", userType: .newUser, redirectURI: Self.redirect, astClientData: "d",
                                            astClientId: nil, codeChallenge: Self.challenge, codeChallengeMethod: "S256", traceParent: malformed)
        }
        #expect(!reason.isEmpty)
        let traced = try? WebViewAuthorizationRequest(baseURL: "https://idp.test", realm: "r", userType: .newUser, redirectURI: Self.redirect, astClientData: "d",
                                                      astClientId: nil, codeChallenge: Self.challenge, codeChallengeMethod: "S256",
                                                      traceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        #expect(traced?.headers["traceparent"] == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    }

    @Test("the redirect is parsed from fragment or query, with error, description, URI and state; a wrong state or URI is refused")
    func redirects() throws {
        let request = try make(state: "s1")
        let success = try request.parseRedirect("\(Self.redirect)#code=c%2B1&state=s1", redirectURI: Self.redirect)
        #expect(success.code == "c+1" && success.state == "s1")
        let error = try request.parseRedirect("\(Self.redirect)?error=access_denied&error_description=no+way&error_uri=https%3A%2F%2Fidp%2Fhelp&state=s1",
                                              redirectURI: Self.redirect)
        #expect(error == AuthorizationRedirect(state: "s1", error: "access_denied", errorDescription: "no way", errorURI: "https://idp/help"))
        #expect(throws: AuthorizationRedirectError(.stateMismatch)) { try request.parseRedirect("\(Self.redirect)#code=c", redirectURI: Self.redirect) }
        #expect(throws: AuthorizationRedirectError(.stateMismatch)) { try request.parseRedirect("\(Self.redirect)#code=c&state=s2", redirectURI: Self.redirect) }
        #expect(throws: AuthorizationRedirectError(.redirectURIMismatch(expected: Self.redirect, actual: "https://evil/cb"))) {
            try request.parseRedirect("https://evil/cb#code=c&state=s1", redirectURI: Self.redirect)
        }
        #expect(throws: AuthorizationRedirectError(.missingCode)) { try request.parseRedirect("\(Self.redirect)#state=s1", redirectURI: Self.redirect) }
        #expect(throws: AuthorizationRedirectError(.duplicateParameter("code"))) {
            try request.parseRedirect("\(Self.redirect)#code=a&code=b&state=s1", redirectURI: Self.redirect)
        }
        let oversized = "\(Self.redirect)#code=" + String(repeating: "a", count: AuthorizationRedirect.maximumLength)
        #expect(throws: AuthorizationRedirectError(.tooLong(oversized.utf8.count))) { try request.parseRedirect(oversized, redirectURI: Self.redirect) }
        #expect(throws: AuthorizationRedirectError(.malformedURL)) { try request.parseRedirect("kobil OpenIdRedirectUri#code=c", redirectURI: Self.redirect) }
        #expect(throws: AuthorizationRedirectError(.invalidEncoding("code"))) { try request.parseRedirect("\(Self.redirect)#code=%zz&state=s1", redirectURI: Self.redirect) }
    }

    @Test("004's token comes from the oauth_token cookie (any case, among others) or the page title")
    func tokens() {
        #expect(WebViewToken.fromCookie("oauth_token=t1") == "t1")
        #expect(WebViewToken.fromCookie("a=1;  Oauth_Token = t2 ; b=2") == "t2")
        #expect(WebViewToken.fromCookie("oauth_token=a=b") == "a=b")
        #expect(WebViewToken.fromCookie("session=x") == nil)
        #expect(WebViewToken.fromCookie("") == nil)
        #expect(WebViewToken.fromTitle("oauth_token=t3") == "t3")
        #expect(WebViewToken.fromTitle("Done: oauth_token=t4 (close this window)") == "t4")
        #expect(WebViewToken.fromTitle("oauth_token=") == nil)
    }
}
