// The iOS login sample of the IdpSdk documents (seeds/002, spec idpsdk-login), run against the
// in-process IDP. Changed from the documents only for Swift 6 and setup, as in the activation
// sample: imports, the class with its properties and initialiser, `login()` is `async` and returns
// the step 3 result, and `unrequestedFields: .ignore` because the sample's provider answers
// "activation-code" to a login form too.
import Foundation
import IdpSdk
import IdpServer
import McSdk
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
                               shouldHashPin: false, configuration: .init(unrequestedFields: .ignore))
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
