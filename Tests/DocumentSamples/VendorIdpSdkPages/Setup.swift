// Setup, not from the documents: the initialization page declares IdpHandler with `idpSdk` only;
// the add-user page's code also reads the MC, the tenant, the client, the enrolled user and the new
// user's credentials. Stored properties cannot be added in an extension, so these come from the
// app's current sign-up, which the test sets.
import IdpPrimitives
import IdpSdk
import McSdk

/// What the app knows when a user is added.
struct SignUp: Sendable {
    var masterController: MasterController
    var tenantId: String
    var existingUserId: String?
    var username: String
    var password: String
    var activationCode: String
}

let currentSignUp = LockedValue<SignUp?>(nil)

extension IdpHandler {
    var masterController: MasterController { currentSignUp.withLock { $0! }.masterController }
    var tenantId: String { currentSignUp.withLock { $0! }.tenantId }
    var clientId: String { "KssIdpEnrollment" }
    /// The already enrolled user, as the page's comment asks.
    var userId: String? { currentSignUp.withLock { $0! }.existingUserId }
    var username: String { currentSignUp.withLock { $0! }.username }
    var password: String { currentSignUp.withLock { $0! }.password }
    var activationCode: String { currentSignUp.withLock { $0! }.activationCode }
}
