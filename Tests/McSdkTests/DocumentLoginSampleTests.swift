// The documents' login sample (seeds/002), as printed in the Swift 6 client target
// Tests/DocumentSamples/Seed002Login, in the login after a restart that the login page recommends.
import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
@testable import McSdk
@testable import Seed002LoginSample
import Testing
import StackTestSupport

extension TestIDP {
    /// The sample's handler for `userId` on `masterController`, with the documented constructor.
    func loginHandler(_ masterController: MasterController, userId: String, password: String) -> Seed002LoginSample.IdpHandler {
        Seed002LoginSample.IdpHandler(idpUrl: url, tenantId: tenant, clientId: "KssIdpLogin", masterController: masterController,
                                      userId: userId, username: userId, password: password, activationCode: "")
    }
}

@Suite("The documents' iOS login sample")
struct DocumentLoginSampleTests {
    @Test("logs in the user the Start result lists and ends with status OK")
    func loginSampleEndsWithOK() async throws {
        // Given a user activated on this MC, and an app restart
        let idp = TestIDP()
        let masterController = idp.masterController()
        #expect(await idp.activate("bob", password: "hunter22", on: masterController) == .kOk)
        let start = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .LOGIN_REQUIRED)
        #expect(await !masterController.isLoggedIn(KsUserIdentifier(tenantId: "demo", userId: "bob")))
        let userId = try #require(start.userList.first).userId
        let tokensBefore = try #require(await masterController.tokenSet(for: KsUserIdentifier(tenantId: "demo", userId: "bob")))

        // When the sample's login() runs for that user
        await idp.loginHandler(masterController, userId: userId, password: "hunter22").login()

        // Then the user is logged in with a fresh token set
        #expect(await masterController.isLoggedIn(KsUserIdentifier(tenantId: "demo", userId: "bob")))
        let tokensAfter = try #require(await masterController.tokenSet(for: KsUserIdentifier(tenantId: "demo", userId: "bob")))
        #expect(tokensAfter.accessToken != tokensBefore.accessToken)
        #expect(idp.server.isTokenActive(try #require(tokensAfter.accessToken), tenant: "demo"))
        #expect(idp.server.isTokenActive(try #require(tokensAfter.offlineToken), tenant: "demo"))
    }
}

// The login after a restart that seeds/002 recommends in prose: "attempt OfflineLoginEvent first;
// if it returns a status other than StatusType.OK, fall back to a fresh IDP login using the same
// AuthenticationMode" — the fallback is the sample's own login(), as printed (AuthenticationMode .no).
extension Seed002LoginSample.IdpHandler {
    /// Whether the user is logged in afterwards.
    func loginAfterRestart() async -> Bool {
        let userIdentifier = KsUserIdentifier(tenantId: tenantId, userId: userId ?? "")
        let offlineEvent = KSMOfflineLoginEvent(userIdentifier: userIdentifier)
        let offlineResult = await masterController.receive(offlineEvent) as! KSMOfflineLoginResultEvent
        if offlineResult.status == .OK {
            return true
        }
        await login()
        return await masterController.isLoggedIn(userIdentifier)
    }
}

@Suite("The documents' login after restart (seeds/002)")
struct DocumentLoginAfterRestartTests {
    let idp = TestIDP()
    let bob = KsUserIdentifier(tenantId: "demo", userId: "bob")

    /// Bob activated on a device; returns the device's store (what survives an app restart).
    func activatedDevice() async -> McTokenStore {
        let store = McTokenStore()
        #expect(await idp.activate("bob", password: "hunter22", on: idp.masterController(store: store)) == .kOk)
        return store
    }

