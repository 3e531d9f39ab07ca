import Foundation
import IdpPrimitives
import IdpWireFormats

extension IdpServer {
    /// `POST …/protocol/openid-connect/token`. Two grants:
    /// - `authorization_code`: RFC 6749 §4.1.3 with the RFC 7636 §4.6 verifier check; issues an
    ///   access, a refresh and an offline token, the first members of a new token family;
    /// - `refresh_token`: RFC 6749 §6 with a refresh or an offline token; see ``refreshGrant``;
    /// - `urn:ietf:params:oauth:grant-type:token-exchange`: RFC 8693, an access token for a token
    ///   scoped to another audience; see ``exchangeGrant``.
    ///
    /// Answers RFC 6749 §5.1 JSON or a §5.2 error.
    func token(tenant tenantId: String, request: HTTPRequest, traceParent: String?) -> HTTPResponse {
        let params: FormParameters
        switch Self.uniqueParameters(body: request.body) {
        case nil: return Page.tokenError("invalid_request", "the form body is not UTF-8")
        case .success(let decoded)?: params = decoded
        case .failure(let problem)?: return Page.tokenError("invalid_request", problem.message)
        }
        switch params["grant_type"] {
        case nil:
            return Page.tokenError("invalid_request", "missing parameter 'grant_type'")
        case "authorization_code":
            return codeGrant(tenant: tenantId, params: params, traceParent: traceParent)
        case "refresh_token":
            return refreshGrant(tenant: tenantId, params: params, traceParent: traceParent)
        case Self.tokenExchangeGrantType:
            return exchangeGrant(tenant: tenantId, params: params, traceParent: traceParent)
        case let grantType?:
            return Page.tokenError("unsupported_grant_type", "grant_type '\(grantType)' is not supported")
        }
    }

    /// `grant_type=authorization_code` (RFC 6749 §4.1.3) with `code`, `redirect_uri`, `client_id`
    /// and `code_verifier` (RFC 7636 §4.5): the code is redeemed once, and its tokens are the first
    /// members of a new token family.
    private func codeGrant(tenant tenantId: String, params: FormParameters, traceParent: String?) -> HTTPResponse {
        let request: CodeGrantRequest
        switch codeGrantRequest(tenant: tenantId, params: params) {
        case .success(let parsed): request = parsed
        case .failure(let refusal): return refusal.response
        }
        let clientId = request.clientId
        // A controlled stress run may decide another request first.
        configuration.controller?.pause(at: Seam("idp.code", trace: TraceParent.seamTrace(traceParent)))

        let record: CodeRecord, family: FamilyID
        switch redeemCode(request, traceParent: traceParent) {
        case .redeemed(let redeemed, let reserved):
            record = redeemed
            family = reserved.family
        case .unknownTenant:
            return refuseToken(status: 404, "invalid_request", "tenant '\(tenantId)' does not exist", tenant: tenantId, clientId: clientId, userId: nil,
                               traceParent: traceParent)
        case .unknown:
            return refuseToken(status: 400, "invalid_grant", "authorization code is unknown", tenant: tenantId, clientId: clientId, userId: nil,
                               traceParent: traceParent)
        case .reused:
            return refuseToken(status: 400, "invalid_grant", "authorization code was already used; the tokens it issued are revoked", tenant: tenantId,
                               clientId: clientId, userId: nil, traceParent: traceParent)
        case .refused(let refusal, let refused):
            return refuseToken(status: 400, "invalid_grant", refusal.description, tenant: tenantId, clientId: clientId, userId: refused.userId,
                               traceParent: traceParent)
        }
        let issued = openFamily(family, of: record, for: request)
        self.record(.codeRedeemed, tenant: tenantId, clientId: clientId, userId: record.userId, traceParent: traceParent, "tokens issued")
        return codeGrantAnswer(record, issued: issued)
    }

