// README.md's block under "Activate and log in against the in-process IDP", verbatim between the markers (ReadmeBlockTests checks that it is).
import Foundation
import IdpSdk
import IdpServer
import McSdk
import Testing

@Suite("README: activation and login against the in-process IDP")
struct ActivationAndLoginTests {
    @Test("alice is activated, then logs in again after a restart")
    func activationThenLogin() async throws {
        // README block begin
        // An in-process IDP at the URL the documented constructors are given, with a user to activate.
        // Its clock moves only when advanced, so the codes it issues do not expire while the example waits.
        let idp = IdpServer(configuration: .init(clock: ManualClock()))
        try idp.addTenant("demo")                     // adds the clients KssIdpEnrollment, KssIdpLogin, …
        try idp.addUser("alice", tenant: "demo")
        let activationCode = try idp.issueActivationCode(for: "alice", tenant: "demo")
        IdpNetwork.shared.register(idp, at: "https://idp.example.test", latency: .milliseconds(20))

        // The documented objects, created as the documents create them.
        let idpSdk = IdpSdkService(tenantId: "demo", idpUrl: "https://idp.example.test",
                                   certificateChain: Data(), shouldHashPin: false)
        let masterController = MasterController(configuration: .init(idpUrl: "https://idp.example.test"))

        // Your provider: called on an SDK-owned thread, once per form step, for many flows at once.
        struct AliceProvider: IdpSdkInteractionInterface {
            let answers: [String: String]
            func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
                var credentials: [String: String] = [:]
                for id in interactionData.inputFieldIds { credentials[id] = answers[id] }
                return .init(credentials: credentials)
            }
        }
        let provider = AliceProvider(answers: [IdpSdkConstants.USERNAME: "alice",
                                               IdpSdkConstants.ACTIVATION_CODE: activationCode,
                                               IdpSdkConstants.PASSWORD: "correct horse"])

        // Activation: username, then activation code, then the new password.
        _ = await masterController.receive(KSMStartEvent())
        let ast = await masterController.receive(KSMGetAstClientDataEvent(tenantId: "demo")) as! KSMGetAstClientDataResultEvent
        let activation = await idpSdk.getAuthorizationCode(withAstClientData: .init(astClientData: ast), clientId: "KssIdpEnrollment",
                                                           interactionInterface: provider, userId: nil, traceParent: nil)
        let activated = await masterController.receive(KSMSetAuthorisationCodeEvent(
            tenantId: "demo", authenticationMode: .no, authorisationCode: activation.authorizationCode ?? "",
            clientId: "KssIdpEnrollment")) as! KSMSetAuthorisationCodeResultEvent
        print(activated.status)                       // kOk: alice is activated and logged in

        // After an app restart alice must log in again: username and password, with her user id.
        let restart = await masterController.receive(KSMRestartEvent()) as! KSMRestartResultEvent
        print(restart.sdkState)                       // LOGIN_REQUIRED
        let loginAst = await masterController.receive(KSMGetAstClientDataEvent(tenantId: "demo")) as! KSMGetAstClientDataResultEvent
        let login = await idpSdk.getAuthorizationCode(withAstClientData: .init(astClientData: loginAst), clientId: "KssIdpLogin",
                                                      interactionInterface: provider, userId: "alice", traceParent: nil)
        let loggedIn = await masterController.receive(KSMSetAuthorisationCodeEvent(
            tenantId: "demo", authenticationMode: .no, authorisationCode: login.authorizationCode ?? "",
            clientId: "KssIdpLogin")) as! KSMSetAuthorisationCodeResultEvent
        print(loggedIn.status)                        // kOk: alice is logged in
        // README block end
        #expect(activated.status == .KSMOK, "\(activated.errorDescription) \(activation.idpSdkError.map { "\($0)" } ?? "")")
        #expect(restart.sdkState == .LOGIN_REQUIRED)
        #expect(loggedIn.status == .KSMOK, "\(loggedIn.errorDescription) \(login.idpSdkError.map { "\($0)" } ?? "")")
        #expect(idp.user("alice", tenant: "demo")?.status == .active)
    }
}
