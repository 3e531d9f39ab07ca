// Verbatim from the vendor page shift-lite-idpsdk__development__idpsdk__idpsdk-add-user.md, block 1, lines 30-44, unchanged. Swift 6 mode.
import IdpSdk

extension IdpHandler: IdpSdkInteractionInterface {
/// Provides credentials when requested by the IDP SDK interaction flow.
///
/// - Parameter interactionData: Additional interaction context provided by the IDP SDK.
/// - Returns: Sample credential container.
func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
// To cancel the flow and propagate an error, create the error and return it:
//   let error: IdpSdkError = .init(subsystem, errorCode, , errorDescription)
//   return .init(error: error)
.init(credentials: ["username"       : username,
"password"       : password,
"activation-code": activationCode]
)
}
}
