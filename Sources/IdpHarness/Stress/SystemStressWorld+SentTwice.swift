import Foundation
import IdpWireFormats
import IdpServer

extension SystemStress.World {
    /// Judges the two answers of a token request for `grant` (`nil`: a step's form post), sent
    /// twice at once on `trace`, against what the run knows of it: the same code or refresh token
    /// was presented twice, so at most one copy gets tokens; and once both are answered, the tokens
    /// that one got are revoked (the other copy found the code redeemed or the token rotated:
    /// reuse, RFC 6749 §4.1.2 and OAuth 2.0 Security BCP §4.14.2), unless the clock moved meanwhile
    /// or the other copy's refusal was not `invalid_grant` (an expiry or a lock may then have come
    /// first). A step's form post sent twice is judged by how its flow ends and by the IDP's audit
    /// of the trace.
    func judgeSentTwice(_ grant: TokenGrant?, trace: String)
        -> @Sendable (Result<HTTPResponse, TransportError>, Result<HTTPResponse, TransportError>) -> Void {
        guard let kind = grant, let me = participants.first(where: { $0.trace.traceId == trace }) else { return { _, _ in } }
        let clockBefore = clock.now()
        return { [weak self] original, copy in
            self?.judge(kind, answers: [original, copy], me, clockBefore: clockBefore)
        }
    }

    private func judge(_ kind: TokenGrant, answers: [Result<HTTPResponse, TransportError>], _ me: Participant, clockBefore: Date) {
        let bodies = answers.map { answer -> (status: Int, json: [String: Any]) in
            guard case .success(let response) = answer else { return (0, [:]) }
            let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
            return (response.status, json)
        }
        let granted = bodies.filter { $0.status == 200 }
        log(me, "a \(kind.name) sent twice at once: HTTP \(bodies.map { "\($0.status)" }.joined(separator: " and "))")
        triggered(kind.invariant)
        checked(kind.invariant, granted.count <= 1,
                "participant \(me.index)'s \(kind.name), sent twice at once, got tokens for both copies (HTTP 200 twice)")
        guard granted.count == 1 else { return }
        let refused = bodies.first { $0.status != 200 }
        guard clock.now() == clockBefore, refused?.json["error"] as? String == "invalid_grant",
              let token = granted[0].json[kind.revokedToken] as? String else {
            excused(kind.invariant)
            return
        }
        let live = server.isTokenActive(token, tenant: Self.tenant)
        checked(kind.invariant, !live,
                "participant \(me.index)'s \(kind.name), sent twice at once, got tokens for one copy and invalid_grant for the other, and those tokens stay live: the reuse was not revoked")
        if !live { saw(.reuseRevoked, me, "a \(kind.name) sent twice at once: one copy got tokens, the other's reuse revoked them") }
    }
}

extension TokenGrant {
    /// The invariant a grant sent twice is judged by: a code yields tokens once ("codes
    /// single-use"), a presented refresh token is rotated once ("one refresh per expiry").
    var invariant: SystemStress.Invariant { self == .code ? .singleUseCodes : .oneRefresh }
    /// The token of a granted answer that the other copy's reuse must have revoked.
    var revokedToken: String { self == .code ? "offline_token" : "refresh_token" }
    var name: String { self == .code ? "code grant" : "refresh grant" }
}
