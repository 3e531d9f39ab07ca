import Foundation
import IdpPrimitives
import IdpWireFormats
@testable import IdpServer
import Testing

@Suite("The IDP's sharded state")
struct ShardedStateTests {
    @Test("a code, the tokens its redemption issues and every token rotated or exchanged from them live in the code's grant shard, and reuse revokes them all")
    func familyStaysInOneShard() throws {
        // Given a login whose code is redeemed, refreshed once and exchanged once
        let browser = Browser()
        let code = try browser.code()
        let (status, login) = browser.exchange(code)
        #expect(status == 200)
        let issued = try ["access_token", "refresh_token", "offline_token"].map { try #require(login[$0] as? String) }
        let (refreshed, rotation) = browser.refresh(issued[1])
        #expect(refreshed == 200)
        let rotated = try ["access_token", "refresh_token"].map { try #require(rotation[$0] as? String) }
        let exchange = browser.token([
            ("grant_type", IdpWire.tokenExchangeGrantType), ("subject_token", rotated[0]),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"), ("audience", "payments"), ("client_id", "KssIdpLogin"),
        ])
        let exchanged = try #require(exchange.json["access_token"] as? String)

        // Then every one of them routes to the code's shard and keeps a token's length
        let family = issued + rotated + [exchanged]
        for token in family {
            #expect(ShardRouting.route(of: token) == ShardRouting.route(of: code))
            #expect(token.utf8.count == 43 && Base64URL.decode(token)?.count == 32)
        }

        // When the spent refresh token is presented again, then the whole family is revoked
        #expect(browser.refresh(issued[1]).status == 400)
        for token in family { #expect(!browser.server.isTokenActive(token, tenant: "demo")) }
    }

    @Test("grant keys are equal exactly when their texts are, and a text too long to be a grant matches nothing stored")
    func grantKeys() {
        let token = ShardRouting.token(route: 5)
        #expect(GrantKey(token) == GrantKey(String(token.utf8.map { Character(UnicodeScalar($0)) })))
        var table: [GrantKey: Int] = [:]
        // Texts that differ in one byte at each position, or only in length (a trailing NUL).
        let base = String(repeating: "a", count: GrantKey.capacity)
        for cut in [0, 1, 7, 8, 9, 43, 47, 48] {
            table[GrantKey(String(base.prefix(cut)))] = cut
            table[GrantKey(String(base.prefix(cut)) + "\u{0}")] = 1_000 + cut
        }
        for position in 0..<GrantKey.capacity {
            var bytes = Array(base.utf8)
            bytes[position] = UInt8(ascii: "b")
            table[GrantKey(String(decoding: bytes, as: UTF8.self))] = 2_000 + position
        }
        #expect(table.count == 16 + GrantKey.capacity, "every distinct text is its own key (48 a's plus a NUL is the one too long)")
        #expect(table[GrantKey(String(base.prefix(8)))] == 8)
        #expect(table[GrantKey(String(base.prefix(8)) + "\u{0}")] == 1_008)
        // Too long: never issued, so never found, whatever is stored under ordinary keys.
        #expect(GrantKey(base + "x") == GrantKey(base + "y"))
        #expect(GrantKey(base + "x") != GrantKey(base))
    }

    @Test("tokens made for each route route back to it, and any text routes to some route")
    func routing() {
        for route in 0..<ShardRouting.routes {
            for _ in 0..<32 { #expect(ShardRouting.route(of: ShardRouting.token(route: route)) == route) }
        }
        for text in ["", "é", "%%%", "~", " "] { #expect((0..<ShardRouting.routes).contains(ShardRouting.route(of: text))) }
    }

    @Test("the server has four shards of each kind per core, a power of two from 16 to 64")
    func shardsSizedToTheMachine() {
        #expect([1, 2, 4, 5, 8, 16, 32].map(ServerState.shardCount(cores:)) == [16, 16, 16, 32, 32, 64, 64])
        let state = ServerState()
        #expect(state.shardCount == ServerState.shardCount(cores: ProcessInfo.processInfo.activeProcessorCount))
        #expect(state.grants.count == state.shardCount && state.sessions.count == state.shardCount && state.users.count == state.shardCount)
    }

    @Test("the same user id in two tenants is two users: a code issued in one is not outstanding in the other")
    func usersAreKeyedByTenant() throws {
        let idp = IdpServer()
        try idp.addTenant("north")
        try idp.addTenant("south")
        try idp.addUser("bob", tenant: "north")
        try idp.addUser("bob", tenant: "south")
        _ = try idp.issueActivationCode(for: "bob", tenant: "north")
        #expect(idp.user("bob", tenant: "north")?.outstandingActivationCodes == 1)
        #expect(idp.user("bob", tenant: "south")?.outstandingActivationCodes == 0)
        #expect(throws: IdpServerError.self) { try idp.addUser("bob", tenant: "north") }
    }

    @Test("a client added after its tenant is served at once from every shard's replica of the directory")
    func directoryReplicas() throws {
        let idp = IdpServer()
        try idp.addTenant("demo", standardClients: false)
        try idp.addClient(.kssIdpLogin, tenant: "demo")
        for shard in 0..<idp.state.shardCount {
            #expect(idp.state.tenant("demo", stripe: shard)?.clients["KssIdpLogin"] != nil)
            #expect(idp.state.tenant("demo", stripe: shard)?.clients["KssIdpEnrollment"] == nil)
        }
        #expect(throws: IdpServerError.self) { try idp.addClient(.kssIdpLogin, tenant: "demo") }
    }

    @Test("a step's form is the client's prepared page with the session code and the step filled in")
    func preparedForms() throws {
        let idp = IdpServer()
        try idp.addTenant("acme&co")
        let page = try #require(idp.renderStepForm(tenant: "acme&co", clientId: "KssIdpEnrollment", step: 1, sessionCode: "abc_-123"))
        #expect(page.status == 200 && page.headers["Content-Type"] == Page.xhtmlContentType)
        let form = try XHTMLForm.parse(try #require(page.bodyText))
        #expect(form.action == "/auth/realms/acme%26co/login-actions/authenticate?session_code=abc_-123&execution=2")
        #expect(form.method == "POST")
        #expect(form.title == "KssIdpEnrollment – step 2 of 3")
        #expect(form.visibleInputs.map(\.id) == ["activation-code"])
        #expect(form.hiddenInputs.map(\.value) == ["abc_-123"])
        #expect(form.errorCode == nil)
        #expect(idp.renderStepForm(tenant: "acme&co", clientId: "KssIdpEnrollment", step: 3, sessionCode: "x") == nil)
        #expect(idp.renderStepForm(tenant: "acme&co", clientId: "Nobody", step: 0, sessionCode: "x") == nil)
    }

    @Test("a rejected answer re-serves the same step's form with the rejection and the same session")
    func rejectionOnTemplate() throws {
        let browser = Browser()
        let form = try XHTMLForm.parse(try #require(browser.authorize().bodyText))
        let again = try XHTMLForm.parse(try #require(browser.submit(form, [("username", "alice"), ("password", "wrong")]).bodyText))
        #expect(again.errorCode == "invalid_credentials")
        #expect(again.errorMessage == "Invalid username or password.")
        #expect(again.action == form.action && again.hiddenInputs == form.hiddenInputs)
    }
}
