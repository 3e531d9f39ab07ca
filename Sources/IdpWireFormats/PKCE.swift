/// Proof Key for Code Exchange (RFC 7636): verifier generation, challenge derivation, checking.
package enum PKCE {
    /// The `code_challenge_method` for SHA-256 challenges (RFC 7636 §4.2).
    package static let methodS256 = "S256"
    /// The `code_challenge_method` where the challenge is the verifier itself (RFC 7636 §4.2).
    package static let methodPlain = "plain"

    /// Creates a verifier from 32 secure random bytes, as RFC 7636 §4.1 recommends.
    /// - Returns: A 43-character URL-safe Base 64 verifier.
    package static func makeVerifier() -> String {
        // The bytes stay on the stack, encoded straight into the verifier: no array between.
        SecureRandom.token(byteCount: 32)
    }

    /// Creates a verifier from 32 bytes of the given generator, so tests and benchmarks are
    /// reproducible with `SeededRandom` (module IdpPrimitives).
    /// - Parameter generator: The source of randomness.
    /// - Returns: A 43-character URL-safe Base 64 verifier.
    package static func makeVerifier(using generator: inout some RandomNumberGenerator) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<4 {
            var word = generator.next()
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return Base64URL.encode(bytes)
    }

    /// Derives the S256 challenge: BASE64URL(SHA256(ASCII(verifier))).
    /// - Parameter verifier: The code verifier.
    /// - Returns: The 43-character challenge.
    package static func challenge(for verifier: String) -> String {
        var hash = SHA256()
        hash.update(verifier)
        // Encoded from the digest's bytes on the stack: no array between.
        return hash.finalize { Base64URL.encode(raw: $0) }
    }

    /// A verifier's S256 challenge, the 43 characters of ``challenge(for:)``, kept inline in the
    /// value: made before a check that must not hash (``matches(verifier:s256Challenge:challenge:method:)``),
    /// with no string made.
    package struct S256Challenge: Sendable {
        /// The characters' bytes, in the first 43 of these 48.
        private var characters: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)

        /// How many characters a challenge has: the encoding of a 32-byte digest.
        static let length = 43

        /// The S256 challenge of `verifier`.
        package init(for verifier: String) {
            var hash = SHA256()
            hash.update(verifier)
            hash.finalize { digest in
                withUnsafeMutableBytes(of: &characters) { characters in
                    _ = Base64URL.write(digest, into: characters.bindMemory(to: UInt8.self))
                }
            }
        }

        /// The challenge as text, as ``challenge(for:)`` makes it.
        package var text: String {
            withUTF8 { String(decoding: $0, as: UTF8.self) }
        }

        /// Whether `challenge` is this challenge, compared in constant time.
        package func matches(_ challenge: String) -> Bool {
            withUTF8 { ConstantTime.equals($0, challenge.utf8) }
        }

        private func withUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
            withUnsafeBytes(of: characters) { body(UnsafeBufferPointer(rebasing: $0.bindMemory(to: UInt8.self)[..<Self.length])) }
        }
    }

    /// Whether a verifier has the RFC 7636 §4.1 form: 43 to 128 characters of
    /// ALPHA / DIGIT / "-" / "." / "_" / "~".
    /// - Parameter verifier: The candidate verifier.
    /// - Returns: `true` when the form is valid.
    package static func isValidVerifier(_ verifier: String) -> Bool {
        let count = verifier.utf8.count
        // By table: a branch per character on the character ranges mispredicted on random text.
        return count >= 43 && count <= 128 && FormURLEncoding.isUnreserved(verifier)
    }

    /// Whether a challenge can be an S256 challenge: exactly 43 URL-safe Base 64 characters.
    /// - Parameter challenge: The candidate challenge.
    /// - Returns: `true` when the form is valid.
    package static func isValidS256Challenge(_ challenge: String) -> Bool {
        // The unreserved characters but `.` and `~` are URL-safe Base 64's alphabet, read by table.
        challenge.utf8.count == 43 && Base64URL.isAlphabet(challenge)
    }

    /// Checks a verifier against the challenge sent with the authorization request (RFC 7636 §4.6).
    /// - Parameters:
    ///   - verifier: The `code_verifier` from the token request.
    ///   - challenge: The `code_challenge` from the authorization request.
    ///   - method: The `code_challenge_method`: ``methodS256`` or ``methodPlain``.
    /// - Returns: `true` only when the verifier is well formed, the method is known and the
    ///   verifier matches; the comparison runs in constant time.
    package static func verify(verifier: String, challenge: String, method: String) -> Bool {
        isValidVerifier(verifier) && matches(verifier: verifier, s256Challenge: PKCE.challenge(for: verifier), challenge: challenge, method: method)
    }

    /// Checks a verifier of valid form (``isValidVerifier(_:)``) against the challenge sent with
    /// the authorization request, given the verifier's S256 challenge (``challenge(for:)``),
    /// which is evaluated only for ``methodS256``: a caller that must not hash at the moment of
    /// the check (under a lock, say) passes one it made beforehand.
    /// - Parameters:
    ///   - verifier: The `code_verifier` from the token request, already checked for its form.
    ///   - s256Challenge: The verifier's S256 challenge.
    ///   - challenge: The `code_challenge` from the authorization request.
    ///   - method: The `code_challenge_method`: ``methodS256`` or ``methodPlain``.
    /// - Returns: `true` only when the method is known and the verifier matches; the comparison
    ///   runs in constant time.
    package static func matches(verifier: String, s256Challenge: @autoclosure () -> String, challenge: String, method: String) -> Bool {
        matches(verifier: verifier, challenge: challenge, method: method) { ConstantTime.equals(s256Challenge(), challenge) }
    }

    /// ``matches(verifier:s256Challenge:challenge:method:)`` with the verifier's S256 challenge
    /// made beforehand as a value (``S256Challenge``): the check makes no string.
    package static func matches(verifier: String, s256Challenge: S256Challenge, challenge: String, method: String) -> Bool {
        matches(verifier: verifier, challenge: challenge, method: method) { s256Challenge.matches(challenge) }
    }

    /// The method rules of both `matches` forms: `s256Matches` answers for ``methodS256``, asked
    /// only under it.
    private static func matches(verifier: String, challenge: String, method: String, s256Matches: () -> Bool) -> Bool {
        switch method {
        case methodS256: s256Matches()
        case methodPlain: ConstantTime.equals(verifier, challenge)
        default: false
        }
    }
}
