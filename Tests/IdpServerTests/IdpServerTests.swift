import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpServer
import Testing

/// Drives the IDP over its HTTP-shaped interface, as the SDK would.
struct Browser {
    let server: IdpServer
    let clock = ManualClock()
    static let redirect = "https://kobil/OpenIdRedirectUri"
    static let rfcVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    init(lockout: LockoutPolicy = .disabled, controller: (any ExecutionController)? = nil, plantedBug: PlantedBug? = nil) {
        var configuration = IdpServer.Configuration(clock: clock, lockout: lockout)
        configuration.controller = controller
        configuration.plantedBug = PlantedBugSwitch(plantedBug)
        server = IdpServer(configuration: configuration)
        try! server.addTenant("demo")
        try! server.addUser("alice", tenant: "demo", password: "pw-alice")
    }

    func authorize(_ parameters: [(String, String)]? = nil, headers: HTTPHeaders = ["X-KOBIL-ASTCLIENTDATA": "opaque"]) -> HTTPResponse {
        let query = parameters ?? [
            ("client_id", "KssIdpLogin"), ("redirect_uri", Self.redirect), ("response_type", "code"), ("scope", "openid"),
            ("code_challenge", Self.rfcChallenge), ("code_challenge_method", "S256"),
        ]
        return server.handle(HTTPRequest(method: "GET", target: "/auth/realms/demo/protocol/openid-connect/auth?" + FormURLEncoding.encode(query), headers: headers))
    }

    func submit(_ form: XHTMLForm, _ answers: [(String, String)]) -> HTTPResponse {
        let body = answers + form.hiddenInputs.map { ($0.name, $0.value ?? "") }
        return server.handle(HTTPRequest(method: "POST", target: form.action, headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array(FormURLEncoding.encode(body).utf8)))
    }

    func token(_ parameters: [(String, String)]) -> (status: Int, json: [String: Any]) {
        let response = server.handle(HTTPRequest(method: "POST", target: "/auth/realms/demo/protocol/openid-connect/token", body: Array(FormURLEncoding.encode(parameters).utf8)))
        return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:])
    }

    /// A login for alice up to the code.
    func code() throws -> String {
        let form = try XHTMLForm.parse(try #require(authorize().bodyText))
        let redirect = submit(form, [("username", "alice"), ("password", "pw-alice")])
        #expect(redirect.status == 302)
        let location = try #require(redirect.headers["Location"])
        return try #require(try AuthorizationRedirect.parse(location: location, expectedRedirectURI: Self.redirect).code)
    }

    func exchange(_ code: String, verifier: String = Browser.rfcVerifier, clientId: String = "KssIdpLogin", redirect: String = Browser.redirect) -> (status: Int, json: [String: Any]) {
        token([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect), ("client_id", clientId), ("code_verifier", verifier)])
    }
}

@Suite("The IDP's HTTP endpoints")
struct IdpServerEndpointTests {
    let browser = Browser()

    @Test("the token endpoint accepts the RFC 7636 Appendix B verifier for its challenge and issues three tokens")
    func rfc7636Exchange() throws {
        let (status, json) = browser.exchange(try browser.code())
        #expect(status == 200)
        #expect(json["token_type"] as? String == "Bearer")
        #expect(json["user_id"] as? String == "alice")
        #expect(json["expires_in"] as? Int == 300)
        for name in ["access_token", "refresh_token", "offline_token"] {
            let token = try #require(json[name] as? String)
            #expect(browser.server.isTokenActive(token, tenant: "demo"))
        }
    }

    @Test("a wrong verifier, client or redirect URI is refused without burning the code")
    func mismatchesKeepTheCode() throws {
        let code = try browser.code()
        #expect(browser.exchange(code, verifier: String(repeating: "a", count: 43)).json["error_description"] as? String == "code_verifier does not match the code challenge")
        #expect(browser.exchange(code, verifier: "short").json["error_description"] as? String == "code_verifier is malformed (RFC 7636 §4.1)")
        #expect(browser.exchange(code, clientId: "KssIdpEnrollment").json["error_description"] as? String == "authorization code was issued to another client")
        #expect(browser.exchange(code, redirect: "https://evil.test").json["error_description"] as? String == "redirect_uri does not match the authorization request")
        #expect(browser.exchange(code).status == 200)
    }

