// The vendor pages' IdpSdk Swift: the initialization page's `IdpHandler` and the add-user page's
// code, as printed in a Swift 6 client target (Tests/DocumentSamples/VendorIdpSdkPages). The
// activation and login pages print the same code as seeds/001 and seeds/002 but for whitespace;
// IdpSdkSampleTests runs those.
import Foundation
import IdpServer
import McSdk
@testable import Seed001ActivationSample
@testable import VendorIdpSdkPagesSample
import Testing

@Suite("The vendor pages' IdpSdk samples, as printed", .serialized)
struct VendorIdpSdkPageTests {
    @Test("initialization + add user: a second user enrolls on the device with the first user's id and shares its binding (SetAuthorisationCode OK)")
    func addUser() async throws {
        // Given uma activated on a device by the documents' activation sample
        let idp = SampleIDP()
        let masterController = idp.masterController()
        _ = await masterController.receive(KSMStartEvent())
        await Seed001ActivationSample.IdpHandler(
            idpUrl: idp.url, tenantId: idp.tenant, clientId: "KssIdpEnrollment", masterController: masterController,
            userId: nil, username: "uma", password: "pw-uma-1", activationCode: idp.pendingUser("uma")).activate()
        let start = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .LOGIN_REQUIRED)

        // When the add-user page's addUser() runs with the initialization page's IdpHandler
        currentSignUp.withLock {
            $0 = SignUp(masterController: masterController, tenantId: idp.tenant, existingUserId: start.userList[0].userId,
                        username: "vic", password: "pw-vic-1", activationCode: idp.pendingUser("vic"))
        }
        let handler = VendorIdpSdkPagesSample.IdpHandler(certificate: Data(), baseUrl: idp.url, tenantId: idp.tenant)
        await handler.addUser()

        // Then both users are on the device, vic is logged in, and both share the device binding
        let vic = KsUserIdentifier(tenantId: "demo", userId: "vic")
        let after = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(after.userList == [KsUserIdentifier(tenantId: "demo", userId: "uma"), vic])
        #expect(idp.server.user("vic", tenant: "demo")?.status == .active)
        let binding = try #require(idp.server.user("uma", tenant: "demo")?.astClientIds.first)
        #expect(idp.server.user("vic", tenant: "demo")?.astClientIds == [binding])
    }
}
