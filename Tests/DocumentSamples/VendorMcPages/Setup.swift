// Setup, not from the documents: the app-side helpers the invalid-state and auth-modes pages call
// (the sample app's classes), reduced to what the samples use. They record what the samples did,
// so the tests can check it. Swift 5 mode, like the samples.
import Foundation
import McSdk

/// What the samples did to the app's UI, for the tests.
final class AppRecord {
    static let shared = AppRecord()
    private let lock = NSLock()
    private var entries: [String] = []
    func note(_ entry: String) { lock.lock(); entries.append(entry); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return entries }
}

final class Logger {
    static let sharedLogger = Logger()
    func logInfo(content: String, context: String) {}
}

/// The sample app's adapter around the MasterController; its `sendEvent2MasterController(_:withCompletionHandler:)`
/// is the invalid-state page's, verbatim, in InvalidState.swift.
final class MasterControllerAdapter {
    static let sharedInstance = MasterControllerAdapter()
    var masterController: MasterController?
    let concurrentQueueSendEvents = DispatchQueue(label: "sample.sendEvents", attributes: .concurrent)
    var eventListeners: [String] = []
    var superEventListeners: [String] = []
    let loggingTag = "[MC]"
    func isInitialized() -> Bool { masterController != nil }
    func forwardEvent(_ event: KsEvent, to listeners: [String]) { AppRecord.shared.note("forward \(type(of: event))") }
}

final class InterfaceDelegate {
    static let sharedInterface = InterfaceDelegate()
    func showTabBar() { AppRecord.shared.note("showTabBar") }
}

enum BiometryHelper {
    static func showDisableBiometryAlert(_ completion: @escaping () -> Void) { AppRecord.shared.note("showDisableBiometryAlert") }
}

struct AlertPresenter {
    func showAlertWith(title: String, message: String, completion: (() -> Void)?) { AppRecord.shared.note("alert \(title): \(message)") }
}

final class GlobalConstant {
    static let const = GlobalConstant()
    var logedInUser: KsUserIdentifier?
    var tennatId = "demo"
}

enum ActivationLoginErrorHelper {
    static func getActivationLoginErrorForKSMEventStatusType(status: KSMEventStatusType) -> KSMEventStatusType? { status }
}

enum UserType { case newUser, existingUser }

final class SampleViewModel {
    func triggerGetInformation() { AppRecord.shared.note("viewModel.triggerGetInformation") }
    func getAstClientData(userIdentifier: KsUserIdentifier, userType: UserType) { AppRecord.shared.note("viewModel.getAstClientData \(userIdentifier)") }
}

/// The app object the auth-modes page's functions belong to.
final class SampleApp {
    var viewModel: SampleViewModel? = SampleViewModel()
    var userIdentifier = KsUserIdentifier(tenantId: "demo", userId: "")
    var userType = UserType.newUser

    func triggerGetInformation() { AppRecord.shared.note("triggerGetInformation") }
    func restartLogin() { AppRecord.shared.note("restartLogin") }
}