    @Test("a code is single-use and short-lived")
    func singleUseShortLived() throws {
        let code = try browser.code()
        #expect(browser.exchange(code).status == 200)
        let again = browser.exchange(code)
        #expect(again.status == 400)
        #expect(again.json["error"] as? String == "invalid_grant")
        let late = try browser.code()
        browser.clock.advance(by: .seconds(60))
        #expect(browser.exchange(late).json["error_description"] as? String == "authorization code has expired")
    }

    @Test("token requests missing a parameter, or with another grant type, are refused by name")
    func tokenRequestErrors() {
        #expect(browser.token([("code", "x")]).json["error_description"] as? String == "missing parameter 'grant_type'")
        #expect(browser.token([("grant_type", "password")]).json["error"] as? String == "unsupported_grant_type")
        for missing in ["code", "redirect_uri", "client_id", "code_verifier"] {
            let all = [("grant_type", "authorization_code"), ("code", "c"), ("redirect_uri", "r"), ("client_id", "k"), ("code_verifier", "v")]
            let response = browser.token(all.filter { $0.0 != missing })
            #expect(response.status == 400)
            #expect(response.json["error_description"] as? String == "missing parameter '\(missing)'")
        }
        #expect(browser.token([("grant_type", "authorization_code"), ("grant_type", "x")]).json["error_description"] as? String == "parameter 'grant_type' is given more than once")
    }

    @Test("token responses are JSON that escapes quotes, backslashes and control characters in what they echo")
    func tokenJSONEscaping() {
        let odd = "a\"b\\c\nd\u{01}é😀"
        let response = browser.token([("grant_type", odd)])
        #expect(response.status == 400)
        #expect(response.json["error_description"] as? String == "grant_type '\(odd)' is not supported")
        #expect(response.json.keys.sorted() == ["error", "error_description"])
    }

    @Test("authorize requests with bad parameters are refused, by error page or by redirect")
    func authorizeErrors() throws {
        func notice(_ response: HTTPResponse) -> String? { response.bodyText.flatMap(XHTMLForm.errorNotice(in:))?.code }
        func redirectError(_ response: HTTPResponse) throws -> String? {
            let location = try #require(response.headers["Location"])
            return try AuthorizationRedirect.parse(location: location, expectedRedirectURI: Browser.redirect).errorDescription
        }
        let good: [(String, String)] = [("client_id", "KssIdpLogin"), ("redirect_uri", Browser.redirect), ("response_type", "code"),
                                        ("code_challenge", Browser.rfcChallenge), ("code_challenge_method", "S256")]
        func replacing(_ name: String, _ value: String?) -> [(String, String)] {
            good.filter { $0.0 != name } + (value.map { [(name, $0)] } ?? [])
        }
        #expect(notice(browser.authorize(replacing("client_id", "Nope"))) == "unknown_client")
        #expect(notice(browser.authorize(replacing("redirect_uri", "https://evil.test"))) == "invalid_redirect_uri")
        #expect(notice(browser.authorize(good + [("client_id", "KssIdpLogin")])) == "invalid_request")
        #expect(try redirectError(browser.authorize(replacing("code_challenge_method", "plain"))) == "code_challenge_method must be S256")
        #expect(try redirectError(browser.authorize(replacing("code_challenge", nil))) == "code_challenge is missing or is not an S256 challenge")
        #expect(try redirectError(browser.authorize(replacing("response_type", "token"))) == "response_type must be 'code'")
        #expect(try redirectError(browser.authorize(good, headers: [:])) == "the X-KOBIL-ASTCLIENTDATA header is missing or too long")
    }

