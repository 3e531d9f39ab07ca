import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpServer
import McSdk

/// An in-process IDP at a URL of its own with a tenant "demo", registered in `IdpNetwork.shared`
/// so the documents' constructors find it: the setup the documents leave to the app.
struct SampleIDP {
    let server: IdpServer
    let url: String
    let tenant = "demo"
    let clock = ManualClock()

    init(lockout: LockoutPolicy = .disabled) {
        server = IdpServer(configuration: .init(clock: clock, lockout: lockout))
        url = "https://idp-\(UUID().uuidString.lowercased()).test"
        try! server.addTenant(tenant)
        IdpNetwork.shared.register(server, at: url)
    }

    /// The MC with the documented configuration: only the IDP's URL (and this IDP's clock).
    func masterController(store: McTokenStore = McTokenStore()) -> MasterController {
        MasterController(configuration: .init(idpUrl: url, tokenStore: store, clock: clock))
    }

    /// Adds a user awaiting activation; returns the activation code.
    func pendingUser(_ userId: String) -> String {
        try! server.addUser(userId, tenant: tenant)
        return try! server.issueActivationCode(for: userId, tenant: tenant)
    }
}
