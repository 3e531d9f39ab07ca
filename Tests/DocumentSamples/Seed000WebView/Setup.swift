// Setup, not from the documents: the globals the sample reads, and the app class that holds the
// `masterControllerAdapter` its methods use.
import McSdk

/// The redirect URI registered for the web-view clients.
let redirectUrl = "https://kobil/OpenIdRedirectUri"
/// Where the sample's web view finds the IDP.
let baseUrl = "https://idp-twv-sample.test"

/// The app's object that owns the MC.
class MaverickActivation {
    let masterControllerAdapter: MasterController
    init(_ masterController: MasterController) { masterControllerAdapter = masterController }
}
