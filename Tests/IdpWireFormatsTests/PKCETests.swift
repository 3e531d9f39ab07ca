import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("PKCE")
struct PKCETests {
    static let appendixBOctets: [UInt8] = [
        116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
        22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
    ]
    static let appendixBVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let appendixBChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    @Test("RFC 7636 Appendix B: the octets encode to the example verifier")
    func appendixBVerifierEncoding() {
        #expect(Base64URL.encode(Self.appendixBOctets) == Self.appendixBVerifier)
    }

    @Test("RFC 7636 Appendix B: the verifier hashes to the example octets and challenge")
    func appendixBChallengeDerivation() {
        // Octets as printed in RFC 7636 Appendix B, confirmed with Python hashlib.
        #expect(SHA256.hash(Self.appendixBVerifier) == [
            19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8,
            118, 168, 120, 173, 109, 241, 68, 86, 110, 225, 137, 74, 203, 112, 249, 195,
        ])
        #expect(PKCE.challenge(for: Self.appendixBVerifier) == Self.appendixBChallenge)
    }

    @Test("RFC 7636 Appendix B: the verifier verifies against the challenge with S256")
    func appendixBVerify() {
        #expect(PKCE.verify(verifier: Self.appendixBVerifier, challenge: Self.appendixBChallenge, method: PKCE.methodS256))
    }

    @Test("verify refuses a wrong verifier, a wrong or unknown method, and malformed verifiers")
    func verifyRefuses() {
        let otherVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXj"
        #expect(!PKCE.verify(verifier: otherVerifier, challenge: Self.appendixBChallenge, method: "S256"))
        #expect(!PKCE.verify(verifier: Self.appendixBVerifier, challenge: Self.appendixBChallenge, method: "plain"))
        #expect(!PKCE.verify(verifier: Self.appendixBVerifier, challenge: Self.appendixBChallenge, method: "s256"))
        #expect(!PKCE.verify(verifier: Self.appendixBVerifier, challenge: Self.appendixBChallenge, method: ""))
        let short = String(Self.appendixBVerifier.dropLast())
        #expect(!PKCE.verify(verifier: short, challenge: PKCE.challenge(for: short), method: "S256"))
        let badCharacters = "dBjftJeZ4CVP+mB92K27uhbUJU1p1r/wW1gFWFOEjXk"
        #expect(!PKCE.verify(verifier: badCharacters, challenge: PKCE.challenge(for: badCharacters), method: "S256"))
        #expect(!PKCE.verify(verifier: Self.appendixBVerifier, challenge: "", method: "S256"))
    }

    @Test("plain compares the verifier itself")
    func plain() {
        #expect(PKCE.verify(verifier: Self.appendixBVerifier, challenge: Self.appendixBVerifier, method: PKCE.methodPlain))
        #expect(!PKCE.verify(verifier: Self.appendixBVerifier, challenge: Self.appendixBChallenge, method: PKCE.methodPlain))
    }

    @Test("matches takes a verifier's S256 challenge made beforehand, and asks for it only under S256")
    func matchesPrepared() {
        var asked = 0
        func prepared() -> String {
            asked += 1
            return Self.appendixBChallenge
        }
        // Called outside #expect, which evaluates a call's arguments itself to show them.
        let s256 = PKCE.matches(verifier: Self.appendixBVerifier, s256Challenge: prepared(), challenge: Self.appendixBChallenge, method: PKCE.methodS256)
        let s256Wrong = PKCE.matches(verifier: Self.appendixBVerifier, s256Challenge: prepared(), challenge: "", method: PKCE.methodS256)
        #expect(s256 && !s256Wrong && asked == 2)
        let plain = PKCE.matches(verifier: Self.appendixBVerifier, s256Challenge: prepared(), challenge: Self.appendixBVerifier, method: PKCE.methodPlain)
        let unknown = PKCE.matches(verifier: Self.appendixBVerifier, s256Challenge: prepared(), challenge: Self.appendixBChallenge, method: "s256")
        #expect(plain && !unknown && asked == 2)
    }

    @Test("verifier form: 43 to 128 unreserved characters")
    func verifierForm() {
        #expect(PKCE.isValidVerifier(String(repeating: "a", count: 43)))
        #expect(PKCE.isValidVerifier(String(repeating: "A9-._~", count: 21) + "zz"))
        #expect(PKCE.isValidVerifier(String(repeating: "a", count: 128)))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42)))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 129)))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42) + "+"))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42) + " "))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42) + "é"))
        #expect(!PKCE.isValidVerifier(""))
    }

    @Test("S256 challenge form: exactly 43 base64url characters")
    func challengeForm() {
        #expect(PKCE.isValidS256Challenge(Self.appendixBChallenge))
        #expect(!PKCE.isValidS256Challenge(String(Self.appendixBChallenge.dropLast())))
        #expect(!PKCE.isValidS256Challenge(Self.appendixBChallenge + "A"))
        #expect(!PKCE.isValidS256Challenge(String(Self.appendixBChallenge.dropLast()) + "."))
        #expect(!PKCE.isValidS256Challenge(String(Self.appendixBChallenge.dropLast()) + "~"))
        #expect(!PKCE.isValidS256Challenge(String(Self.appendixBChallenge.dropLast()) + "="))
    }

    @Test("every character at every place: a verifier takes the unreserved ones, a challenge those but '.' and '~'")
    func formByCharacter() {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".unicodeScalars)
        let scalars = (0..<128).compactMap(UnicodeScalar.init) + ["é", "\u{212A}", "\u{FF21}", "😀"]
        for scalar in scalars {
            for place in [0, 20, 42] {
                var text = String(repeating: "a", count: 42)
                text.insert(Character(scalar), at: text.index(text.startIndex, offsetBy: place))
                let isUnreserved = unreserved.contains(scalar)
                #expect(PKCE.isValidVerifier(text) == isUnreserved, "\(scalar.debugDescription) at \(place)")
                #expect(PKCE.isValidS256Challenge(text) == (isUnreserved && scalar != "." && scalar != "~"), "\(scalar.debugDescription) at \(place)")
            }
        }
    }

    @Test("made verifiers are 43 valid characters and differ")
    func makeVerifier() {
        let verifier = PKCE.makeVerifier()
        #expect(verifier.utf8.count == 43)
        #expect(PKCE.isValidVerifier(verifier))
        #expect(PKCE.isValidS256Challenge(PKCE.challenge(for: verifier)))
        #expect(PKCE.verify(verifier: verifier, challenge: PKCE.challenge(for: verifier), method: "S256"))
        #expect(PKCE.makeVerifier() != PKCE.makeVerifier())
    }

    @Test("a seeded generator makes a reproducible verifier")
    func seededVerifier() {
        var generator = SeededRandom(seed: 42)
        let verifier = PKCE.makeVerifier(using: &generator)
        // The first four outputs of seed 42, little-endian, base64url (Python reference).
        #expect(verifier == "FscuDC4LeBV-OhFthtkEYaGZ5DkyUxeuoWCzA0etuOw")
        #expect(PKCE.challenge(for: verifier) == "HavxFQVUb8TSuJ-eif7zFTHdg70OvnLRo2owQx1Kt2s")
        #expect(PKCE.makeVerifier(using: &generator) != verifier)
    }

    @Test("an S256 challenge made as a value is challenge(for:)'s text and matches only that text")
    func challengeValue() {
        #expect(PKCE.S256Challenge(for: Self.appendixBVerifier).text == Self.appendixBChallenge)
        var generator = SeededRandom(seed: 11)
        for _ in 0..<200 {
            let verifier = PKCE.makeVerifier(using: &generator)
            let expected = PKCE.challenge(for: verifier), value = PKCE.S256Challenge(for: verifier)
            #expect(value.text == expected)
            #expect(value.matches(expected))
            // One character changed at each end, one dropped, one added, and nothing.
            let first = expected.utf8.first == UInt8(ascii: "A") ? "B" : "A", last = expected.utf8.last == UInt8(ascii: "A") ? "B" : "A"
            for other in [first + expected.dropFirst(), expected.dropLast() + last, String(expected.dropLast()), expected + "A", ""] {
                #expect(!value.matches(other), "\(other)")
                #expect(!PKCE.matches(verifier: verifier, s256Challenge: value, challenge: other, method: PKCE.methodS256))
            }
            #expect(PKCE.matches(verifier: verifier, s256Challenge: value, challenge: expected, method: PKCE.methodS256))
            #expect(PKCE.matches(verifier: verifier, s256Challenge: value, challenge: verifier, method: PKCE.methodPlain))
            #expect(!PKCE.matches(verifier: verifier, s256Challenge: value, challenge: expected, method: PKCE.methodPlain))
            #expect(!PKCE.matches(verifier: verifier, s256Challenge: value, challenge: expected, method: "s256"))
        }
    }
}

@Suite("ConstantTime")
struct ConstantTimeTests {
    @Test("equal bytes compare equal, any difference or length mismatch does not")
    func bytes() {
        #expect(ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!ConstantTime.equals([0, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(ConstantTime.equals([1, 2, 3] as [UInt8], ([0, 1, 2, 3] as [UInt8]).dropFirst()))
    }

    @Test("strings compare by UTF-8 bytes, without canonical equivalence")
    func strings() {
        #expect(ConstantTime.equals("secret", "secret"))
        #expect(!ConstantTime.equals("secret", "secreT"))
        #expect(!ConstantTime.equals("secret", "secrets"))
        #expect("\u{E9}" == "e\u{301}")
        #expect(!ConstantTime.equals("\u{E9}", "e\u{301}"))
    }
}
