// Verbatim from the vendor page shift-lite-idpsdk__development__tokens__token-handling__auth_modes_and_biometry.md, block 1, lines 63-155, unchanged but for its 2 "..." lines, which stand for
// code the page leaves out; in `extension SampleApp`. Swift 5 mode. Below it, marked, entry
// points for the tests, because the first function is private.
import Foundation
import McSdk

extension SampleApp {
private func handleOfflineLoginresult(userIdentifier: KsUserIdentifier, resultEvent: KSMOfflineLoginResultEvent){
switch resultEvent.status {
case .KSMOK:
DispatchQueue.global(qos: .background).async {
self.triggerGetInformation()
}
DispatchQueue.main.async {
InterfaceDelegate.sharedInterface.showTabBar()
}
default:
DispatchQueue.main.asyncAfter(deadline: .now() + 0.8) {
let errorCode = resultEvent.errorCode - 802000000
if let biometricError = BiometricError(rawValue: errorCode) {
guard biometricError != .userCanceled,
biometricError != .userCanceledSE,
biometricError != .appCanceled,
biometricError != .systemCanceled else {
BiometryHelper.showDisableBiometryAlert() { [weak self] in
self?.restartLogin()
}
return
}
AlertPresenter().showAlertWith(
title: biometricError.title(),
message: biometricError.errorDescription(),
completion: nil
)
}
self.restartLogin()
}
}
}
enum BiometricError: Int {
case authFailed = 25293
case duplicateItem = 25299
case param = 50
case publicKeyInconsistent = 67811
case userCanceled = 128
case userCanceledSE = 2
case systemCanceled = 4
case appCanceled = 9
case biometryLockout = 8
func stringValue() -> String {
return "\(self)"
}
func title() -> String {
return "OSStatus: \(self.rawValue * -1)"
}
func errorDescription() -> String {
switch self {
case .authFailed:
return "AuthFailed (\(self.rawValue)) Authorization and/or authentication failed."
case .param:
return "Param (\(self.rawValue)) One or more parameters passed to the function are not valid."
case .publicKeyInconsistent:
return "PublicKeyInconsistent (\(self.rawValue)) Fingerprint is not configured. Do you want to enroll biometry now, or change authentication mode to password?"
case .userCanceled:
return "UserCanceled (\(self.rawValue)) User canceled the operation."
case .duplicateItem:
return "The item already exists"
case .userCanceledSE:
return "Authentication canceled (\(self.rawValue)) User canceled the operation."
case .systemCanceled:
return "Authentication canceled (\(self.rawValue)) The system canceled authentication."
case .appCanceled:
return "Authentication canceled (\(self.rawValue)) The app canceled authentication."
case .biometryLockout:
return "Biometry lockout (\(self.rawValue)) Biometry is locked because there were too many failed attempts."
}
}
}
func setAuthorizationResult(result: KSMSetAuthorisationCodeResultEvent) {
if result.status == .KSMOK {
DispatchQueue.global(qos: .background).async {
self.viewModel?.triggerGetInformation()
}
GlobalConstant.const.logedInUser = KsUserIdentifier(tenantId: GlobalConstant.const.tennatId, userId: "")
DispatchQueue.main.async {
InterfaceDelegate.sharedInterface.showTabBar()
}
} else {
let errorCode = result.errorCode - 802000000
if let biometricError = BiometricError(rawValue: errorCode) {
AlertPresenter().showAlertWith(title: biometricError.title(), message: biometricError.errorDescription(), completion: nil)
} else {
let error = ActivationLoginErrorHelper.getActivationLoginErrorForKSMEventStatusType(status: result.status)
AlertPresenter().showAlertWith(title: "KSMSetAuthorisationCodeResultEvent", message: error!.description, completion: nil)
}
viewModel?.getAstClientData(userIdentifier: userIdentifier, userType: userType)
}
}
}

// --- setup, not from the documents ---
extension SampleApp {
    func runHandleOfflineLoginResult(userIdentifier: KsUserIdentifier, resultEvent: KSMOfflineLoginResultEvent) {
        handleOfflineLoginresult(userIdentifier: userIdentifier, resultEvent: resultEvent)
    }
}
