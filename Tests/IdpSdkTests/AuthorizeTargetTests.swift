@testable import IdpSdk
import IdpWireFormats
import Testing

@Suite("The authorize request's target, written in one pass")
struct AuthorizeTargetTests {
    /// The target as pairs encoded one string at a time and joined: the reference the one-pass
    /// writer must match byte for byte, given the nonce it drew.
    static func reference(tenantId: String, redirectUri: String, clientId: String, userId: String?, challenge: String, method: String,
                          nonce: String) -> String {
        var parameters = [("nonce", nonce), ("code_challenge", challenge), ("code_challenge_method", method)]
        if let userId { parameters.append(("login_hint", userId)) }
        let path = "/auth/realms/\(FormURLEncoding.percentEncode(tenantId))/protocol/openid-connect/auth?"
        let afterClient = "&" + FormURLEncoding.encode([
            ("redirect_uri", redirectUri), ("scope", "openid"), ("response_type", "code"), ("response_mode", "fragment"),
        ])
        return path + FormURLEncoding.encode([("client_id", clientId)]) + afterClient + "&" + FormURLEncoding.encode(parameters)
    }

    /// Text of up to `length` characters drawn from ASCII letters, what form encoding escapes
    /// (space, `&`, `=`, `+`, `%`, `#`, `/`) and characters of two, three and four UTF-8 bytes.
    static func text(_ generator: inout SplitMix, length: Int) -> String {
        let pool: [Character] = ["a", "Z", "0", "-", ".", "_", "~", " ", "&", "=", "+", "%", "#", "/", "?", "é", "€", "😀", "\u{7F}"]
        return String((0..<Int(generator.next() % UInt64(length + 1))).map { _ in pool[Int(generator.next() % UInt64(pool.count))] })
    }

    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test("matches the pairs encoded one by one and joined, for every kind of character, with and without a login hint")
    func matchesTheReference() throws {
        var generator = SplitMix(state: 7)
        for round in 0..<2_000 {
            // Given a service's template and a flow's parameters of arbitrary text
            let tenantId = Self.text(&generator, length: 12), redirectUri = Self.text(&generator, length: 30)
            let clientId = Self.text(&generator, length: 20), challenge = Self.text(&generator, length: 50), method = Self.text(&generator, length: 6)
            let userId = round % 3 == 0 ? nil : Self.text(&generator, length: 20)
            let template = FlowRequests.AuthorizeTemplate(tenantId: tenantId, redirectUri: redirectUri)

            // When the target is written
            let target = FlowRequests.authorizeTarget(template: template, clientId: clientId, userId: userId, codeChallenge: challenge,
                                                      codeChallengeMethod: method)

            // Then it is the reference's text with the nonce it drew
            let nonceStart = try #require(target.range(of: "&nonce=")).upperBound
            let nonce = String(target[nonceStart...].prefix(22))
            #expect(target == Self.reference(tenantId: tenantId, redirectUri: redirectUri, clientId: clientId, userId: userId,
                                             challenge: challenge, method: method, nonce: nonce), "round \(round)")
        }
    }

    @Test("each target draws a new nonce of 16 random bytes, as URL-safe Base 64")
    func noncesAreFresh() throws {
        let template = FlowRequests.AuthorizeTemplate(tenantId: "demo", redirectUri: "https://kobil/OpenIdRedirectUri")
        var nonces = Set<String>()
        for _ in 0..<200 {
            let target = FlowRequests.authorizeTarget(template: template, clientId: "KssIdpLogin", userId: "alice",
                                                      codeChallenge: String(repeating: "c", count: 43), codeChallengeMethod: "S256")
            let query = try FormURLEncoding.decode(target[target.index(after: try #require(target.firstIndex(of: "?")))...])
            let nonce = try #require(query.first { $0.name == "nonce" }?.value)
            #expect(Base64URL.decode(nonce)?.count == 16)
            nonces.insert(nonce)
        }
        #expect(nonces.count == 200)
    }
}
