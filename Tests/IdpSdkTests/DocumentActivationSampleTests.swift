// The iOS activation sample of the IdpSdk documents (seeds/001, spec idpsdk-activation), run against
// the in-process IDP. Changed from the documents only where Swift 6 requires it or for setup:
// - imports, and the `IdpHandler` class with its stored properties and initialiser (setup);
// - `activate()` is `async` (the sample awaits inside it) and returns the step 3 result so the
//   test can assert it;
// - the sample's provider answers all three fields at every step, so the service is configured
//   with `unrequestedFields: .ignore` (setup).
import Foundation
import IdpSdk
import IdpServer
import McSdk
import Testing

fileprivate final class IdpHandler: NSObject, Sendable {
    let idpSdk: IdpSdkService
    let masterController: MasterController
    let tenantId: String
    let clientId = "KssIdpEnrollment"
    let username: String
    let password: String
    let activationCode: String

    init(idp: TestIDP, username: String, password: String, activationCode: String) {
        idpSdk = IdpSdkService(tenantId: idp.tenant, idpUrl: idp.url, certificateChain: Data("certificate".utf8),
                               shouldHashPin: false, configuration: .init(unrequestedFields: .ignore))
        masterController = idp.masterController()
        tenantId = idp.tenant
        self.username = username
        self.password = password
        self.activationCode = activationCode
    }

    // --- from the documents ---

    func activate() async -> KSMSetAuthorisationCodeResultEvent {
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
    // userId is nil for first activation (no user enrolled yet)
    await withCheckedContinuation { continuation in
    idpSdk.getAuthorizationCode(
    withAstClientData: astClientDataInfo,
    clientId: clientId,
    interactionInterface: self,
    userId: nil,
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

@Suite("The documents' iOS activation sample")
struct DocumentActivationSampleTests {
    @Test("activates a pending user through the three steps and ends with status OK")
    func activationSampleEndsWithOK() async throws {
        // Given a user awaiting activation, and an MC that has been started
        let idp = TestIDP()
        let activationCode = idp.pendingUser("alice")
        let handler = IdpHandler(idp: idp, username: "alice", password: "correct horse", activationCode: activationCode)
        let start = await handler.masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .ACTIVATION_REQUIRED)

        // When the sample's activate() runs
        let result = await handler.activate()

        // Then the user is activated and logged in, and a new Start asks for login with that user
        #expect(result.status == .KSMOK)
        #expect(result.userIdentifier == KsUserIdentifier(tenantId: "demo", userId: "alice"))
        #expect(idp.server.user("alice", tenant: "demo")?.status == .active)
        #expect(await handler.masterController.isLoggedIn(KsUserIdentifier(tenantId: "demo", userId: "alice")))
        let restart = await handler.masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(restart.sdkState == .LOGIN_REQUIRED)
        #expect(restart.userList == [KsUserIdentifier(tenantId: "demo", userId: "alice")])
        // and the multi-step enrollment client asked its three steps in order
        let served = idp.server.auditLog().filter { $0.event == .stepServed || $0.event == .authorizationRequested }.map(\.detail)
        #expect(served == ["step 1 of 3", "step 2 of 3", "step 3 of 3"])
    }
}