    /// The app restarts: a new MasterController on the same store, Start, and the sample's handler
    /// for the first listed user.
    func restartedApp(_ store: McTokenStore, password: String = "hunter22") async throws -> (MasterController, Seed002LoginSample.IdpHandler) {
        let masterController = idp.masterController(store: store)
        let start = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .LOGIN_REQUIRED)
        let userId = try #require(start.userList.first).userId
        return (masterController, idp.loginHandler(masterController, userId: userId, password: password))
    }

    @Test("with stored tokens the offline login succeeds and no credentials are asked")
    func offlinePath() async throws {
        let store = await activatedDevice()
        idp.clock.advance(by: .seconds(3600))   // access and refresh token expired, offline token alive
        let (masterController, handler) = try await restartedApp(store, password: "not-asked")
        let codesBefore = idp.count(.codeIssued)
        #expect(await handler.loginAfterRestart())
        #expect(await masterController.isLoggedIn(bob))
        #expect(idp.count(.codeIssued) == codesBefore)
        #expect(idp.server.auditLog().last { $0.event == .tokensRefreshed }?.detail == "offline token rotated")
    }

    @Test("after CLEAR_ALL (logout) the offline login fails and the sample's fresh login takes over")
    func fallbackPath() async throws {
        let store = await activatedDevice()
        let before = idp.masterController(store: store)
        _ = await before.receive(KSMStartEvent())
        #expect(await (before.receive(KSMClearIamTokenCacheEvent(userIdentifier: bob)) as! KSMClearIamTokenCacheResultEvent).status == .kOk)
        let (masterController, handler) = try await restartedApp(store)
        #expect(await (masterController.receive(KSMOfflineLoginEvent(userIdentifier: bob)) as! KSMOfflineLoginResultEvent).status == .kNoTokenDataAvailable)
        #expect(await handler.loginAfterRestart())
        #expect(await masterController.isLoggedIn(bob))
        #expect(await masterController.tokenSet(for: bob)?.offlineToken != nil)
    }
}

@Suite("MasterController.loginAfterRestart")
struct LoginAfterRestartTests {
    let bob = KsUserIdentifier(tenantId: "demo", userId: "bob")

    @Test("takes the offline path when it can, else the IdpSdk login with the same mode, and reports a lockout as kTemporaryLocked")
    func bothPathsAndLockout() async throws {
        let idp = TestIDP(lockout: LockoutPolicy(maximumFailures: 1, lockoutDuration: .seconds(60)))
        let store = McTokenStore()
        #expect(await idp.activate("bob", password: "hunter22", on: idp.masterController(store: store), mode: .no) == .kOk)
        let masterController = idp.masterController(store: store)
        _ = await masterController.receive(KSMStartEvent())
        let provider = TableProvider(["username": "bob", "password": "hunter22"])
        let offline = await masterController.loginAfterRestart(bob, authenticationMode: .no, idpSdk: idp.sdk(), interactionInterface: provider)
        #expect(offline.status == .kOk && offline.path == .offlineLogin && offline.authenticationResult == nil)
        #expect(provider.recorded.isEmpty)

        // After a logout the fresh login runs, with the same mode
        _ = await masterController.receive(KSMClearIamTokenCacheEvent(userIdentifier: bob))
        _ = await masterController.receive(KSMRestartEvent())
        let fresh = await masterController.loginAfterRestart(bob, authenticationMode: .no, idpSdk: idp.sdk(), interactionInterface: provider)
        #expect(fresh.status == .kOk && fresh.path == .idpLogin && fresh.offlineLoginStatus == .kNoTokenDataAvailable)
        #expect(provider.recorded.count == 1)

        // A wrong password locks the account: the result says so, in both SDKs' terms
        _ = await masterController.receive(KSMClearIamTokenCacheEvent(userIdentifier: bob))
        _ = await masterController.receive(KSMRestartEvent())
        let wrong = ClosureProvider { _ in .init(credentials: ["username": "bob", "password": "wrong"]) }
        let locked = await masterController.loginAfterRestart(bob, authenticationMode: .no, idpSdk: idp.sdk(), interactionInterface: wrong)
        #expect(locked.status == .kTemporaryLocked && locked.path == .idpLogin)
        guard case .lockout(let lockout, _)? = locked.authenticationResult else { Issue.record("expected a lockout, got \(locked)"); return }
        #expect(!lockout.isPermanent && lockout.lockedUntil == idp.clock.now().addingTimeInterval(60))
        #expect(await !masterController.isLoggedIn(bob))
    }
}
