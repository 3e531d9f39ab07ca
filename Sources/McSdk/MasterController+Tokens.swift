import Foundation
import IdpPrimitives

extension MasterController {
    // MARK: - Fresh tokens

    /// A valid access token for `user`, refreshed if it has expired.
    ///
    /// Callers that find the token expired at the same moment share one refresh (single flight):
    /// the IDP sees one refresh-token grant per expiry, however many callers wait. A caller whose
    /// task is cancelled stops waiting (throwing ``McTokenError/Reason/cancelled``) while the
    /// refresh goes on for the others; a failed refresh reaches every waiter; a refresh that takes
    /// longer than ``Configuration/refreshTimeout`` fails every waiter with
    /// ``McTokenError/Reason/timedOut``. The refresh token is rotated by the IDP; if the answer of
    /// a timed-out refresh arrives later it is still stored, and until it does, callers get the
    /// timeout at once rather than a second refresh that would present the spent token.
    ///
    /// Internal: the MC's tokens never reach the app; ``KSMExchangeIamTokenEvent`` uses this.
    /// - Throws: ``McTokenError``: ``McTokenError/Reason/loginRequired`` if the user is not logged
    ///   in here (or only a BIOMETRIC user's offline token is left); ``McTokenError/Reason/noTokenData``, ``McTokenError/Reason/refused(_:)`` (expired,
    ///   revoked, reused), ``McTokenError/Reason/locked(_:)``, ``McTokenError/Reason/timedOut``,
    ///   ``McTokenError/Reason/cancelled``, ``McTokenError/Reason/unreachable``.
    func validAccessToken(for user: KsUserIdentifier, trace: TraceContext = .newTrace()) async throws -> String {
        guard loggedIn.contains(user), let tokens = store.tokens(for: user) else {
            throw McTokenError(.loginRequired, status: .kLoginRequired, "user \(user) is not logged in; post SetAuthorisationCode or OfflineLogin first")
        }
        let refreshAhead = configuration.plantedRefreshAhead ?? 0
        if let access = tokens.accessToken, tokens.accessTokenExpiresAt > now.addingTimeInterval(refreshAhead) { return access }
        // After an OfflineLogin with the offline token there is no refresh token; the offline token
        // serves, unless it is behind the biometric prompt (then OfflineLogin must ask again).
        if tokens.refreshToken == nil, tokens.offlineToken != nil {
            guard store.user(user)?.authenticationMode == .no else {
                throw McTokenError(.loginRequired, status: .kLoginRequired, "the access token of \(user) expired and only the biometry-protected offline token is left; post OfflineLogin")
            }
            return try await refreshedAccessToken(user, with: .offline, trace: trace).get()
        }
        return try await refreshedAccessToken(user, with: .refresh, trace: trace).get()
    }

    /// How many refreshes are in flight; for tests.
    var refreshesInFlight: Int { flights.count }

    /// Joins the refresh in flight for `user` and `kind`, or starts one.
    func refreshedAccessToken(_ user: KsUserIdentifier, with kind: FlightKey.Kind, trace: TraceContext) async -> Result<String, McTokenError> {
        let key = FlightKey(user: user, kind: kind)
        let flight: RefreshFlight
        if let running = flights[key], !configuration.plantedRefreshesAlone {
            flight = running
        } else {
            guard let tokens = store.tokens(for: user), let presented = kind == .refresh ? tokens.refreshToken : tokens.offlineToken else {
                return .failure(McTokenError(.noTokenData, status: .kNoTokenDataAvailable, "no \(kind) token is stored for \(user)"))
            }
            flight = RefreshFlight()
            flights[key] = flight
            let timeout = configuration.refreshTimeout
            configuration.clock.runAfter(timeout) { [weak flight] in
                flight?.complete(.failure(McTokenError(.timedOut, status: .kCannotAcquireTokenData, "the token refresh did not end within \(timeout)")))
            }
            let context = requestContext(trace, tenantId: user.tenantId)
            // Unstructured: a cancelled caller must not cancel the refresh the others wait for.
            startTask(Seam("mc.refresh", trace: trace.seamTrace)) {
                let outcome = await TokenExchange.refresh(presented, clientId: tokens.clientId, context: context)
                // A controlled stress run may let another event at the token store first.
                await self.configuration.controller?.checkpoint(at: Seam("mc.store.refreshed", trace: trace.seamTrace))
                await self.finishRefresh(key, flight: flight, presented: presented, outcome: outcome)
            }
        }
        do {
            return .success(try await flight.wait(controller: configuration.controller, seam: Seam("mc.refresh.join", trace: trace.seamTrace)))
        } catch let error as McTokenError {
            return .failure(error)
        } catch {
            return .failure(McTokenError(.protocolError, status: .kFailed, "\(error)"))
        }
    }