    /// The code grant in `params`, with what its decision and its tokens need made before any lock,
    /// or the answer refusing a request that lacks a parameter.
    private func codeGrantRequest(tenant tenantId: String, params: FormParameters) -> Result<CodeGrantRequest, TokenRequestRefusal> {
        for name in ["code", "redirect_uri", "client_id", "code_verifier"] where (params[name] ?? "").isEmpty {
            return .failure(TokenRequestRefusal(response: Page.tokenError("invalid_request", "missing parameter '\(name)'")))
        }
        let code = params["code"]!, clientId = params["client_id"]!
        let redirectURI = params["redirect_uri"]!, verifier = params["code_verifier"]!
        let now = self.now
        // The code's shard holds its redemption, and the new family and its tokens are made to
        // live there too, so single use and revocation on reuse are one shard's decisions.
        let route = ShardRouting.route(of: code)
        let drafts = (access: GrantHandle.draft(route: route), refresh: GrantHandle.draft(route: route),
                      offline: GrantHandle.draft(route: route))
        let codeHandle = GrantHandle(text: code)
        let tenantExists = state.tenant(tenantId, stripe: route) != nil
        // The verifier's S256 challenge (a SHA-256) is made here, before the lock: the decision
        // compares two strings.
        let presented = plantedRequest(PresentedCode(tenant: tenantId, clientId: clientId, redirectURI: redirectURI, verifier: verifier, now: now))
        let forgetAt = now.addingTimeInterval(lifetimes.refreshToken)
        let offlineSessionEnd = now.addingTimeInterval(lifetimes.offlineSession)
        return .success(CodeGrantRequest(tenantId: tenantId, clientId: clientId, now: now, route: route, drafts: drafts, codeHandle: codeHandle,
                                         tenantExists: tenantExists, presented: presented, forgetAt: forgetAt, offlineSessionEnd: offlineSessionEnd))
    }

    /// Decides `request` in its code's shard: the decision claims the code, its entry marked
    /// redeemed where it lies, and reserves its family's place.
    ///
    /// The family is opened and its tokens entered after it, each in a section of its own, before
    /// the answer hands the tokens out; a replay in between revokes the reserved family, which is
    /// then never opened (``GrantShard/openFamily(_:_:)``). The code's record is read first, in a
    /// section of its own, and checked against the request after that lock: the checks compare
    /// strings whose bytes lie outside the log.
    private func redeemCode(_ request: CodeGrantRequest, traceParent: String?) -> CodeRedemption {
        let shard = state.grantShard(route: request.route)
        let presented = request.presented
        let checked = request.tenantExists
            ? request.codeHandle.flatMap { handle in shard.withLock { $0.issuedRecord(handle) } }.map { CheckedCode($0, by: presented) }
            : nil
        // Between the two sections another request may decide on the code: a stress run lines up
        // two copies of one request here (not one of the IDP's decisions, so no `idp.` seam).
        configuration.controller?.pause(at: Seam("code.checked", trace: TraceParent.seamTrace(traceParent)))
        return shard.withLockThenUpkeep { grants in
            guard request.tenantExists else { return .unknownTenant }
            guard let codeHandle = request.codeHandle else { return .unknown }
            return grants.redeem(codeHandle, plantedUnderLock(presented), checked: checked, familyEndsAt: request.offlineSessionEnd,
                                 forgetAt: request.forgetAt, now: request.now)
        }
    }

