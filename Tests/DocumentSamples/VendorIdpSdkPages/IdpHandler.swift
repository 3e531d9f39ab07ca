// Verbatim from the vendor page shift-lite-idpsdk__development__idpsdk__idpsdk-initialization.md, block 1, lines 39-53, unchanged (its trailing comma after the last
// parameter needs Swift 6.1 or later). Swift 6 mode.
import Foundation
import IdpSdk

class IdpHandler: NSObject {
let idpSdk: IdpSdkService
init(
certificate: Data,
baseUrl: String,
tenantId: String,
) {
self.idpSdk = .init(
tenantId: tenantId,
idpUrl: baseUrl,
certificateChain: certificate,
shouldHashPin: false
)
}
}
