// Setup, not from the documents: what seeds/003's sample calls but defines elsewhere — the
// "previous documentation example function" signAuthentication(userInformation:) and the app's
// own error type.
import IdpPrimitives
import IdpSdk

enum YourError: Error {
    case yourErrorCase
}

/// The user information the sample signed again after a lockout, in order.
let signedAgain = LockedValue<[AuthenticationUserInformation]>([])

/// Stands for the documents' earlier example: records the request to sign again.
func signAuthentication(userInformation: AuthenticationUserInformation) throws {
    signedAgain.withLock { $0.append(userInformation) }
}