    /// Opens `family`, reserved by redeeming `record`, and enters its access, refresh and offline
    /// tokens, each in a lock section of its own; returns the tokens' handles.
    private func openFamily(_ family: FamilyID, of record: CodeRecord, for request: CodeGrantRequest)
        -> (access: GrantHandle, refresh: GrantHandle, offline: GrantHandle) {
        let tenantId = request.tenantId, clientId = request.clientId, now = request.now, drafts = request.drafts
        let accessLifetime = plantedAccessLifetime ?? lifetimes.accessToken
        let opened = TokenFamily(expiresAt: request.offlineSessionEnd, astClientId: record.astClientId)
        let tokens = (
            access: TokenRecord(kind: .access, tenant: tenantId, clientId: clientId, userId: record.userId, expiresAt: now.addingTimeInterval(accessLifetime),
                                family: family),
            refresh: TokenRecord(kind: .refresh, tenant: tenantId, clientId: clientId, userId: record.userId, expiresAt: request.forgetAt, family: family),
            offline: TokenRecord(kind: .offline, tenant: tenantId, clientId: clientId, userId: record.userId, expiresAt: request.offlineSessionEnd,
                                 family: family)
        )
        let shard = state.grantShard(route: request.route)
        // What each section pruned is released after its lock, when it goes out of scope here.
        shard.withLock { $0.openFamily(family, opened) }
        return (access: shard.withLockThenUpkeep { $0.add(tokens.access, as: drafts.access, now: now) }.0,
                refresh: shard.withLockThenUpkeep { $0.add(tokens.refresh, as: drafts.refresh, now: now) }.0,
                offline: shard.withLockThenUpkeep { $0.add(tokens.offline, as: drafts.offline, now: now) }.0)
    }

    /// The RFC 6749 §5.1 answer to a redeemed code: the `issued` tokens of `record`'s user, their
    /// lifetimes and the device's AST client id.
    private func codeGrantAnswer(_ record: CodeRecord, issued: (access: GrantHandle, refresh: GrantHandle, offline: GrantHandle)) -> HTTPResponse {
        // In code-point order of the keys, as every JSON answer of this server is written.
        return Page.json(status: 200, members: [
            ("access_token", .grant(issued.access)),
            ("ast_client_id", .string(record.astClientId)),
            ("expires_in", .int(Int(lifetimes.accessToken))),
            ("offline_expires_in", .int(Int(lifetimes.offlineSession))),
            ("offline_token", .grant(issued.offline)),
            ("refresh_expires_in", .int(Int(lifetimes.refreshToken))),
            ("refresh_token", .grant(issued.refresh)),
            ("scope", .string("openid offline_access")),
            ("token_type", .string("Bearer")),
            ("user_id", .string(record.userId)),
        ])
    }

    /// Audits a refused token request and answers with its RFC 6749 §5.2 error.
    private func refuseToken(status: Int, _ error: String, _ description: String, tenant tenantId: String, clientId: String, userId: String?,
                             traceParent: String?) -> HTTPResponse {
        record(.tokenRequestRefused, tenant: tenantId, clientId: clientId, userId: userId, traceParent: traceParent, "\(error): \(description)")
        return Page.tokenError(status: status, error, description)
    }

    /// `grant_type=refresh_token` (RFC 6749 §6) with `refresh_token` and `client_id`.
    ///
    /// The presented token may be a refresh token or an offline token. It is rotated: the answer
    /// carries a new access token and, in `refresh_token`, a new token of the presented kind
    /// (`refresh_token_type` says which), and the presented one is spent. A spent token presented
    /// again revokes its whole family — every token of that login — and fails (OAuth 2.0 Security
    /// BCP §4.14.2, RFC 6819 §5.2.2.3). Offline tokens end with the family's offline session
    /// ("Offline Session Max"), however often they are rotated. A locked user gets the lock
    /// (`error=account_temporarily_locked` with `locked_until`, or `account_permanently_locked`).
    private func refreshGrant(tenant tenantId: String, params: FormParameters, traceParent: String?) -> HTTPResponse {
        let request: RefreshGrantRequest
        switch refreshGrantRequest(tenant: tenantId, params: params) {
        case .success(let parsed): request = parsed
        case .failure(let refusal): return refusal.response
        }
        // A controlled stress run may decide another request first.
        configuration.controller?.pause(at: Seam("idp.refresh", trace: TraceParent.seamTrace(traceParent)))
        let decision = decideRefresh(request)
        return refreshAnswer(decision, to: request, traceParent: traceParent)
    }

