import Foundation
import IdpPrimitives
import IdpWireFormats

/// What a token request presents with an authorization code (RFC 6749 §4.1.3, RFC 7636 §4.5),
/// prepared before the code's shard is locked: the verifier's S256 challenge (a SHA-256) is made
/// here, so the decision under the lock compares strings.
struct PresentedCode {
    let tenant: String
    let clientId: String
    let redirectURI: String
    let verifier: String
    let verifierIsValid: Bool
    /// The verifier's S256 challenge; `nil` for a malformed verifier.
    let verifierChallenge: PKCE.S256Challenge?
    let now: Date
    #if DEBUG
    /// The planted bug of the endpoint that made it (`IdpServer.plantedRequest(_:)`).
    var planted = PlantedBugSwitch()
    #endif

    init(tenant: String, clientId: String, redirectURI: String, verifier: String, now: Date) {
        self.tenant = tenant
        self.clientId = clientId
        self.redirectURI = redirectURI
        self.verifier = verifier
        verifierIsValid = PKCE.isValidVerifier(verifier)
        verifierChallenge = verifierIsValid ? PKCE.S256Challenge(for: verifier) : nil
        self.now = now
    }

    /// Whether the issued code `record` is redeemable with this request: a code of another
    /// tenant is unknown to it.
    func verdict(on record: CodeRecord) -> CodeVerdict {
        guard record.tenant == tenant else { return .otherTenant }
        return refusal(of: record).map(CodeVerdict.refused) ?? .redeemable
    }

    /// Why the issued code `record` cannot be redeemed with this request, or `nil` if it can.
    func refusal(of record: CodeRecord) -> CodeRefusal? {
        guard record.expiresAt > now else { return .expired }
        guard record.clientId == clientId else { return .otherClient }
        guard record.redirectURI == redirectURI else { return .otherRedirectURI }
        guard verifierIsValid, let verifierChallenge else { return .malformedVerifier }
        guard plantedSkipsVerifier
            || PKCE.matches(verifier: verifier, s256Challenge: verifierChallenge, challenge: record.codeChallenge, method: record.codeChallengeMethod)
        else { return .wrongVerifier }
        return nil
    }
}

/// What a request's checks found of an issued code's record.
enum CodeVerdict: Equatable {
    /// The code was issued under another tenant: to this request it is unknown.
    case otherTenant
    case refused(CodeRefusal)
    case redeemable
}

/// A request's verdict on an issued code's record, reached outside the shard's lock
/// (``GrantShard/issuedRecord(_:)``).
struct CheckedCode {
    let record: CodeRecord
    let verdict: CodeVerdict

    init(_ record: CodeRecord, by presented: PresentedCode) {
        self.record = record
        verdict = presented.verdict(on: record)
    }
}

/// Why an issued code is not redeemed. An expired code is dropped; the others do not burn the
/// code: it stays redeemable by the party it was bound to.
enum CodeRefusal: Equatable, CustomStringConvertible {
    case expired, otherClient, otherRedirectURI, malformedVerifier, wrongVerifier

    /// The `error_description` of the refusal.
    var description: String {
        switch self {
        case .expired: "authorization code has expired"
        case .otherClient: "authorization code was issued to another client"
        case .otherRedirectURI: "redirect_uri does not match the authorization request"
        case .malformedVerifier: "code_verifier is malformed (RFC 7636 §4.1)"
        case .wrongVerifier: "code_verifier does not match the code challenge"
        }
    }
}

/// What the code's grant shard decided about a presented code, under its lock; answered after it.
enum CodeRedemption {
    /// The request's tenant does not exist.
    case unknownTenant
    /// No such code was issued in the tenant (or it was pruned).
    case unknown
    /// The code was redeemed before: the family its first redemption opened is revoked
    /// (`revoked`, its entry, released after the lock; `nil` if it had ended).
    case reused(revoked: TokenFamily?)
    /// The code is issued but not redeemed, for `CodeRefusal`'s reason.
    case refused(CodeRefusal, CodeRecord)
    /// The code is redeemed and its family reserved; the family is yet to be opened and its
    /// tokens entered. What reserving the family pruned is released after the lock.
    case redeemed(CodeRecord, family: ReservedFamily)
}
