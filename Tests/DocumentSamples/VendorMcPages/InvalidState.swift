// Verbatim from the vendor page shift-lite-idpsdk__development__invalid-state.md, block 1, lines 12-44, unchanged: the app adapter's method, in
// `extension MasterControllerAdapter` (its other members are in Setup.swift). Swift 5 mode.
import Foundation
import McSdk

extension MasterControllerAdapter {
/// send events to master controller
func sendEvent2MasterController(_ event: KsEvent, withCompletionHandler completionBlock: ((KsEvent?) -> Void)? = nil){
// use extra own concurrent queue to make sure nothing is blocked
self.concurrentQueueSendEvents.async {
// forward event to super event listener, independent of master controller initialization status
self.forwardEvent(event, to: self.superEventListeners)
// if not initialised, then master controller instance is not existing, so return
if self.isInitialized() == false {
return
}
guard let macroEvent = event as? KSMEvent else{return}
// log with a tag to easier find the log later in support cases
Logger.sharedLogger.logInfo(content: "\(self.loggingTag) send event now: \(type(of: macroEvent))",
context: "\(type(of: self)).\(#function)")
// MARK: send event to MC and receive event
self.masterController?.receive(event, withCompletionHandler: { (receivedEvent) in
// log with a tag to easier find the log later in support cases
Logger.sharedLogger.logInfo(content: "\(self.loggingTag) received event: \(type(of: receivedEvent)) (for sent event: \(type(of: macroEvent))",
context: "\(type(of: self)).\(#function)")
self.forwardEvent(event, to: self.eventListeners)
self.forwardEvent(event, to: self.superEventListeners)
Logger.sharedLogger.logInfo(content: "\(1234) receive event in callback: \(type(of: event))",
context: "\(type(of: self)).\(#function)")
if (receivedEvent is KSMInvalidStateEvent){
// Handle invalid state event. If you trigger get state event then you will receive the same event from master controller for which master controller is waiting for.
self.sendEvent2MasterController(KSMGetStateEventEvent()) { _ in
}
}else {
completionBlock?(receivedEvent)
}
})
}
}
}