    /// The refresh grant in `params`, with what its decision needs made before its locks (its
    /// owner read in a section of the grant shard's own), or the answer refusing a request that
    /// lacks a parameter.
    private func refreshGrantRequest(tenant tenantId: String, params: FormParameters) -> Result<RefreshGrantRequest, TokenRequestRefusal> {
        for name in ["refresh_token", "client_id"] where (params[name] ?? "").isEmpty {
            return .failure(TokenRequestRefusal(response: Page.tokenError("invalid_request", "missing parameter '\(name)'")))
        }
        let presented = params["refresh_token"]!, clientId = params["client_id"]!
        let now = self.now
        // The presented token's shard is its family's: the rotated tokens are made to live there.
        let route = ShardRouting.route(of: presented)
        let drafts = (access: GrantHandle.draft(route: route), rotated: GrantHandle.draft(route: route))
        let presentedHandle = GrantHandle(text: presented)
        let tenantExists = state.tenant(tenantId, stripe: route) != nil
        // Whose token it is, to take that user's shard first (the lock order): records never
        // change owner, so the decision, under both locks, sees the same user.
        let owner = presentedHandle.flatMap { handle in state.grantShard(route: route).withLock { $0.token(handle)?.userId } }
        return .success(RefreshGrantRequest(tenantId: tenantId, clientId: clientId, now: now, route: route, drafts: drafts,
                                            presentedHandle: presentedHandle, tenantExists: tenantExists,
                                            userKey: UserKey(tenant: tenantId, user: owner ?? "")))
    }

    /// Decides `request` with its user's shard and then its grant shard locked (the lock order);
    /// the grant shard's upkeep is done after both locks.
    private func decideRefresh(_ request: RefreshGrantRequest) -> RefreshDecision {
        let (decision, upkeep): (RefreshDecision, GrantShard.Upkeep?) = state.userShard(request.userKey).withLock { users in
            state.grantShard(route: request.route).withLockTakingUpkeep { grants in
                refreshDecision(request, grants: &grants, users: users)
            }
        }
        if let upkeep { state.grantShard(route: request.route).upkeep(upkeep) }
        return decision
    }

    /// The decision on `request`, made with its user's shard (`users`) and its grant shard
    /// (`grants`) locked: a spent token revokes its family; a live one is rotated, and the new
    /// access token and the presented kind's successor are entered in `grants`.
    private func refreshDecision(_ request: RefreshGrantRequest, grants: inout GrantShard, users: UserShard) -> RefreshDecision {
        let tenantId = request.tenantId, clientId = request.clientId, now = request.now, userKey = request.userKey
        guard request.tenantExists else {
            return .refuse(status: 404, error: "invalid_request", "tenant '\(tenantId)' does not exist", userId: nil, reused: false)
        }
        guard let presentedHandle = request.presentedHandle, let record = grants.token(presentedHandle), record.tenant == tenantId,
              record.kind == .refresh || record.kind == .offline else {
            return .refuse(status: 400, error: "invalid_grant", "refresh token is unknown", userId: nil, reused: false)
        }
        if record.rotated {
            if !plantedReuseRevokesNothing { grants.revokeFamily(record.family) }
            return .refuse(status: 400, error: "invalid_grant", "refresh token was already used; its token family is revoked",
                           userId: record.userId, reused: true)
        }
        // A token is revoked with its family, and a family that is gone was revoked or ended.
        guard let family = grants.family(record.family) else {
            return .refuse(status: 400, error: "invalid_grant", "refresh token has been revoked", userId: record.userId, reused: false)
        }
        guard record.expiresAt > now else {
            let what = record.kind == .offline ? "the offline session has ended (Offline Session Max)" : "refresh token has expired"
            return .refuse(status: 400, error: "invalid_grant", what, userId: record.userId, reused: false)
        }
        guard record.clientId == clientId else {
            return .refuse(status: 400, error: "invalid_grant", "refresh token was issued to another client", userId: record.userId, reused: false)
        }
        guard record.userId == userKey.user, let user = users[userKey], user.status == .active else {
            return .refuse(status: 400, error: "invalid_grant", "the token's user no longer exists", userId: record.userId, reused: false)
        }
        if let lockout = user.lockout(at: now) { return .locked(lockout, userId: record.userId) }
        grants.markRotated(presentedHandle)
        let rotatedExpiresAt = record.kind == .offline
            ? family.expiresAt
            : now.addingTimeInterval(lifetimes.refreshToken)
        let access = grants.add(TokenRecord(kind: .access, tenant: tenantId, clientId: clientId, userId: record.userId,
                                            expiresAt: now.addingTimeInterval(lifetimes.accessToken), family: record.family),
                                as: request.drafts.access, now: now)
        let rotated = grants.add(TokenRecord(kind: record.kind, tenant: tenantId, clientId: clientId, userId: record.userId,
                                             expiresAt: rotatedExpiresAt, family: record.family), as: request.drafts.rotated, now: now)
        return .issue(record, rotatedExpiresAt: rotatedExpiresAt, astClientId: family.astClientId, access: access.0, rotated: rotated.0,
                      pruned: (access.1, rotated.1))
    }

