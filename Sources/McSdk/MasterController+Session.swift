import Foundation
import IdpPrimitives

/// What a plain Start or Restart says about the app.
enum AppIdentity {
    static func problem(locale: String, appName: String) -> (KSMEventStatusType, String)? {
        (KSMSsmsAppConfiguration.localeProblem(locale) ?? KSMSsmsAppConfiguration.nameProblem(appName)).map { (.kInvalidParameter, $0) }
    }

    static func configuration(locale: String, appName: String) -> KSMSsmsAppConfiguration {
        KSMSsmsAppConfiguration(locale: locale, version: KSMVersion(majorVersion: 0, minorVersion: 0, build: 0), name: appName, sdkconfig: Data())
    }
}

extension MasterController {
    /// Start: statuses kOk, kInvalidParameter (the event's values), kFailed (an unsimulated
    /// backend), kInvalidState (an event still waiting on the IDP), kInternalError (the device
    /// storage fails). A failed Start changes nothing.
    func start(problem: (KSMEventStatusType, String)?, configuration app: KSMSsmsAppConfiguration) -> KSMStartResultEvent {
        if let (status, text) = problem ?? refusalToInitialise() {
            return KSMStartResultEvent(status: status, errorDescription: text, sdkState: started ? currentState : .uninitialised, userList: started ? store.userList : [])
        }
        let (state, users) = reinitialise(app)
        announceLogin(users)
        return KSMStartResultEvent(status: .kOk, sdkState: state, userList: users)
    }

    /// Restart: the statuses of Start, and kInvalidState before Start.
    func restart(problem: (KSMEventStatusType, String)?, configuration app: KSMSsmsAppConfiguration?) -> KSMRestartResultEvent {
        guard started else {
            return KSMRestartResultEvent(status: .kInvalidState, errorDescription: "post a KSMStartEvent before KSMRestartEvent", sdkState: .uninitialised, userList: [])
        }
        if let (status, text) = problem ?? refusalToInitialise() {
            return KSMRestartResultEvent(status: status, errorDescription: text, sdkState: currentState, userList: store.userList)
        }
        let (state, users) = reinitialise(app ?? appConfiguration)
        announceLogin(users)
        return KSMRestartResultEvent(status: .kOk, sdkState: state, userList: users)
    }

    /// The MC restarts itself after a lost connection could not be re-established: the listeners
    /// get the Restart result (and a StartLogin if users are activated).
    func automatedRestart() {
        guard started else { return }
        let (state, users) = reinitialise(appConfiguration)
        feed.post(KSMRestartResultEvent(status: .kOk, sdkState: state, userList: users))
        announceLogin(users)
    }

    /// After a successful (re)start with activated users, listeners learn the SDK is ready for a login.
    private func announceLogin(_ users: [KsUserIdentifier]) {
        if !users.isEmpty { feed.post(KSMStartLoginEvent(userList: users)) }
    }

    private func refusalToInitialise() -> (KSMEventStatusType, String)? {
        if eventsWaitingOnIdp > 0 {
            return (.kInvalidState, "\(eventsWaitingOnIdp) event(s) still wait on the IDP; wait for their results before (re)starting")
        }
        if store.isFailing { return (.kInternalError, "the device storage could not be read") }
        return nil
    }

    private var currentState: KSMSdkState { store.userList.isEmpty ? .activationRequired : .loginRequired }

    /// Start and Restart: every user must log in again; the stored tokens stay.
    private func reinitialise(_ app: KSMSsmsAppConfiguration?) -> (KSMSdkState, [KsUserIdentifier]) {
        started = true
        loggedIn = []
        lastLoggedIn = nil
        appConfiguration = app
        let users = store.userList
        return (users.isEmpty ? .activationRequired : .loginRequired, users)
    }

    /// GetState: what the MC waits for.
    func getState() -> any KsMacroEvent {
        guard started else { return KSMInvalidStateEvent(errorMessage: "the MasterController is not started; post a KSMStartEvent") }
        let users = store.userList
        if !users.isEmpty, loggedIn.isEmpty { return KSMStartLoginEvent(userList: users) }
        return KSMStartResultEvent(status: .kOk, sdkState: currentState, userList: users)
    }

    /// GetInformation: always kOk after Start (no documented status); InvalidState before.
    func getInformation() -> any KsMacroEvent {
        guard started else { return KSMInvalidStateEvent(errorMessage: "post a KSMStartEvent before KSMGetInformationEvent") }
        let clientId = lastLoggedIn.flatMap { store.tokens(for: $0)?.clientId } ?? ""
        return KSMGetInformationResultEvent(
            sdkVersion: Self.sdkVersion, ssmsAppConfiguration: appConfiguration, loggedInUser: lastLoggedIn,
            iamConfigurationData: KsIamConfigurationData(clientId: clientId, serverUrl: configuration.idpUrl,
                                                         certificateChain: configuration.certificateChain ?? Data(),
                                                         redirectUri: configuration.redirectUri))
    }

    /// ConfigurationEvent: may come before Start (the tracing page asks for that).
    func configure(_ event: KSMConfigurationEvent) -> KSMStatusResultEvent {
        guard event.exporterUrl.hasPrefix("https://"), URL(string: event.exporterUrl)?.host != nil else {
            return KSMStatusResultEvent(status: .kInvalidParameter, errorDescription: "exporterUrl '\(event.exporterUrl)' is not an https URL")
        }
        exporterUrl = event.exporterUrl
        return KSMStatusResultEvent(status: .kOk, errorDescription: "")
    }

    /// EnableOpenCensusTracing: only after Start.
    func enableTracing(_ event: KSMEnableOpenCensusTracingEvent) -> any KsMacroEvent {
        guard started else { return KSMInvalidStateEvent(errorMessage: "KSMEnableOpenCensusTracingEvent may only be sent after the Start result") }
        tracingEnabled = event.tracingEnabled
        return KSMStatusResultEvent(status: .kOk, errorDescription: "")
    }
}
