// Verbatim from seeds/000 (web-view activation, iOS/Swift), lines 34-98, unchanged; compiled in Swift 6 mode.
import Foundation
import McSdk

/// helper class to handle the IAM webpage
internal class MaverickWebPageHelper {
/// IMPORTANT: the redirect URI is hardcoded right now. this value must fit to the settings on the IAM system (KOBIL IDP).
static let REDIRECT_URI = redirectUrl

/// the response type value within the OpenID protocol
static let RESPONSE_TYPE = "code"

/// the response mode value within the OpenID protocol
static let RESPONSE_MODE = "fragment"

/// the base url
static let BASE_URL = baseUrl;
// the scope
static let SCOPE = "openid";
// the end point

static let END_POINT = "maverimport";

static func getMaverickWebpageUrlFor(
clientId: String, astData: KSMGetAstClientDataResultEvent) -> String {
var result = BASE_URL
result += "/auth/realms/";
result += END_POINT;
result += "/protocol/openid-connect/auth?";
result += "client_id" + "=" + clientId
result += "&"
result += "redirect_uri" + "=" + REDIRECT_URI
result += "&"
result += "scope" + "=" + SCOPE
result += "&"
result += "response_type" + "=" + RESPONSE_TYPE
result += "&"
result += "response_mode" + "=" + RESPONSE_MODE
result += "&"
result += "nonce" + "=" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
result += "&"
result += "code_challenge" + "=" + astData.codeChallange
result += "&"
result += "code_challenge_method" + "=" + astData.codeChallangeMethod

return result
}
}

// We have some defined clientId for this server
enum MaverickClientIdType{
case newUser
case existingUser
case loginUser

var clientId:String{
switch self {
case .newUser:
// The user is not register in your app with current environment, so the user have to register first and then activate.
return "IDPRegistration"
case .existingUser:
// The user was register in your app, and he install your app 2nd time.
return "IDPLogin"
case .loginUser:
// User was login and after some time he came again for new session or his token is expired.
return "IDPSubsequentLogin"
}
}
}