    /// Audits `decision` on `request` and answers with it: the RFC 6749 §5.2 error, the lock, or
    /// the §5.1 JSON with the rotated tokens.
    private func refreshAnswer(_ decision: RefreshDecision, to request: RefreshGrantRequest, traceParent: String?) -> HTTPResponse {
        let tenantId = request.tenantId, clientId = request.clientId, now = request.now
        switch decision {
        case .refuse(let status, let error, let description, let userId, let reused):
            record(reused ? .refreshTokenReused : .tokenRequestRefused, tenant: tenantId, clientId: clientId, userId: userId,
                   traceParent: traceParent, "\(error): \(description)")
            return Page.tokenError(status: status, error, description)
        case .locked(let lockout, let userId):
            record(.tokenRequestRefused, tenant: tenantId, clientId: clientId, userId: userId, traceParent: traceParent, lockout.description)
            var body: [String: any Sendable] = ["error_description": "the account is \(lockout.description)"]
            for (name, value) in lockout.redirectParameters { body[name] = value }
            return Page.json(status: 400, body)
        case .issue(let record, let rotatedExpiresAt, let astClientId, let access, let rotated, _):
            self.record(.tokensRefreshed, tenant: tenantId, clientId: clientId, userId: record.userId, traceParent: traceParent,
                        "\(record.kind.rawValue) token rotated", at: now)
            return Page.json(status: 200, [
                "access_token": access.text,
                "token_type": "Bearer",
                "expires_in": Int(lifetimes.accessToken),
                "refresh_token": rotated.text,
                "refresh_token_type": record.kind == .offline ? "Offline" : "Refresh",
                "refresh_expires_in": Int(rotatedExpiresAt.timeIntervalSince(now)),
                "scope": record.kind == .offline ? "openid offline_access" : "openid",
                "user_id": record.userId,
                "ast_client_id": astClientId,
            ])
        }
    }

    /// The grant type of RFC 8693 token exchange (`IdpWire/tokenExchangeGrantType`).
    package static var tokenExchangeGrantType: String { IdpWire.tokenExchangeGrantType }
    /// The OAuth error code when the audience would get the login client's own token
    /// (`IdpWire/astClientRoleErrorCode`); the MC reports it as error code 800000287.
    package static var astClientRoleErrorCode: String { IdpWire.astClientRoleErrorCode }

