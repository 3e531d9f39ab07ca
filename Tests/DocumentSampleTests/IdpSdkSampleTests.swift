// The documents' iOS activation and login samples (seeds/001 and seeds/002), compiled as printed in
// Swift 6 client targets (Tests/DocumentSamples/Seed001Activation, Seed002Login) and run against
// the in-process IDP with the documented constructor and the default configuration.
import Foundation
import IdpServer
import McSdk
@testable import Seed001ActivationSample
@testable import Seed002LoginSample
import Testing

@Suite("The documents' IdpSdk samples, as printed, with the documented defaults")
struct IdpSdkSampleTests {
    @Test("seeds/001: activate() activates a pending user and logs them in (SetAuthorisationCode OK)")
    func activationSample() async {
        // Given a pending user and a started MC
        let idp = SampleIDP()
        let code = idp.pendingUser("alice")
        let masterController = idp.masterController()
        let start = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .ACTIVATION_REQUIRED)
        let handler = Seed001ActivationSample.IdpHandler(
            idpUrl: idp.url, tenantId: idp.tenant, clientId: "KssIdpEnrollment", masterController: masterController,
            userId: nil, username: "alice", password: "correct horse", activationCode: code)

        // When the documents' activate() runs: its provider answers all three fields at every step
        await handler.activate()

        // Then alice is active and logged in, as SetAuthorisationCode OK means
        let alice = KsUserIdentifier(tenantId: "demo", userId: "alice")
        #expect(idp.server.user("alice", tenant: "demo")?.status == .active)
        #expect(await masterController.isLoggedIn(alice))
        let again = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(again.sdkState == .LOGIN_REQUIRED && again.userList == [alice])
        // and every step of the three-step client was answered
        let served = idp.server.auditLog().filter { $0.event == .stepServed || $0.event == .authorizationRequested }.map(\.detail)
        #expect(served == ["step 1 of 3", "step 2 of 3", "step 3 of 3"])
    }

    @Test("seeds/002: login() logs an enrolled user in after a restart (SetAuthorisationCode OK)")
    func loginSample() async {
        // Given alice activated through the activation sample, and the app restarted
        let idp = SampleIDP()
        let code = idp.pendingUser("alice")
        let store = McTokenStore()
        let first = idp.masterController(store: store)
        _ = await first.receive(KSMStartEvent())
        await Seed001ActivationSample.IdpHandler(
            idpUrl: idp.url, tenantId: idp.tenant, clientId: "KssIdpEnrollment", masterController: first,
            userId: nil, username: "alice", password: "correct horse", activationCode: code).activate()
        let masterController = idp.masterController(store: store)
        let start = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .LOGIN_REQUIRED)
        let alice = KsUserIdentifier(tenantId: "demo", userId: "alice")
        #expect(await !masterController.isLoggedIn(alice))

        // When the documents' login() runs with the user from the Start result's user list; its
        // provider answers "activation-code" too (empty here: the login form does not ask it)
        let handler = Seed002LoginSample.IdpHandler(
            idpUrl: idp.url, tenantId: idp.tenant, clientId: "KssIdpLogin", masterController: masterController,
            userId: start.userList[0].userId, username: "alice", password: "correct horse", activationCode: "")
        await handler.login()

        // Then alice is logged in
        #expect(await masterController.isLoggedIn(alice))
        #expect(idp.server.auditLog().filter { $0.event == .codeIssued }.count == 2)
    }
}
