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
        guard let bodyText = String(validating: request.body, as: UTF8.self) else {
            return Page.tokenError("invalid_request", "the form body is not UTF-8")
        }
        let params: FormParameters
        switch Self.uniqueParameters(bodyText) {
        case .success(let decoded): params = decoded
        case .failure(let problem): return Page.tokenError("invalid_request", problem.message)
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

    private func codeGrant(tenant tenantId: String, params: FormParameters, traceParent: String?) -> HTTPResponse {
        for name in ["code", "redirect_uri", "client_id", "code_verifier"] where (params[name] ?? "").isEmpty {
            return Page.tokenError("invalid_request", "missing parameter '\(name)'")
        }
        let code = params["code"]!, clientId = params["client_id"]!
        let redirectURI = params["redirect_uri"]!, verifier = params["code_verifier"]!
        let now = self.now
        let lifetimes = configuration
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
        let forgetAt = now.addingTimeInterval(lifetimes.refreshTokenLifetime.timeInterval)
        let offlineSessionEnd = now.addingTimeInterval(lifetimes.offlineSessionMax.timeInterval)
        // A controlled stress run may decide another request first.
        configuration.controller?.pause(at: Seam("idp.code", trace: TraceParent.seamTrace(traceParent)))

        // The decision claims the code: its entry is marked redeemed where it lies, and its
        // family's place is reserved. The family is opened and its tokens entered after it, each
        // in a section of its own, before the answer hands the tokens out; a replay in between
        // revokes the reserved family, which is then never opened (``GrantShard/openFamily(_:_:)``).
        // The code's record is read first, in a section of its own, and checked against the
        // request after that lock: the checks compare strings whose bytes lie outside the log.
        let shard = state.grantShard(route: route)
        let checked = tenantExists ? codeHandle.flatMap { handle in shard.withLock { $0.issuedRecord(handle) } }.map { CheckedCode($0, by: presented) } : nil
        let decision: CodeRedemption = shard.withLockThenUpkeep { grants in
            guard tenantExists else { return .unknownTenant }
            guard let codeHandle else { return .unknown }
            return grants.redeem(codeHandle, plantedUnderLock(presented), checked: checked, familyEndsAt: offlineSessionEnd, forgetAt: forgetAt, now: now)
        }
        let record: CodeRecord, family: FamilyID
        switch decision {
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
        let accessLifetime = plantedAccessLifetime ?? lifetimes.accessTokenLifetime.timeInterval
        let opened = TokenFamily(expiresAt: offlineSessionEnd, astClientId: record.astClientId)
        let tokens = (
            access: TokenRecord(kind: .access, tenant: tenantId, clientId: clientId, userId: record.userId, expiresAt: now.addingTimeInterval(accessLifetime),
                                family: family),
            refresh: TokenRecord(kind: .refresh, tenant: tenantId, clientId: clientId, userId: record.userId, expiresAt: forgetAt, family: family),
            offline: TokenRecord(kind: .offline, tenant: tenantId, clientId: clientId, userId: record.userId, expiresAt: offlineSessionEnd,
                                 family: family)
        )
        // What each section pruned is released after its lock, when it goes out of scope here.
        shard.withLock { $0.openFamily(family, opened) }
        let issued = (access: shard.withLockThenUpkeep { $0.add(tokens.access, as: drafts.access, now: now) }.0.text,
                      refresh: shard.withLockThenUpkeep { $0.add(tokens.refresh, as: drafts.refresh, now: now) }.0.text,
                      offline: shard.withLockThenUpkeep { $0.add(tokens.offline, as: drafts.offline, now: now) }.0.text)
        self.record(.codeRedeemed, tenant: tenantId, clientId: clientId, userId: record.userId, traceParent: traceParent, "tokens issued")
        // In code-point order of the keys, as every JSON answer of this server is written.
        return Page.json(status: 200, members: [
            ("access_token", .string(issued.access)),
            ("ast_client_id", .string(record.astClientId)),
            ("expires_in", .int(Int(lifetimes.accessTokenLifetime.timeInterval))),
            ("offline_expires_in", .int(Int(lifetimes.offlineSessionMax.timeInterval))),
            ("offline_token", .string(issued.offline)),
            ("refresh_expires_in", .int(Int(lifetimes.refreshTokenLifetime.timeInterval))),
            ("refresh_token", .string(issued.refresh)),
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
        for name in ["refresh_token", "client_id"] where (params[name] ?? "").isEmpty {
            return Page.tokenError("invalid_request", "missing parameter '\(name)'")
        }
        let presented = params["refresh_token"]!, clientId = params["client_id"]!
        let now = self.now
        let lifetimes = configuration
        // The presented token's shard is its family's: the rotated tokens are made to live there.
        let route = ShardRouting.route(of: presented)
        let drafts = (access: GrantHandle.draft(route: route), rotated: GrantHandle.draft(route: route))
        let presentedHandle = GrantHandle(text: presented)
        let tenantExists = state.tenant(tenantId, stripe: route) != nil
        // Whose token it is, to take that user's shard first (the lock order): records never
        // change owner, so the decision below, under both locks, sees the same user.
        let owner = presentedHandle.flatMap { handle in state.grantShard(route: route).withLock { $0.token(handle)?.userId } }
        let userKey = UserKey(tenant: tenantId, user: owner ?? "")
        // A controlled stress run may decide another request first.
        configuration.controller?.pause(at: Seam("idp.refresh", trace: TraceParent.seamTrace(traceParent)))

        enum Decision {
            case refuse(status: Int, error: String, String, userId: String?, reused: Bool)
            case locked(LockoutInformation, userId: String)
            /// The two tokens' handles; `pruned`: what entering them dropped, released after the locks.
            case issue(TokenRecord, rotatedExpiresAt: Date, astClientId: String, access: GrantHandle, rotated: GrantHandle,
                       pruned: (Pruned<TokenRecord>, Pruned<TokenRecord>))
        }
        // The grant shard's upkeep is done after both locks.
        let (decision, upkeep): (Decision, GrantShard.Upkeep?) = state.userShard(userKey).withLock { users in
            state.grantShard(route: route).withLockTakingUpkeep { state in
                guard tenantExists else {
                    return .refuse(status: 404, error: "invalid_request", "tenant '\(tenantId)' does not exist", userId: nil, reused: false)
                }
                guard let presentedHandle, let record = state.token(presentedHandle), record.tenant == tenantId,
                      record.kind == .refresh || record.kind == .offline else {
                    return .refuse(status: 400, error: "invalid_grant", "refresh token is unknown", userId: nil, reused: false)
                }
                if record.rotated {
                    state.revokeFamily(record.family)
                    return .refuse(status: 400, error: "invalid_grant", "refresh token was already used; its token family is revoked",
                                   userId: record.userId, reused: true)
                }
                // A token is revoked with its family, and a family that is gone was revoked or ended.
                guard let family = state.family(record.family) else {
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
                state.markRotated(presentedHandle)
                let rotatedExpiresAt = record.kind == .offline
                    ? family.expiresAt
                    : now.addingTimeInterval(lifetimes.refreshTokenLifetime.timeInterval)
                let access = state.add(TokenRecord(kind: .access, tenant: tenantId, clientId: clientId, userId: record.userId,
                                                   expiresAt: now.addingTimeInterval(lifetimes.accessTokenLifetime.timeInterval), family: record.family),
                                       as: drafts.access, now: now)
                let rotated = state.add(TokenRecord(kind: record.kind, tenant: tenantId, clientId: clientId, userId: record.userId,
                                                    expiresAt: rotatedExpiresAt, family: record.family), as: drafts.rotated, now: now)
                return .issue(record, rotatedExpiresAt: rotatedExpiresAt, astClientId: family.astClientId, access: access.0, rotated: rotated.0,
                              pruned: (access.1, rotated.1))
            }
        }
        if let upkeep { state.grantShard(route: route).upkeep(upkeep) }
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
                "expires_in": Int(lifetimes.accessTokenLifetime.timeInterval),
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
        let lifetime = configuration.accessTokenLifetime
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
                                        expiresAt: now.addingTimeInterval(lifetime.timeInterval), family: record.family)
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
                "expires_in": Int(lifetime.timeInterval),
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
