// Verbatim from seeds/000 (web-view activation, iOS/Swift), lines 22-29 and 134-142, unchanged; the two methods sit in an `extension MaverickActivation`, the app class that holds `masterControllerAdapter` (setup); compiled in Swift 6 mode.
import McSdk

extension MaverickActivation {
public func getAstClientData(userIdentifer: KsUserIdentifier, completion: @escaping((KSMGetAstClientDataResultEvent) -> Void)){
let astClientData = KSMGetAstClientDataEvent(userIdentifier: userIdentifer)
self.masterControllerAdapter.sendEvent2MasterController(astClientData) { event in
guard let macroEvent = event as? KsMacroEvent else {return}
guard let resultEvent = macroEvent as? KSMGetAstClientDataResultEvent else{return}
completion(resultEvent)
}
}

//Set authorization code
public func setAuthorizationCode(userType: MaverickClientIdType, authorizationCode: String,userIdentifer: KsUserIdentifier,completion:@escaping((KSMSetAuthorisationCodeResultEvent) -> Void?)){
let setAuthorizationCodeEvent = KSMSetAuthorisationCodeEvent(userIdentifier: userIdentifer, authenticationMode: KSMAuthenticationMode.no, authorisationCode: authorizationCode, clientId: userType.clientId)
self.masterControllerAdapter.sendEvent2MasterController(setAuthorizationCodeEvent) { event in
guard let macroEvent = event as? KsMacroEvent else {return}
guard let resultEvent = macroEvent as? KSMSetAuthorisationCodeResultEvent else{return}
completion(resultEvent)
}
}
}