    /// Stores what a refresh brought — only if the presented token is still the stored one (a
    /// ClearIamTokenCache in between wins) — then ends the flight.
    func finishRefresh(_ key: FlightKey, flight: RefreshFlight, presented: String, outcome: Result<TokenExchange.Refreshed, McTokenError>) {
        if flights[key] === flight { flights[key] = nil }
        switch outcome {
        case .success(let refreshed):
            let writesBackAfterClear = configuration.plantedWritesBackAfterClear, keepsSpent = configuration.plantedKeepsSpentRefreshToken
            let applied = store.updateTokens(of: key.user) { tokens -> Bool in
                switch key.kind {
                case .refresh:
                    guard tokens.refreshToken == presented || writesBackAfterClear else { return false }
                    if !keepsSpent { tokens.refreshToken = refreshed.rotatedToken }
                case .offline:
                    guard tokens.offlineToken == presented || writesBackAfterClear else { return false }
                    tokens.offlineToken = refreshed.rotatedToken
                }
                tokens.accessToken = refreshed.accessToken
                tokens.accessTokenExpiresAt = refreshed.accessTokenExpiresAt
                return true
            }
            guard applied == true else {
                if configuration.plantedLeavesClearedRefreshOpen { return }
                flight.complete(.failure(McTokenError(.loginRequired, status: .kLoginRequired, "the tokens of \(key.user) were cleared while the refresh was in flight")))
                return
            }
            flight.complete(.success(refreshed.accessToken))
        case .failure(let error):
            flight.complete(.failure(error))
        }
    }

    // MARK: - ExchangeIamToken

    /// ExchangeIamToken (see ``KSMExchangeIamTokenResultEvent`` for the statuses): the logged-in
    /// user's valid access token — refreshed once for all concurrent callers if it expired, or
    /// always with `forceUpdate` — exchanged at the IDP for a token for `audience`.
    func exchangeIamToken(_ event: KSMExchangeIamTokenEvent, trace: TraceContext) async -> any KsMacroEvent {
        guard started, let user = lastLoggedIn, loggedIn.contains(user) else {
            return KSMInvalidStateEvent(errorMessage: "KSMExchangeIamTokenEvent needs a user logged in by SetAuthorisationCode or OfflineLogin")
        }
        let audience = event.audience
        guard !audience.isEmpty, !audience.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else {
            return KSMExchangeIamTokenResultEvent(status: .kInvalidParameter, errorDescription: "audience '\(audience)' is empty or contains spaces or control characters")
        }
        guard !store.isFailing else { return KSMExchangeIamTokenResultEvent(status: .kInternalError, errorDescription: "the device storage could not be read") }
        guard let tokens = store.tokens(for: user), tokens.accessToken != nil || tokens.refreshToken != nil || tokens.offlineToken != nil else {
            return KSMExchangeIamTokenResultEvent(status: .kNoTokenDataAvailable, errorDescription: "no tokens are stored for \(user); log in again")
        }
        eventsWaitingOnIdp += 1
        defer { eventsWaitingOnIdp -= 1 }
        let access: Result<String, McTokenError>
        if event.forceUpdate {
            access = await refreshedAccessToken(user, with: tokens.refreshToken != nil ? .refresh : .offline, trace: trace)
        } else {
            do {
                access = .success(try await validAccessToken(for: user, trace: trace))
            } catch {
                access = .failure(error as? McTokenError ?? McTokenError(.protocolError, status: .kCannotAcquireTokenData, "\(error)"))
            }
        }
        let subject: String
        switch access {
        case .success(let token): subject = token
        case .failure(let error):
            let status: KSMEventStatusType = switch error.reason {
            case .refused, .loginRequired: .kTokenDataIsOutdated
            case .noTokenData: .kNoTokenDataAvailable
            case .locked: error.status
            case .timedOut, .unreachable, .protocolError, .cancelled: .kCannotAcquireTokenData
            }
            return KSMExchangeIamTokenResultEvent(status: status, errorDescription: error.errorDescription)
        }
        switch await TokenExchange.exchange(subject, audience: audience, clientId: tokens.clientId, context: requestContext(trace, tenantId: user.tenantId)) {
        case .success(let token): return KSMExchangeIamTokenResultEvent(status: .kOk, token: token)
        case .failure(let refusal): return refusal.result
        }
    }
}
