import IdpPrimitives
@testable import IdpServer
import Testing

@Suite("A step's secret digests")
struct SecretDigestsTests {
    @Test("each secret's digest is its own, for one secret, repeated secrets and several; an unforeseen secret or salt is hashed anew")
    func digests() {
        let salt: [UInt8] = Array(0..<16), other: [UInt8] = Array(16..<32)
        for secrets in [[], ["current"], ["current", "current"], ["current", "new"], ["a", "b", "a", "c"], ["a", "b", "b"]] {
            let digests = SecretDigests(salt: salt, secrets: secrets)
            #expect(digests.secrets == secrets)
            for secret in secrets + ["unforeseen", ""] {
                #expect(digests.digest(of: secret, salt: salt) == UserRecord.hash(secret, salt: salt), "\(secrets) \(secret)")
                #expect(digests.digest(of: secret, salt: other) == UserRecord.hash(secret, salt: other), "\(secrets) \(secret)")
            }
        }
    }
}
