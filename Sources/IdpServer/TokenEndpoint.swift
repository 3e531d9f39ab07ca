import Foundation
import IdpPrimitives

extension IdpServer {
    /// `POST …/protocol/openid-connect/token` with `grant_type=authorization_code`: RFC 6749 §4.1.3
    /// with the RFC 7636 §4.6 verifier check. Answers RFC 6749 §5.1 JSON or a §5.2 error.
    func token(tenant tenantId: String, request: HTTPRequest, traceParent: String?) -> HTTPResponse {
        guard let bodyText = String(validating: request.body, as: UTF8.self) else {
            return Page.tokenError("invalid_request", "the form body is not UTF-8")
        }
        let params: [String: String]
        switch Self.uniqueParameters(bodyText) {
        case .success(let decoded): params = decoded
        case .failure(let problem): return Page.tokenError("invalid_request", problem.message)
        }
        guard let grantType = params["grant_type"] else {
            return Page.tokenError("invalid_request", "missing parameter 'grant_type'")
        }
        guard grantType == "authorization_code" else {
            return Page.tokenError("unsupported_grant_type", "grant_type '\(grantType)' is not supported")
        }
        for name in ["code", "redirect_uri", "client_id", "code_verifier"] where (params[name] ?? "").isEmpty {
            return Page.tokenError("invalid_request", "missing parameter '\(name)'")
        }
        let code = params["code"]!, clientId = params["client_id"]!
        let redirectURI = params["redirect_uri"]!, verifier = params["code_verifier"]!
        let now = self.now
        let lifetimes = configuration
        let issued = (access: SecureRandom.token(), refresh: SecureRandom.token(), offline: SecureRandom.token())

        enum Decision {
            case refuse(status: Int, error: String, String, userId: String?)
            case issue(CodeRecord)
        }
        let decision: Decision = state.withLock { state in
            guard state.tenants[tenantId] != nil else {
                return .refuse(status: 404, error: "invalid_request", "tenant '\(tenantId)' does not exist", userId: nil)
            }
            state.pruneIfDue(now: now)
            guard let record = state.codes[code], record.tenant == tenantId else {
                if let redeemed = state.redeemedCodes[code] {
                    for token in redeemed.tokens { state.tokens[token]?.revoked = true }
                    return .refuse(status: 400, error: "invalid_grant", "authorization code was already used; the tokens it issued are revoked", userId: nil)
                }
                return .refuse(status: 400, error: "invalid_grant", "authorization code is unknown", userId: nil)
            }
            guard record.expiresAt > now else {
                state.codes[code] = nil
                return .refuse(status: 400, error: "invalid_grant", "authorization code has expired", userId: record.userId)
            }
            // A mismatch does not burn the code: it stays redeemable by the party it was bound to.
            guard record.clientId == clientId else {
                return .refuse(status: 400, error: "invalid_grant", "authorization code was issued to another client", userId: record.userId)
            }
            guard record.redirectURI == redirectURI else {
                return .refuse(status: 400, error: "invalid_grant", "redirect_uri does not match the authorization request", userId: record.userId)
            }
            guard PKCE.isValidVerifier(verifier) else {
                return .refuse(status: 400, error: "invalid_grant", "code_verifier is malformed (RFC 7636 §4.1)", userId: record.userId)
            }
            guard PKCE.verify(verifier: verifier, challenge: record.codeChallenge, method: record.codeChallengeMethod) else {
                return .refuse(status: 400, error: "invalid_grant", "code_verifier does not match the code challenge", userId: record.userId)
            }
            state.codes[code] = nil
            state.redeemedCodes[code] = RedeemedCode(
                forgetAt: now.addingTimeInterval(lifetimes.refreshTokenLifetime.timeInterval),
                tokens: [issued.access, issued.refresh, issued.offline]
            )
            func token(_ kind: TokenRecord.Kind, _ lifetime: Duration) -> TokenRecord {
                TokenRecord(kind: kind, tenant: tenantId, clientId: clientId, userId: record.userId, expiresAt: now.addingTimeInterval(lifetime.timeInterval))
            }
            state.tokens[issued.access] = token(.access, lifetimes.accessTokenLifetime)
            state.tokens[issued.refresh] = token(.refresh, lifetimes.refreshTokenLifetime)
            state.tokens[issued.offline] = token(.offline, lifetimes.offlineTokenLifetime)
            return .issue(record)
        }
        switch decision {
        case .refuse(let status, let error, let description, let userId):
            record(.tokenRequestRefused, tenant: tenantId, clientId: clientId, userId: userId, traceParent: traceParent, "\(error): \(description)")
            return Page.tokenError(status: status, error, description)
        case .issue(let record):
            self.record(.codeRedeemed, tenant: tenantId, clientId: clientId, userId: record.userId, traceParent: traceParent, "tokens issued")
            return Page.json(status: 200, [
                "access_token": issued.access,
                "token_type": "Bearer",
                "expires_in": Int(lifetimes.accessTokenLifetime.timeInterval),
                "refresh_token": issued.refresh,
                "refresh_expires_in": Int(lifetimes.refreshTokenLifetime.timeInterval),
                "offline_token": issued.offline,
                "offline_expires_in": Int(lifetimes.offlineTokenLifetime.timeInterval),
                "scope": "openid offline_access",
                "user_id": record.userId,
                "ast_client_id": record.astClientId,
            ])
        }
    }

    /// Whether `token` is a live (issued, unexpired, unrevoked) token of the tenant; for tests.
    public func isTokenActive(_ token: String, tenant tenantId: String) -> Bool {
        let now = self.now
        return state.withLock { state in
            guard let record = state.tokens[token] else { return false }
            return record.tenant == tenantId && !record.revoked && record.expiresAt > now
        }
    }
}
