// Verbatim from seeds/003 (finishing an authentication, Swift), lines 4-58, unchanged.
// Below it, marked, the one addition: an internal entry point, because the sample is `private`.
import IdpSdk
import Foundation

private func finishAuthentication(userInformation: AuthenticationUserInformation) throws {
let authenticator = XignSdk.shared.authenticator
// Submit the previous signed `AuthenticationUserInformation` object to the XignIn-Manager.
let result: AuthenticationResult = try authenticator.finishAuthenticationSynchronous(
userInfo: userInformation
)
switch result {
case .userLogin(let userLoginResult):
// The end of a normal user login. The userLoginResult contains some meta information.
return
case .serviceLogin(let serviceLoginResult):
// The end of the authentication during an InApp-Authentication process. The
// serviceLoginResult is needed to request the user's attribute data as well as
// the MappedId.
// TODO: finish the inApp-Authentication
return
case .apiAccessAddFactor(let apiAccessAddFactor):
// A special result needed to subsequently add a factor, needs further handling.
return
case .apiAccessChangePin(let apiAccessChangePin):
// A special result needed to change the user's PIN, needs further handling.
return
case .apiAccessMergeComplete(idmIdentifier: let idmIdentifier):
// Signalizes the success of an account merge.
return
case .apiAccessRequestNewActivationData(let apiAccessRequestNewActivationData):
// A special result needed to request a new activation, needs further handling.
return
case .apiAccessDelete(let apiAccessDelete):
// An `apiAccessDelete` indicates the successful authentication in order to
// perform a delete action, needs further handling.
return
case .lockout(
lockoutInformation: let lockoutInformation,
authenticationUserInformation: let authenticationUserInformation
):
// Happens, if one of the supplied authenticators was invalid, e.g. wrong PIN.
// In this case the lockout duration within `lockoutInformation` must be
// waited. After that all required factors must be supplied again and the
// process can be retried.
// Check if the lockout is permanent.
if lockoutInformation.isPermanent {
// The activation has been disabled permanently, notify the user an cancel the process.
throw YourError.yourErrorCase
}
// Retrieve the date until which the lock is effective.
let lockedUntil: Date = lockoutInformation.lockedUntil
// Wait until the lock has been lifted.
// Retry the signing of the `authenticationUserInformation`.
// Note: This is a call to the previous documentation example function that
// illustrates the singing.
try signAuthentication(userInformation: authenticationUserInformation)
return
}
}

// --- setup, not from the documents ---
/// Runs the documents' private `finishAuthentication(userInformation:)`.
func runFinishAuthentication(userInformation: AuthenticationUserInformation) throws {
    try finishAuthentication(userInformation: userInformation)
}
