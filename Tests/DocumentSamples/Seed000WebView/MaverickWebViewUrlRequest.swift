// Verbatim from seeds/000 (web-view activation, iOS/Swift), lines 113-127, unchanged but for the FoundationNetworking import that Linux needs for URLRequest; compiled in Swift 6 mode.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import McSdk

// Create MaverickWebPage URL request with headers
class MaverickWebViewUrlRequest {
static func getUrlRequest(userType: MaverickClientIdType,url:String,astData: KSMGetAstClientDataResultEvent) -> URLRequest?{
guard let webPageUrl = URL(string: url) else{return nil}
var request = URLRequest(url: webPageUrl)
switch userType {
case .newUser:
request.setValue(astData.clientData, forHTTPHeaderField: "X-KOBIL-ASTCLIENTDATA")
case .existingUser,.loginUser:
request.setValue(astData.clientId, forHTTPHeaderField: "X-KOBIL-ASTCLIENTID")
request.setValue(astData.clientData, forHTTPHeaderField: "X-KOBIL-ASTCLIENTDATA")
}
return request
}
}
