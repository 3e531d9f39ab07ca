import IdpWireFormats
import Testing
@testable import McSdk

@Suite("The code grant's body, written in one pass")
struct CodeGrantBodyTests {
    @Test("is the form encoding of its five pairs, for plain, reserved, space and non-ASCII values")
    func sameAsTheEncodedPairs() {
        let values = ["", "a", "aA0-._~", "a b", "a+b&c=d", "https://kobil/OpenIdRedirectUri", "ü 😀/%?#", "x\ny\u{7F}"]
        for code in values {
            for other in values {
                // Given a code and another value for the redirect URI, the client id and the verifier
                let (redirectUri, clientId, verifier) = (other, "Kss" + other, other + "~")
                // When the body is written in one pass
                let body = TokenExchange.codeGrantBody(code: code, redirectUri: redirectUri, clientId: clientId, verifier: verifier)
                // Then it is what the form encoder makes of the pairs, in their order
                let pairs = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectUri),
                             ("client_id", clientId), ("code_verifier", verifier)]
                #expect(body == FormURLEncoding.encodeBytes(pairs), "code \(code), other \(other)")
            }
        }
    }
}
