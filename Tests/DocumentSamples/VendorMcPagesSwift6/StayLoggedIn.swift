// Verbatim from the vendor page shift-lite-idpsdk__development__stay-logged-in.md, block 1, lines 77-114, unchanged, in `extension SampleApp`. Swift 6 mode.
import Foundation
import McSdk

extension SampleApp {
func performLoginOffline(loginRequest: LoginOfflineRequest, completion: @escaping (ActionResult) -> Void) {
let userIdentifier = KsUserIdentifier(tenantId: loginRequest.tenant, userId: loginRequest.userId)
let offlineEvent = KSMOfflineLoginEvent(userIdentifier: userIdentifier)
let timer = CallTimer(event: offlineEvent)
MasterControllerAdapter.sharedInstance.sendEvent2MasterController(event: offlineEvent) { newEvent in
let duration = timer.stop()
if let offlineResult = newEvent as? KSMOfflineLoginResultEvent {
let status = self.handleLoginOfflineStatus(status: offlineResult.status)
if status.success {
self.handleGetInformation(completion: { getInformationEvent in
guard let getInformationEvent else { return }
let loginResult = KSMLoginResultEvent(
loginStatus: .KSMOK,
andOtp: "",
with: getInformationEvent.loggedInUser,
withRetryCounter: 0,
withRetryDelay: 0
)
let actionResult = ActionResult(title: "Offline Login",
success: status.success,
error: status.errorText,
duration: duration,
event: loginResult)
EventLogObject(actionResult: actionResult, component: self.localizedTable)
completion(actionResult)
})
} else {
let actionResult = ActionResult(title: "Offline Login",
success: status.success,
error: status.errorText,
duration: duration,
event: nil)
EventLogObject(actionResult: actionResult, component: self.localizedTable)
completion(actionResult)
}
}
}
}
}
