// Verbatim from the vendor page shift-lite-idpsdk__development__logout_digitanium+_shift.md, block 1, lines 40-45, unchanged, in `extension SampleApp`. Swift 6 mode.
import Foundation
import McSdk

extension SampleApp {
func triggerClearIAMTokenCache(useridentifier: KsUserIdentifier, completion:@escaping(KsEvent?) -> Void){
let clearIamToken = KSMClearIamTokenCacheEvent(userIdentifier: useridentifier)
masterControllerAdapter.sendEvent2MasterController(clearIamToken) { event in
completion(event)
}
}
}
