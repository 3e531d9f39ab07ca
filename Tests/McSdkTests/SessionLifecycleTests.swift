import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
@testable import McSdk
import Testing
import StackTestSupport

@Suite("Restart, OfflineLogin and ClearIamTokenCache")
struct SessionLifecycleTests {
    let idp = TestIDP()
    let uma = KsUserIdentifier(tenantId: "demo", userId: "uma")

    func offlineLogin(_ mc: MasterController, _ user: KsUserIdentifier? = nil) async -> KSMOfflineLoginResultEvent {
        await mc.receive(KSMOfflineLoginEvent(userIdentifier: user)) as! KSMOfflineLoginResultEvent
    }

    @discardableResult
    func clear(_ mc: MasterController, _ behavior: KSMClearIamTokenCacheEvent.ClearBehavior, user: KsUserIdentifier? = nil) async -> any KsMacroEvent {
        await mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: user ?? uma, clearBehavior: behavior))
    }

    func restart(_ mc: MasterController) async -> KSMRestartResultEvent {
        await mc.receive(KSMRestartEvent()) as! KSMRestartResultEvent
    }

    /// Uma activated (and logged in) on a fresh device; returns the device's MasterController.
    func activatedDevice(mode: KSMAuthenticationMode = .no, prompt: (any BiometricPrompt)? = nil, store: McTokenStore = McTokenStore()) async throws -> MasterController {
        let mc = idp.masterController(store: store, biometricPrompt: prompt)
        #expect(await idp.activate("uma", password: "pw-uma", on: mc, mode: mode) == .kOk)
        return mc
    }

    @Test("Restart: the user is LOGIN_REQUIRED again and keeps the stored tokens")
    func restartKeepsTokens() async throws {
        let mc = try await activatedDevice()
        let before = try #require(await mc.tokenSet(for: uma))
        let result = await restart(mc)
        #expect(result.status == .kOk && result.sdkState == .LOGIN_REQUIRED)
        #expect(result.userList == [uma] && result.userDetailsList.map(\.userIdentifier) == [uma])
        #expect(await !mc.isLoggedIn(uma))
        #expect(await mc.tokenSet(for: uma)?.offlineToken == before.offlineToken)
        #expect(await mc.tokenSet(for: uma)?.accessToken == before.accessToken)
    }

    @Test("an app restart (a new MasterController on the same store) finds the user; OfflineLogin without an identifier logs the last user in")
    func appRestartThenOfflineLogin() async throws {
        let store = McTokenStore()
        _ = try await activatedDevice(store: store)
        let restarted = idp.masterController(store: store)
        #expect(await offlineLogin(restarted).status == .kInvalidState)
        let start = await restarted.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .LOGIN_REQUIRED && start.userList == [uma])
        // With a live access token no request is needed
        let result = await offlineLogin(restarted)
        #expect(result.status == .kOk && result.userIdentifier == uma && !result.hasErrorOccurred)
        #expect(await restarted.isLoggedIn(uma))
        #expect(idp.count(.tokensRefreshed) == 0)
    }

    @Test("OfflineLogin refreshes an expired access token with the refresh token, then with the offline token, until Offline Session Max")
    func offlineLoginRefreshes() async throws {
        let mc = try await activatedDevice()
        // Access token expired, refresh token alive
        idp.clock.advance(by: .seconds(301))
        _ = await restart(mc)
        #expect(await offlineLogin(mc, uma).status == .kOk)
        #expect(idp.server.auditLog().last { $0.event == .tokensRefreshed }?.detail == "refresh token rotated")
        // Refresh token expired too: the offline token
        idp.clock.advance(by: .seconds(3600))
        _ = await restart(mc)
        let offlineBefore = try #require(await mc.tokenSet(for: uma)?.offlineToken)
        #expect(await offlineLogin(mc, uma).status == .kOk)
        #expect(idp.server.auditLog().last { $0.event == .tokensRefreshed }?.detail == "offline token rotated")
        let offlineAfter = try #require(await mc.tokenSet(for: uma)?.offlineToken)
        #expect(offlineAfter != offlineBefore && idp.server.isTokenActive(offlineAfter, tenant: "demo"))
        // Past Offline Session Max (30 days from the login): an online login is required
        idp.clock.advance(by: .seconds(30 * 24 * 3600))
        _ = await restart(mc)
        let expired = await offlineLogin(mc, uma)
        #expect(expired.status == .kLoginRequired)
        #expect(expired.errorDescription == "the IDP refused the refresh: invalid_grant: the offline session has ended (Offline Session Max)")
        #expect(await !mc.isLoggedIn(uma))
    }

    @Test("OfflineLogin statuses: kInvalidState, kInvalidUserId, kOfflineNotActivated for PASSWORD and PIN")
    func offlineLoginRefusals() async throws {
        let fresh = idp.masterController()
        #expect(await offlineLogin(fresh).status == .kInvalidState)
        _ = await fresh.receive(KSMStartEvent())
        let nobody = await offlineLogin(fresh)
        #expect(nobody.status == .kInvalidUserId)
        #expect(nobody.errorDescription == "no user identifier was given and no user has logged in on this device yet")
        #expect(await offlineLogin(fresh, KsUserIdentifier(tenantId: "demo", userId: "ghost")).status == .kInvalidUserId)
        for (name, mode) in [("pat", KSMAuthenticationMode.PASSWORD), ("pia", .PIN)] {
            let mc = idp.masterController()
            #expect(await idp.activate(name, password: "pw-\(name)", on: mc, mode: mode) == .kOk)
            let result = await offlineLogin(mc)
            #expect(result.status == .kOfflineNotActivated)
            #expect(result.errorDescription == "user demo/\(name) activated with AuthenticationMode \(mode), which has no offline login; log in at the IDP")
        }
    }

    @Test("a locked account: OfflineLogin says kTemporaryLocked, and kPinBlocked once the lock is permanent")
    func offlineLoginLocked() async throws {
        let idp = TestIDP(lockout: LockoutPolicy(maximumFailures: 1, lockoutDuration: .seconds(600), permanentLockoutAfterTotalFailures: 2))
        let mc = idp.masterController()
        #expect(await idp.activate("uma", password: "pw-uma", on: mc) == .kOk)
        let wrongPassword = ClosureProvider { data in
            data.previousError == nil ? .init(credentials: ["username": "uma", "password": "wrong"]) : .init(error: IdpSdkError("test", 1, "stop"))
        }
        func wrongLogin() async -> IdpSdkResult {
            await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: wrongPassword, userId: "uma")
        }
        let first = await wrongLogin()
        guard case .lockout(let lock, _)? = first.authenticationResult else { Issue.record("expected a lockout, got \(first)"); return }
        #expect(first.idpSdkError?.code == .temporarilyLocked)
        idp.clock.advance(by: .seconds(301))
        _ = await mc.receive(KSMRestartEvent())
        let temporary = await offlineLogin(mc)
        #expect(temporary.status == .kTemporaryLocked)
        #expect(temporary.errorDescription == "the account is \(lock)")
        idp.clock.set(lock.lockedUntil)
        #expect(await wrongLogin().authenticationResult == .lockout(lockoutInformation: .permanent,
                                                                    authenticationUserInformation: .init(tenantId: "demo", userId: "uma", clientId: "KssIdpLogin")))
        #expect(await offlineLogin(mc).status == .kPinBlocked)
    }

    @Test("BIOMETRIC: activation asks the prompt; after CLEAR_ACCESS_AND_REFRESH OfflineLogin asks it; cancel and failure are FAILED with the biometric code")
    func biometricPrompt() async throws {
        let prompt = ScriptedBiometricPrompt([.success, .failure(.userCanceled), .failure(.authFailed), .success])
        let mc = try await activatedDevice(mode: .BIOMETRIC, prompt: prompt)
        #expect(prompt.prompts == 1)
        // A live access token needs no prompt
        _ = await restart(mc)
        #expect(await offlineLogin(mc).status == .kOk)
        #expect(prompt.prompts == 1)
        await clear(mc, .CLEAR_ACCESS_AND_REFRESH)
        _ = await restart(mc)
        let cancelled = await offlineLogin(mc)
        #expect(cancelled.status == .FAILED)
        #expect(cancelled.errorCode - 802000000 == BiometricPromptError.userCanceled.rawValue)
        let failed = await offlineLogin(mc)
        #expect(failed.status == .FAILED)
        #expect(failed.errorCode - 802000000 == BiometricPromptError.authFailed.rawValue)
        #expect(idp.count(.tokensRefreshed) == 0)
        #expect(await offlineLogin(mc).status == .kOk)
        #expect(prompt.prompts == 4)
        #expect(idp.count(.tokensRefreshed) == 1)
    }

    @Test("BIOMETRIC at SetAuthorisationCode: a cancelled prompt is FAILED with the biometric code, stores nothing and leaves the code unspent; a device without biometry fails the same way")
    func biometricAtSetAuthorisationCode() async throws {
        // Given a device whose prompt is cancelled once, then passes
        let prompt = ScriptedBiometricPrompt([.failure(.userCanceled), .success])
        let mc = idp.masterController(biometricPrompt: prompt)
        let code = idp.pendingUser("uma")
        _ = await mc.receive(KSMStartEvent())
        let ast = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo")) as! KSMGetAstClientDataResultEvent
        let result = await idp.sdk().run(AstClientDataInfo(astClientData: ast), clientId: "KssIdpEnrollment",
                                         provider: TableProvider(["username": "uma", "activation-code": code, "password": "pw-uma"]))
        let authorizationCode = try #require(result.authorizationCode)
        func set() async -> KSMSetAuthorisationCodeResultEvent {
            await mc.receive(KSMSetAuthorisationCodeEvent(tenantId: "demo", authenticationMode: .BIOMETRIC,
                                                          authorisationCode: authorizationCode, clientId: "KssIdpEnrollment")) as! KSMSetAuthorisationCodeResultEvent
        }
        // When the user cancels the prompt: FAILED, the documented code, nothing stored, code unspent
        let cancelled = await set()
        #expect(cancelled.status == .KSMFAILED)
        #expect(cancelled.errorCode == 802_000_000 + BiometricPromptError.userCanceled.rawValue)
        #expect(await mc.tokenSet(for: uma) == nil)
        #expect(idp.count(.codeRedeemed) == 0)
        // Then passing it activates with the same code
        #expect(await set().status == .kOk)
        #expect(prompt.prompts == 2)

        // A device without biometry: FAILED with iOS's "no biometry enrolled" code
        let bare = idp.masterController()
        #expect(await idp.activate("vic", password: "pw-vic", on: bare, mode: .BIOMETRIC) == .kFailed)
        let bareResult = await bare.receive(KSMGetInformationEvent()) as! KSMGetInformationResultEvent
        #expect(bareResult.loggedInUser == nil)
    }

    @Test("CLEAR_ALL then Restart: OfflineLogin fails with kNoTokenDataAvailable; a fresh IDP login works again")
    func clearAll() async throws {
        let mc = try await activatedDevice()
        let result = try #require(await clear(mc, .CLEAR_ALL) as? KSMClearIamTokenCacheResultEvent)
        #expect(result.status == .kOk && !result.hasErrorOccurred)
        #expect(await !mc.isLoggedIn(uma))
        let restarted = await restart(mc)
        #expect(restarted.sdkState == .LOGIN_REQUIRED && restarted.userList == [uma])
        let offline = await offlineLogin(mc, uma)
        #expect(offline.status == .kNoTokenDataAvailable)
        let tokens = try #require(await mc.tokenSet(for: uma))
        #expect(tokens.accessToken == nil && tokens.refreshToken == nil && tokens.offlineToken == nil)
        #expect(tokens.description == "McTokenSet(user: uma, access: none, refresh: none, offline: none)")
        #expect(await idp.login("uma", password: "pw-uma", on: mc) == .kOk)
        #expect(await mc.isLoggedIn(uma))
        #expect(await mc.tokenSet(for: uma)?.offlineToken != nil)
    }

    @Test("CLEAR_OFFLINE keeps the session while the access token lives; CLEAR_ACCESS_AND_REFRESH falls back to the offline token")
    func partialClears() async throws {
        let mc = try await activatedDevice()
        #expect((await clear(mc, .CLEAR_OFFLINE) as? KSMClearIamTokenCacheResultEvent)?.status == .kOk)
        #expect(await mc.isLoggedIn(uma))
        #expect(await mc.tokenSet(for: uma)?.offlineToken == nil)
        #expect(await offlineLogin(mc, uma).status == .kOk)
        // Without the offline token and with the refresh token expired, nothing is left
        idp.clock.advance(by: .seconds(3600))
        _ = await restart(mc)
        #expect(await offlineLogin(mc, uma).status == .kNoTokenDataAvailable)

        let una = KsUserIdentifier(tenantId: "demo", userId: "una")
        let other = idp.masterController()
        #expect(await idp.activate("una", password: "pw-una", on: other) == .kOk)
        #expect((await clear(other, .CLEAR_ACCESS_AND_REFRESH, user: una) as? KSMClearIamTokenCacheResultEvent)?.status == .kOk)
        #expect(await !other.isLoggedIn(una))
        _ = await restart(other)
        #expect(await offlineLogin(other, una).status == .kOk)
        #expect(idp.server.auditLog().last { $0.event == .tokensRefreshed }?.detail == "offline token rotated")
    }

    @Test("ClearIamTokenCache (no documented status) before Start is answered with KSMInvalidStateEvent; for a user not on the device it clears nothing and says so")
    func clearRefusals() async throws {
        let fresh = idp.masterController()
        #expect((await clear(fresh, .CLEAR_ALL) as? KSMInvalidStateEvent)?.errorMessage == "post a KSMStartEvent before KSMClearIamTokenCacheEvent")
        let mc = try await activatedDevice()
        let unknown = try #require(await clear(mc, .CLEAR_ALL, user: KsUserIdentifier(tenantId: "demo", userId: "ghost")) as? KSMClearIamTokenCacheResultEvent)
        #expect(unknown.status == .kOk && unknown.errorDescription == "user demo/ghost is not activated on this device; nothing to clear")
        #expect(await mc.tokenSet(for: uma)?.accessToken != nil)
    }

    @Test("add user: a second user enrolls next to the first, with the first user's id passed as userId")
    func addUser() async throws {
        let mc = try await activatedDevice()
        let start = await mc.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .LOGIN_REQUIRED)
        let firstUserId = try #require(start.userList.first?.userId)
        #expect(await idp.activate("vic", password: "pw-vic", on: mc, existingUserId: firstUserId) == .kOk)
        let after = await mc.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(after.userList == [uma, KsUserIdentifier(tenantId: "demo", userId: "vic")])
        #expect(idp.server.user("vic", tenant: "demo")?.status == .active)
        // Both can log in offline on the device
        #expect(await offlineLogin(mc, uma).status == .kOk)
        #expect(await offlineLogin(mc).userIdentifier == uma)
        #expect(await offlineLogin(mc, KsUserIdentifier(tenantId: "demo", userId: "vic")).status == .kOk)
    }
}
