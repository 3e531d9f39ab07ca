// The login after a restart of the login page, with the documents' login() (seeds/002) as its
// fallback. The documents' code as printed runs in Tests/DocumentSampleTests; this copy sits in a
// Sendable class so that it can be handed to `loginAfterRestart`, and returns the step 3 result so
// the test can assert it.
import Foundation
import IdpSdk
import IdpServer
@testable import McSdk
import Testing

fileprivate final class IdpHandler: NSObject, Sendable {
    let idpSdk: IdpSdkService
    let masterController: MasterController
    let tenantId: String
    let clientId = "KssIdpLogin"
    let userId: String
    let username: String
    let password: String
    let activationCode = ""

    init(idp: TestIDP, masterController: MasterController, userId: String, password: String) {
        idpSdk = IdpSdkService(tenantId: idp.tenant, idpUrl: idp.url, certificateChain: Data("certificate".utf8),
                               shouldHashPin: false)
        self.masterController = masterController
        tenantId = idp.tenant
        self.userId = userId
        self.username = userId
        self.password = password
    }

    // --- from the documents ---

    func login() async -> KSMSetAuthorisationCodeResultEvent {
    // Step 1 — get AST client data
    let astClientData = await getAstClientData(tenantId: tenantId)
    // Step 2 — get authorization code; SDK calls provideCredentials on a background thread
    let authorizationCode = await getAuthorizationCode(
    clientId: clientId,
    astClientDataInfo: .init(astClientData: astClientData)
    )
    // Step 3 — pass authorization code to MC-SDK
    let authorizationCodeResult = await setAuthorizationCode(
    tenantId: tenantId,
    authCode: authorizationCode,
    authMode: .no,
    clientId: clientId
    )
    return authorizationCodeResult
    }
    /// Requests AST client data required to obtain an authorization code.
    ///
    /// - Parameter tenantId: Tenant identifier used to build the `KSMGetAstClientDataEvent`.
    /// - Returns: `KSMGetAstClientDataResultEvent` containing AST client data and challenge information.
    func getAstClientData(tenantId: String) async -> KSMGetAstClientDataResultEvent {
    let event = KSMGetAstClientDataEvent(tenantId: tenantId)
    let result = await masterController.receive(event) as! KSMGetAstClientDataResultEvent
    return result
    }
    /// Requests an authorization code from the IDP SDK.
    ///
    /// - Parameters:
    /// - clientId: Client identifier used in the IDP authorization request.
    /// - astClientDataInfo: AST client data required by the IDP SDK to build the request.
    /// - Returns: Authorization code returned by the IDP SDK, or an empty string if no code is provided.
    func getAuthorizationCode(clientId: String, astClientDataInfo: AstClientDataInfo) async -> String {
    // userId must be the userId of the (existing) user that we want to log in.
    await withCheckedContinuation { continuation in
    idpSdk.getAuthorizationCode(
    withAstClientData: astClientDataInfo,
    clientId: clientId,
    interactionInterface: self,
    userId: userId,
    traceParent: ""
    ) { result in
    if let code = result.authorizationCode {
    continuation.resume(returning: code)
    } else {
    continuation.resume(returning: "")
    }
    }
    }
    }
    /// Submits the authorization code to MCSDK.
    ///
    /// - Parameters:
    /// - tenantId: Tenant identifier used to build the `KSMSetAuthorisationCodeEvent`.
    /// - authCode: Authorization code received from the IDP SDK.
    /// - authMode: Authentication mode used when submitting the authorization code.
    /// - clientId: Client identifier associated with the authorization request.
    /// - Returns: `KSMSetAuthorisationCodeResultEvent` describing the outcome of the operation.
    func setAuthorizationCode(
    tenantId: String,
    authCode: String,
    authMode: KSMAuthenticationMode,
    clientId: String
    ) async -> KSMSetAuthorisationCodeResultEvent {
    let event = KSMSetAuthorisationCodeEvent(
    tenantId: tenantId,
    authenticationMode: authMode,
    authorisationCode: authCode,
    clientId: clientId
    )
    let result = await masterController.receive(event) as! KSMSetAuthorisationCodeResultEvent
    return result
    }
}

extension IdpHandler: IdpSdkInteractionInterface {
/// Provides credentials when requested by the IDP SDK interaction flow.
///
/// - Parameter interactionData: Additional interaction context provided by the IDP SDK.
/// - Returns: Sample credential container.
func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
// To cancel the flow and propagate an error, create the error and return it:
// let error: IdpSdkError = .init(subsystem, errorCode, , errorDescription)
// return .init(error: error)
.init(credentials: ["username" : username,
"password" : password,
"activation-code": activationCode]
)
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
        let handler = IdpHandler(idp: idp, masterController: masterController, userId: userId, password: "hunter22")
        let result = await handler.login()

        // Then the user is logged in with a fresh token set
        #expect(result.status == .KSMOK)
        #expect(await masterController.isLoggedIn(KsUserIdentifier(tenantId: "demo", userId: "bob")))
        let tokensAfter = try #require(await masterController.tokenSet(for: KsUserIdentifier(tenantId: "demo", userId: "bob")))
        #expect(tokensAfter.accessToken != tokensBefore.accessToken)
        #expect(idp.server.isTokenActive(try #require(tokensAfter.accessToken), tenant: "demo"))
        #expect(idp.server.isTokenActive(try #require(tokensAfter.offlineToken), tenant: "demo"))
    }
}

// The login after a restart that seeds/002 recommends in prose: "attempt OfflineLoginEvent first;
// if it returns a status other than StatusType.OK, fall back to a fresh IDP login using the same
// AuthenticationMode" — the fallback is the sample's own login() above, unchanged (AuthenticationMode .no).
extension IdpHandler {
    func loginAfterRestart() async -> KSMEventStatusType {
        let userIdentifier = KsUserIdentifier(tenantId: tenantId, userId: userId)
        let offlineEvent = KSMOfflineLoginEvent(userIdentifier: userIdentifier)
        let offlineResult = await masterController.receive(offlineEvent) as! KSMOfflineLoginResultEvent
        if offlineResult.status == .OK {
            return .OK
        }
        let authorizationCodeResult = await login()
        return authorizationCodeResult.status
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
    fileprivate func restartedApp(_ store: McTokenStore, password: String = "hunter22") async throws -> (MasterController, IdpHandler) {
        let masterController = idp.masterController(store: store)
        let start = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .LOGIN_REQUIRED)
        let userId = try #require(start.userList.first).userId
        return (masterController, IdpHandler(idp: idp, masterController: masterController, userId: userId, password: password))
    }

    @Test("with stored tokens the offline login succeeds and no credentials are asked")
    func offlinePath() async throws {
        let store = await activatedDevice()
        idp.clock.advance(by: .seconds(3600))   // access and refresh token expired, offline token alive
        let (masterController, handler) = try await restartedApp(store, password: "not-asked")
        let codesBefore = idp.count(.codeIssued)
        #expect(await handler.loginAfterRestart() == .OK)
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
        #expect(await handler.loginAfterRestart() == .OK)
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