    @Test("a form submitted for the wrong step, to an unknown session, or after the session expired is refused")
    func sessionErrors() throws {
        let form = try XHTMLForm.parse(try #require(browser.authorize().bodyText))
        let stale = XHTMLForm(title: nil, action: form.action.replacingOccurrences(of: "execution=1", with: "execution=2"), method: "POST", inputs: form.inputs, errorMessage: nil, errorCode: nil)
        #expect(browser.submit(stale, []).bodyText.flatMap(XHTMLForm.errorNotice(in:))?.code == "stale_form")
        let unknown = XHTMLForm(title: nil, action: "/auth/realms/demo/login-actions/authenticate?session_code=nope&execution=1", method: "POST", inputs: [], errorMessage: nil, errorCode: nil)
        #expect(browser.submit(unknown, []).bodyText.flatMap(XHTMLForm.errorNotice(in:))?.code == "invalid_session")
        browser.clock.advance(by: .seconds(1801))
        #expect(browser.submit(form, [("username", "alice"), ("password", "pw-alice")]).bodyText.flatMap(XHTMLForm.errorNotice(in:))?.code == "session_expired")
    }

    @Test("a missing field re-serves the step without counting against the user")
    func missingFieldReAsks() throws {
        let form = try XHTMLForm.parse(try #require(browser.authorize().bodyText))
        let again = try XHTMLForm.parse(try #require(browser.submit(form, [("username", "alice")]).bodyText))
        #expect(again.errorCode == "missing_field")
        #expect(again.errorMessage == "Please fill in Password.")
        #expect(browser.server.user("alice", tenant: "demo")?.failedAttempts == 0)
    }

    @Test("unknown paths, wrong methods and oversized bodies get 404, 405 and 413")
    func httpErrors() {
        #expect(browser.server.handle(HTTPRequest(method: "GET", target: "/nope")).status == 404)
        #expect(browser.server.handle(HTTPRequest(method: "GET", target: "/auth/realms/demo/protocol/openid-connect/token")).status == 405)
        #expect(browser.server.handle(HTTPRequest(method: "POST", target: "/auth/realms/demo/protocol/openid-connect/token", body: Array(repeating: 65, count: 70_000))).status == 413)
        #expect(browser.server.handle(HTTPRequest(method: "GET", target: "/auth/realms/nowhere/protocol/openid-connect/auth")).status == 404)
    }

    @Test("the audit log never holds a password, code or token")
    func auditLogHasNoSecrets() throws {
        let code = try browser.code()
        let json = browser.exchange(code).json
        let log = browser.server.auditLog().map(\.description).joined(separator: "\n")
        #expect(!log.isEmpty)
        for secret in ["pw-alice", code, json["access_token"] as? String ?? "?", json["refresh_token"] as? String ?? "?"] {
            #expect(!log.contains(secret))
        }
    }
}

@Suite("The IDP's administration")
struct IdpServerAdministrationTests {
    @Test("refuses duplicates and unknowns with an error naming them")
    func duplicatesAndUnknowns() throws {
        let server = IdpServer()
        try server.addTenant("t")
        #expect(throws: IdpServerError(.tenantExists("t"))) { try server.addTenant("t") }
        #expect(throws: IdpServerError(.invalidArgument("tenant id 'a/b' is empty or contains '/'"))) { try server.addTenant("a/b") }
        #expect(throws: IdpServerError(.clientExists("KssIdpLogin"))) { try server.addClient(.kssIdpLogin, tenant: "t") }
        #expect(throws: IdpServerError(.unknownTenant("x"))) { try server.addUser("u", tenant: "x") }
        try server.addUser("u", tenant: "t")
        #expect(throws: IdpServerError(.userExists("u"))) { try server.addUser("u", tenant: "t") }
        #expect(throws: IdpServerError(.unknownUser("v"))) { _ = try server.issueActivationCode(for: "v", tenant: "t") }
        #expect(throws: IdpServerError(.invalidArgument("password is empty"))) { try server.addUser("w", tenant: "t", password: "") }
    }

    @Test("refuses clients whose steps make no sense for their purpose")
    func invalidClients() throws {
        let server = IdpServer()
        try server.addTenant("t")
        let user = IdpFormField(id: "u", role: .username), pass = IdpFormField(id: "p", role: .password)
        let cases: [(IdpClientConfiguration, String)] = [
            (.init(clientId: "A", purpose: .login, steps: []), "client 'A' has an empty step"),
            (.init(clientId: "B", purpose: .login, steps: [[pass]]), "client 'B' must ask for the username exactly once"),
            (.init(clientId: "C", purpose: .login, steps: [[pass], [user]]), "client 'C' must ask for the username in its first step"),
            (.init(clientId: "D", purpose: .login, steps: [[user]]), "login client 'D' never asks for the password"),
            (.init(clientId: "E", purpose: .enrollment, steps: [[user, IdpFormField(id: "n", role: .newPassword)]]), "enrollment client 'E' never asks for the activation code"),
            (.init(clientId: "F", purpose: .login, steps: [[user, pass, IdpFormField(id: "p", role: .attribute("x"))]]), "client 'F' asks field 'p' twice"),
            (.init(clientId: "G", purpose: .login, steps: [[user, pass]], maxAttempts: 0), "client 'G' must allow at least one attempt per step"),
        ]
        for (client, problem) in cases {
            #expect(throws: IdpServerError(.invalidClient(problem))) { try server.addClient(client, tenant: "t") }
        }
    }
}
