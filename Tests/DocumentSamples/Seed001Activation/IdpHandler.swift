// Setup, not from the documents: they show IdpHandler's methods, not its declaration. This is the
// plain, non-final NSObject subclass the documents' Swift implies, with mutable stored properties;
// it is not Sendable, and it conforms to IdpSdkInteractionInterface in another file, as printed.
import Foundation
import IdpSdk
import McSdk

class IdpHandler: NSObject {
    let idpSdk: IdpSdkService
    let masterController: MasterController
    var tenantId: String
    var clientId: String
    var userId: String?
    var username: String
    var password: String
    var activationCode: String

    /// The documented constructor of the IdpSdk, nothing else configured.
    init(idpUrl: String, tenantId: String, clientId: String, masterController: MasterController,
         userId: String?, username: String, password: String, activationCode: String) {
        idpSdk = IdpSdkService(tenantId: tenantId, idpUrl: idpUrl, certificateChain: Data(), shouldHashPin: false)
        self.masterController = masterController
        self.tenantId = tenantId
        self.clientId = clientId
        self.userId = userId
        self.username = username
        self.password = password
        self.activationCode = activationCode
        super.init()
    }
}