    /// `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693 §2.1) with
    /// `subject_token` (a live access token), `subject_token_type` (`…:access_token`), `audience`
    /// and `client_id`. Issues a token for `audience` only, as short-lived as an access token, in
    /// the same token family (revoked with it); it is never a refresh token. An audience equal to
    /// the login client is refused: its token would carry the 'ast-client' role.
    private func exchangeGrant(tenant tenantId: String, params: FormParameters, traceParent: String?) -> HTTPResponse {
        for name in ["subject_token", "subject_token_type", "audience", "client_id"] where (params[name] ?? "").isEmpty {
            return Page.tokenError("invalid_request", "missing parameter '\(name)'")
        }
        guard params["subject_token_type"] == "urn:ietf:params:oauth:token-type:access_token" else {
            return Page.tokenError("invalid_request", "subject_token_type must be urn:ietf:params:oauth:token-type:access_token")
        }
        let subject = params["subject_token"]!, audience = params["audience"]!, clientId = params["client_id"]!
        guard audience.utf8.count <= 256, !Self.hasSpaceOrControl(audience) else {
            return Page.tokenError("invalid_target", "audience is longer than 256 bytes or contains spaces or control characters")
        }
        let now = self.now
        let lifetime = lifetimes.accessToken
        // In the subject token's shard, with the rest of its family.
        let route = ShardRouting.route(of: subject)
        let draft = GrantHandle.draft(route: route), subjectHandle = GrantHandle(text: subject)
        let tenantExists = state.tenant(tenantId, stripe: route) != nil
        enum Decision {
            case refuse(error: String, String, userId: String?)
            /// The token's handle; `pruned`: what entering it dropped, released after the lock.
            case issue(userId: String, token: GrantHandle, pruned: Pruned<TokenRecord>)
        }
        let decision: Decision = state.grantShard(route: route).withLockThenUpkeep { state in
            guard tenantExists else { return .refuse(error: "invalid_request", "tenant '\(tenantId)' does not exist", userId: nil) }
            guard let subjectHandle, let record = state.token(subjectHandle), record.tenant == tenantId, record.kind == .access else {
                return .refuse(error: "invalid_grant", "subject_token is not an access token of this tenant", userId: nil)
            }
            guard !state.isRevoked(record), record.expiresAt > now else {
                return .refuse(error: "invalid_grant", "subject_token has expired or been revoked", userId: record.userId)
            }
            guard record.clientId == clientId else {
                return .refuse(error: "invalid_grant", "subject_token was issued to another client", userId: record.userId)
            }
            guard audience != record.clientId else {
                return .refuse(error: Self.astClientRoleErrorCode,
                               "the token for audience '\(audience)' would carry the 'ast-client' role: choose an audience other than the login client",
                               userId: record.userId)
            }
            var exchanged = TokenRecord(kind: .exchanged, tenant: tenantId, clientId: clientId, userId: record.userId,
                                        expiresAt: now.addingTimeInterval(lifetime), family: record.family)
            exchanged.audience = audience
            let (token, pruned) = state.add(exchanged, as: draft, now: now)
            return .issue(userId: record.userId, token: token, pruned: pruned)
        }
        switch decision {
        case .refuse(let error, let description, let userId):
            record(.tokenRequestRefused, tenant: tenantId, clientId: clientId, userId: userId, traceParent: traceParent, "\(error): \(description)")
            return Page.tokenError(error, description)
        case .issue(let userId, let token, _):
            record(.tokenExchanged, tenant: tenantId, clientId: clientId, userId: userId, traceParent: traceParent, "token issued for audience '\(audience)'")
            return Page.json(status: 200, [
                "access_token": token.text,
                "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                "token_type": "Bearer",
                "expires_in": Int(lifetime),
                "audience": audience,
            ])
        }
    }

