import Foundation
import IdpPrimitives

extension MasterController {
    /// OfflineLogin, with the documented statuses only (see ``KSMOfflineLoginEvent``).
    func offlineLogin(_ event: KSMOfflineLoginEvent, trace: TraceContext) async -> KSMOfflineLoginResultEvent {
        func fail(_ status: KSMEventStatusType, _ text: String, errorCode: Int? = nil) -> KSMOfflineLoginResultEvent {
            KSMOfflineLoginResultEvent(status: status, errorCode: errorCode, errorDescription: text)
        }
        func fail(_ error: McTokenError) -> KSMOfflineLoginResultEvent {
            // Only statuses the documents list for OfflineLogin: a cancelled wait is a failure.
            fail(error.reason == .cancelled ? .kFailed : error.status, error.errorDescription)
        }
        guard started else { return fail(.kInvalidState, "post a KSMStartEvent before KSMOfflineLoginEvent") }
        if let given = event.userIdentifier, given.tenantId.isEmpty || given.userId.isEmpty {
            return fail(.kInvalidParameter, "the user identifier \(given) lacks its tenant id or user id; pass nil for the last user")
        }
        guard !store.isFailing else { return fail(.kInternalError, "the device storage could not be read") }
        guard let user = event.userIdentifier ?? store.lastLoggedInUser else {
            return fail(.kInvalidUserId, "no user identifier was given and no user has logged in on this device yet")
        }
        guard let stored = store.user(user) else {
            return fail(.kInvalidUserId, "user \(user) is not activated on this device")
        }
        let mode = stored.authenticationMode
        guard mode == .no || mode == .biometric else {
            return fail(.kOfflineNotActivated, "user \(user) activated with AuthenticationMode \(mode), which has no offline login; log in at the IDP")
        }
        eventsWaitingOnIdp += 1
        defer { eventsWaitingOnIdp -= 1 }
        let tokens = stored.tokens
        func loggedInNow() -> KSMOfflineLoginResultEvent {
            loggedIn.insert(user)
            lastLoggedIn = user
            store.markLoggedIn(user)
            return KSMOfflineLoginResultEvent(status: .kOk, userIdentifier: user)
        }
        // 1. A live access token is enough.
        if tokens.accessToken != nil, tokens.accessTokenExpiresAt > now { return loggedInNow() }
        // 2. Else the refresh token, if the IDP still takes it.
        if tokens.refreshToken != nil {
            switch await refreshedAccessToken(user, with: .refresh, trace: trace) {
            case .success: return loggedInNow()
            case .failure(let error):
                guard case .refused = error.reason else { return fail(error) }
            }
        }
        // 3. Else the offline token, behind the biometric prompt in BIOMETRIC mode.
        guard store.tokens(for: user)?.offlineToken != nil else {
            return fail(.kNoTokenDataAvailable, "no offline token is stored for \(user); log in at the IDP")
        }
        if mode == .biometric, let failure = await biometricFailure(reason: "Log in as \(user.userId)") {
            return fail(.kFailed, failure.text, errorCode: failure.errorCode)
        }
        switch await refreshedAccessToken(user, with: .offline, trace: trace) {
        case .success: return loggedInNow()
        case .failure(let error): return fail(error)
        }
    }

    /// ClearIamTokenCache: the documents give its result no status; it is kOk, saying in
    /// `errorDescription` when there was nothing to clear (a user not activated here). Before
    /// Start it is answered with a ``KSMInvalidStateEvent``; with failing storage, nothing is
    /// cleared and it says so.
    func clearIamTokenCache(_ event: KSMClearIamTokenCacheEvent) -> any KsMacroEvent {
        guard started else { return KSMInvalidStateEvent(errorMessage: "post a KSMStartEvent before KSMClearIamTokenCacheEvent") }
        let user = event.userIdentifier
        guard !store.isFailing else {
            return KSMInvalidStateEvent(errorMessage: "the device storage could not be written; nothing was cleared for \(user)")
        }
        let cleared: Void? = store.updateTokens(of: user) { tokens in
            switch event.clearBehavior {
            case .CLEAR_ALL:
                tokens.accessToken = nil
                tokens.refreshToken = nil
                tokens.offlineToken = nil
            case .CLEAR_ACCESS_AND_REFRESH:
                tokens.accessToken = nil
                if !configuration.plantedClearKeepsRefreshToken { tokens.refreshToken = nil }
            case .CLEAR_OFFLINE:
                tokens.offlineToken = nil
            }
        }
        guard cleared != nil else {
            return KSMClearIamTokenCacheResultEvent(status: .kOk, errorDescription: "user \(user) is not activated on this device; nothing to clear")
        }
        if event.clearBehavior != .CLEAR_OFFLINE {
            loggedIn.remove(user)
            if lastLoggedIn == user { lastLoggedIn = nil }
        }
        return KSMClearIamTokenCacheResultEvent(status: .kOk)
    }
}
