// Setup, not from the documents: the app-side helpers the invalid-state and auth-modes pages call
// (the sample app's classes), reduced to what the samples use. They record what the samples did,
// so the tests can check it. Each is Sendable, as an app's shared objects must be in Swift 6 mode:
// mutable state behind a lock.
import Foundation
import McSdk

/// What the samples did to the app's UI, for the tests.
final class AppRecord: Sendable {
    static let shared = AppRecord()
    private let entries = Locked<[String]>([])
    func note(_ entry: String) { entries.update { $0.append(entry) } }
    var all: [String] { entries.value }
}

/// A value behind an `NSLock` (the sample app's own, as an app would write it).
final class Locked<Value>: @unchecked Sendable {
    // Sound: `stored` is only reached with `lock` held.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
    func update(_ change: (inout Value) -> Void) { lock.lock(); change(&stored); lock.unlock() }
}

final class Logger: Sendable {
    static let sharedLogger = Logger()
    func logInfo(content: String, context: String) {}
}

/// The sample app's adapter around the MasterController; its `sendEvent2MasterController(_:withCompletionHandler:)`
/// is the invalid-state page's, verbatim, in InvalidState.swift.
final class MasterControllerAdapter: Sendable {
    static let sharedInstance = MasterControllerAdapter()
    private let controller = Locked<MasterController?>(nil)
    var masterController: MasterController? {
        get { controller.value }
        set { controller.value = newValue }
    }
    let concurrentQueueSendEvents = DispatchQueue(label: "sample.sendEvents", attributes: .concurrent)
    let eventListeners: [String] = []
    let superEventListeners: [String] = []
    let loggingTag = "[MC]"
    func isInitialized() -> Bool { masterController != nil }
    func forwardEvent(_ event: KsEvent, to listeners: [String]) { AppRecord.shared.note("forward \(type(of: event))") }
}

final class InterfaceDelegate: Sendable {
    static let sharedInterface = InterfaceDelegate()
    func showTabBar() { AppRecord.shared.note("showTabBar") }
}

enum BiometryHelper {
    static func showDisableBiometryAlert(_ completion: @escaping @Sendable () -> Void) { AppRecord.shared.note("showDisableBiometryAlert") }
}

struct AlertPresenter {
    func showAlertWith(title: String, message: String, completion: (() -> Void)?) { AppRecord.shared.note("alert \(title): \(message)") }
}

final class GlobalConstant: Sendable {
    static let const = GlobalConstant()
    private let user = Locked<KsUserIdentifier?>(nil)
    var logedInUser: KsUserIdentifier? {
        get { user.value }
        set { user.value = newValue }
    }
    let tennatId = "demo"
}

enum ActivationLoginErrorHelper {
    static func getActivationLoginErrorForKSMEventStatusType(status: KSMEventStatusType) -> KSMEventStatusType? { status }
}

enum UserType: Sendable { case newUser, existingUser }

final class SampleViewModel: Sendable {
    func triggerGetInformation() { AppRecord.shared.note("viewModel.triggerGetInformation") }
    func getAstClientData(userIdentifier: KsUserIdentifier, userType: UserType) { AppRecord.shared.note("viewModel.getAstClientData \(userIdentifier)") }
}

/// The app object the auth-modes page's functions belong to.
final class SampleApp: Sendable {
    private let state = Locked((viewModel: SampleViewModel?(SampleViewModel()), userIdentifier: KsUserIdentifier(tenantId: "demo", userId: ""), userType: UserType.newUser))
    var viewModel: SampleViewModel? {
        get { state.value.viewModel }
        set { state.update { $0.viewModel = newValue } }
    }
    var userIdentifier: KsUserIdentifier {
        get { state.value.userIdentifier }
        set { state.update { $0.userIdentifier = newValue } }
    }
    var userType: UserType {
        get { state.value.userType }
        set { state.update { $0.userType = newValue } }
    }

    func triggerGetInformation() { AppRecord.shared.note("triggerGetInformation") }
    func restartLogin() { AppRecord.shared.note("restartLogin") }
}