    /// What an external service learns when it checks a token with the IDP (RFC 7662
    /// introspection): whether it is live, whose it is and for which audience.
    public struct TokenIntrospection: Sendable, Equatable {
        /// Whether the token is live: not expired and not revoked.
        public let active: Bool
        /// The user the token was issued to.
        public let userId: String
        /// The audience of an exchanged token; `nil` for the MC's own tokens.
        public let audience: String?
        /// Whether this is one of the MC's own tokens (access, refresh, offline): what an app
        /// must never hold.
        public let isMcToken: Bool
    }

    /// Introspects `token` (RFC 7662), as an external service would; `nil` for an unknown token.
    public func introspect(_ token: String, tenant tenantId: String) -> TokenIntrospection? {
        let now = self.now
        guard let handle = GrantHandle(text: token) else { return nil }
        return state.grantShard(token).withLock { state in
            guard let record = state.token(handle), record.tenant == tenantId else { return nil }
            return TokenIntrospection(active: !state.isRevoked(record) && record.expiresAt > now, userId: record.userId,
                                      audience: record.audience, isMcToken: record.kind != .exchanged)
        }
    }

    /// Whether `token` is a live (issued, unexpired, unrevoked) token of the tenant; for tests.
    public func isTokenActive(_ token: String, tenant tenantId: String) -> Bool {
        let now = self.now
        guard let handle = GrantHandle(text: token) else { return false }
        return state.grantShard(token).withLock { state in
            guard let record = state.token(handle) else { return false }
            return record.tenant == tenantId && !state.isRevoked(record) && record.expiresAt > now
        }
    }

    /// Whether `text` has a space or a control character (below U+0021, or U+007F).
    static func hasSpaceOrControl(_ text: String) -> Bool {
        for scalar in text.unicodeScalars where scalar.value < 0x21 || scalar.value == 0x7F { return true }
        return false
    }
}

/// A token request refused before any lock, and the RFC 6749 §5.2 error it is answered with.
private struct TokenRequestRefusal: Error {
    let response: HTTPResponse
}

/// A code grant's request, and what its decision and its tokens need, made before any lock.
private struct CodeGrantRequest {
    let tenantId: String
    let clientId: String
    let now: Date
    /// The code's shard: its redemption's, and its family's and their tokens'.
    let route: Int
    /// The handles the family's three tokens are entered as.
    let drafts: (access: GrantHandle, refresh: GrantHandle, offline: GrantHandle)
    /// The presented code's handle; `nil` for text that names no grant.
    let codeHandle: GrantHandle?
    let tenantExists: Bool
    /// The request as the code's decision checks it, its verifier's challenge made.
    let presented: PresentedCode
    /// When the refresh token expires, and the redeemed code's entry is forgotten.
    let forgetAt: Date
    /// When the family's offline session ends ("Offline Session Max").
    let offlineSessionEnd: Date
}

/// A refresh grant's request, and what its decision needs, made before its locks.
private struct RefreshGrantRequest {
    let tenantId: String
    let clientId: String
    let now: Date
    /// The presented token's shard, its family's: the rotated tokens are entered there.
    let route: Int
    /// The handles the new access token and the rotated token are entered as.
    let drafts: (access: GrantHandle, rotated: GrantHandle)
    /// The presented token's handle; `nil` for text that names no grant.
    let presentedHandle: GrantHandle?
    let tenantExists: Bool
    /// The presented token's user (no user if no such token was found): the user's shard is
    /// locked before the grant shard.
    let userKey: UserKey
}

/// What a refresh grant's decision under its locks found.
private enum RefreshDecision {
    /// The request is refused; `reused`: a spent token was presented again, and its family revoked.
    case refuse(status: Int, error: String, String, userId: String?, reused: Bool)
    /// The token's user is locked.
    case locked(LockoutInformation, userId: String)
    /// The two tokens' handles; `pruned`: what entering them dropped, released after the locks.
    case issue(TokenRecord, rotatedExpiresAt: Date, astClientId: String, access: GrantHandle, rotated: GrantHandle,
               pruned: (Pruned<TokenRecord>, Pruned<TokenRecord>))
}
