// The facts behind the status table of the McSdk article "MC statuses" (McStatuses.md): for every result event the MasterController sends,
// each status it can carry, the trigger that produces it in the simulation, and (in
// StatusCatalogueTests) a test that runs the trigger and checks the status. Statuses no simulated
// event produces are listed with the documented events they belong to and why those are absent.
import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
@testable import McSdk
import StackTestSupport
import TestSupport

/// One status of one result event, and how the simulation produces it.
struct StatusFact: Sendable, CustomStringConvertible {
    let event: String
    let status: KSMEventStatusType
    /// What makes the MC answer with it.
    let trigger: String
    /// Whether the documents list this status for the event (`false`: the documents list none for
    /// the event, and the status is this simulation's choice).
    let documented: Bool
    /// Runs the trigger; returns the status produced and the error code.
    let produce: @Sendable () async throws -> (status: KSMEventStatusType, errorCode: Int)
    /// The error code the documents prescribe for this case, if any.
    var errorCode: Int? = nil

    var description: String { "\(event)/\(status)" }
}

/// The documented result events the simulation does not have, with the statuses the documents
/// list for them (ast_event_list.md): why a status may be absent here.
let unsimulatedEvents: [(event: String, why: String, statuses: [KSMEventStatusType])] = [
    ("LoginResult", "SSMS (KOBIL Digitanium) login; Shift Lite logs in through the IdpSdk", [.kUpdateAvailable, .kUpdateNecessary, .kUnknownVersion, .kUnknownClientType, .kWrongCredentials, .kUnknownCertificate, .kLockedCertificate, .kLockedUser, .kRegisterApp, .kNotReachable]),
    ("ActivationResult / AddUserResult / ReactivationResult", "SSMS activation; Shift Lite activates through the IdpSdk", [.kAppRegistered, .kActivationCodeExpired, .kUserIdAlreadyExists, .kMismatchedUser, .kTenantIdAlreadySet, .kGlobalPinSet, .kUpdateAvailableGlobalPinSet]),
    ("ChangePINResult / ProvidePINResult", "the MC's own PIN (not the IDP password) is not simulated", [.kUserCancel, .kInvalidPin, .kUserConfirmationTimeout]),
    ("DisplayConfirmationResult / ProvideTokenResult / TransactionEnd", "transactions are not simulated", [.kServerCancel, .kInvalidToken]),
    ("GetPropertyResult / SetPropertyResult", "the property store is not simulated", [.kPropertyNotExists, .kInvalidKeyLength, .kAccessDenied, .kUninitialized, .kReadOnly, .kNotUnique, .kTextTooLong, .kNegative]),
    ("GetIAMAccessTokenResult", "the MC never hands out its access token (tokens overview); apps use ExchangeIamToken", [.kCannotAcquireAccessTokenForAuthorizationCode]),
]

/// A device (one MasterController) on the test's IDP, started, with uma activated in `mode`.
struct CatalogueDevice {
    let idp: TestIDP
    let mc: MasterController
    let store: McTokenStore
    let transport: SwitchableTransport
    let uma = KsUserIdentifier(tenantId: "demo", userId: "uma")

    static func activated(mode: KSMAuthenticationMode = .no, prompt: (any BiometricPrompt)? = nil, lockout: LockoutPolicy = .disabled) async -> CatalogueDevice {
        let device = started(prompt: prompt, lockout: lockout)
        _ = await device.idp.activate("uma", password: "pw-uma-1", on: device.mc, mode: mode)
        return device
    }

    static func started(prompt: (any BiometricPrompt)? = nil, lockout: LockoutPolicy = .disabled) -> CatalogueDevice {
        let idp = TestIDP(lockout: lockout)
        let store = McTokenStore()
        let transport = SwitchableTransport(InProcessTransport(server: idp.server))
        let mc = idp.masterController(store: store, transport: transport, biometricPrompt: prompt, refreshTimeout: .seconds(600))
        return CatalogueDevice(idp: idp, mc: mc, store: store, transport: transport)
    }

    func start() async { _ = await mc.receive(KSMStartEvent()) }

    /// Uma fails a login with a wrong password (for lockout).
    func wrongLogin() async {
        let wrong = ClosureProvider { data in
            data.previousError == nil ? .init(credentials: ["username": "uma", "password": "wrong"]) : .init(error: IdpSdkError("test", 1, "stop"))
        }
        _ = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: wrong, userId: "uma")
    }

    func offlineLogin(_ user: KsUserIdentifier? = nil) async -> KSMOfflineLoginResultEvent {
        await mc.receive(KSMOfflineLoginEvent(userIdentifier: user)) as! KSMOfflineLoginResultEvent
    }

    func exchange(_ audience: String = "banking-api", forceUpdate: Bool = false) async -> any KsMacroEvent {
        await mc.receive(KSMExchangeIamTokenEvent(audience: audience, forceUpdate: forceUpdate))
    }

    /// An authorization code for a new pending user, with the MC's pending PKCE verifier.
    func enrollmentCode(_ userId: String = "vic") async throws -> String {
        let code = idp.pendingUser(userId)
        let ast = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo")) as! KSMGetAstClientDataResultEvent
        let result = await idp.sdk().run(AstClientDataInfo(astClientData: ast), clientId: "KssIdpEnrollment",
                                         provider: TableProvider(["username": userId, "activation-code": code, "password": "pw-\(userId)-1"]))
        guard let authorizationCode = result.authorizationCode else { throw CatalogueError("no code: \(result)") }
        return authorizationCode
    }

    func set(_ code: String, mode: KSMAuthenticationMode = .no) async -> KSMSetAuthorisationCodeResultEvent {
        await mc.receive(KSMSetAuthorisationCodeEvent(tenantId: "demo", authenticationMode: mode, authorisationCode: code,
                                                      clientId: "KssIdpEnrollment")) as! KSMSetAuthorisationCodeResultEvent
    }
}

struct CatalogueError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A transport that can be switched to lose every connection, and to hold requests.
final class SwitchableTransport: Transport, Sendable {
    private let inner: HoldingTransport
    private let losing = LockedValue(false)
    init(_ inner: any Transport) { self.inner = HoldingTransport(inner) }

    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        if losing.withLock({ $0 }) { return completion(.failure(TransportError(.connectionLost, "connection reset by peer"))) }
        inner.send(request, completion: completion)
    }

    func loseConnections(_ lose: Bool) { losing.withLock { $0 = lose } }
    func hold() { inner.hold() }
    func release() { inner.release() }
    var heldCount: Int { inner.heldCount }
}

/// Downcasts a result to a documented result event, or fails with what came instead.
func statusOf(_ event: any KsMacroEvent) throws -> (status: KSMEventStatusType, errorCode: Int) {
    guard let result = event as? any KSMResultEvent else { throw CatalogueError("not a result event: \(event)") }
    return (result.status, result.errorCode)
}

let statusFacts: [StatusFact] = startFacts + restartFacts + astFacts + setCodeFacts + offlineFacts + exchangeFacts + otherFacts + loginAfterRestartFacts

private let startFacts: [StatusFact] = {
    let event = "StartResult"
    @Sendable func ex(backend: String) -> KSMStartEventEx {
        KSMStartEventEx(serverBackend: backend, ssmsAppConfiguration: KSMSsmsAppConfiguration(
            locale: "de-CH", version: KSMVersion(majorVersion: 1, minorVersion: 2, build: 3), name: "Banking", sdkconfig: Data()),
            mcConfig: "{}", certificateChain: Data())
    }
    return [
        StatusFact(event: event, status: .kOk, trigger: "Start (or StartEventEx with serverBackend \"maverick\")", documented: true) {
            try statusOf(await CatalogueDevice.started().mc.receive(ex(backend: "maverick")))
        },
        StatusFact(event: event, status: .kInternalError, trigger: "the device storage fails (`McTokenStore.simulateStorageFailure(true)`)", documented: true) {
            let device = CatalogueDevice.started()
            device.store.simulateStorageFailure(true)
            return try statusOf(await device.mc.receive(KSMStartEvent()))
        },
        StatusFact(event: event, status: .kInvalidState, trigger: "Start while a SetAuthorisationCode still waits on the IDP", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            let code = try await device.enrollmentCode()
            device.transport.hold()
            let waiting = Task { await device.set(code) }
            guard await eventually({ device.transport.heldCount == 1 }) else { throw CatalogueError("the token request never went out") }
            let result = try statusOf(await device.mc.receive(KSMStartEvent()))
            device.transport.release()
            _ = await waiting.value
            return result
        },
        StatusFact(event: event, status: .kInvalidParameter, trigger: "StartEventEx with serverBackend \"nosql\" (also: a locale that is no language tag, an app name over 32 bytes, mcConfig that is no JSON object)", documented: true) {
            try statusOf(await CatalogueDevice.started().mc.receive(ex(backend: "nosql")))
        },
        StatusFact(event: event, status: .kFailed, trigger: "StartEventEx with serverBackend \"ssms\" (KOBIL Digitanium is not simulated)", documented: true) {
            try statusOf(await CatalogueDevice.started().mc.receive(ex(backend: "ssms")))
        },
    ]
}()

private let restartFacts: [StatusFact] = {
    let event = "RestartResult"
    @Sendable func ex(backend: String = "maverick", locale: String = "en") -> KSMRestartEventEx {
        KSMRestartEventEx(serverBackend: backend, ssmsAppConfiguration: KSMSsmsAppConfiguration(
            locale: locale, version: KSMVersion(majorVersion: 1, minorVersion: 0, build: 0), name: "Banking", sdkconfig: Data()),
            mcConfig: "", certificateChain: Data())
    }
    return [
        StatusFact(event: event, status: .kOk, trigger: "Restart after Start", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            return try statusOf(await device.mc.receive(KSMRestartEvent()))
        },
        StatusFact(event: event, status: .kInternalError, trigger: "the device storage fails", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            device.store.simulateStorageFailure(true)
            return try statusOf(await device.mc.receive(KSMRestartEvent()))
        },
        StatusFact(event: event, status: .kInvalidState, trigger: "Restart before Start", documented: true) {
            try statusOf(await CatalogueDevice.started().mc.receive(KSMRestartEvent()))
        },
        StatusFact(event: event, status: .kInvalidParameter, trigger: "RestartEventEx with locale \"english\"", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            return try statusOf(await device.mc.receive(ex(locale: "english")))
        },
        StatusFact(event: event, status: .kFailed, trigger: "RestartEventEx with serverBackend \"ssms\"", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            return try statusOf(await device.mc.receive(ex(backend: "ssms")))
        },
    ]
}()

private let astFacts: [StatusFact] = {
    let event = "GetAstClientDataResult"
    return [
        StatusFact(event: event, status: .kOk, trigger: "GetAstClientData after Start", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            return try statusOf(await device.mc.receive(KSMGetAstClientDataEvent(tenantId: "demo")))
        },
        StatusFact(event: event, status: .kInternalError, trigger: "the device storage fails", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            device.store.simulateStorageFailure(true)
            return try statusOf(await device.mc.receive(KSMGetAstClientDataEvent(tenantId: "demo")))
        },
        StatusFact(event: event, status: .kInvalidState, trigger: "GetAstClientData before Start", documented: true) {
            try statusOf(await CatalogueDevice.started().mc.receive(KSMGetAstClientDataEvent(tenantId: "demo")))
        },
        StatusFact(event: event, status: .kFailed, trigger: "an empty tenant id", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            return try statusOf(await device.mc.receive(KSMGetAstClientDataEvent(tenantId: "")))
        },
    ]
}()

private let setCodeFacts: [StatusFact] = {
    let event = "SetAuthorisationCodeResult"
    return [
        StatusFact(event: event, status: .kOk, trigger: "the code of a completed enrollment", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            return (await device.set(try await device.enrollmentCode())).statusAndCode
        },
        StatusFact(event: event, status: .kInternalError, trigger: "the device storage fails", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            let code = try await device.enrollmentCode()
            device.store.simulateStorageFailure(true)
            return (await device.set(code)).statusAndCode
        },
        StatusFact(event: event, status: .kInvalidState, trigger: "no GetAstClientData pending (or before Start)", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            return (await device.set("some-code")).statusAndCode
        },
        StatusFact(event: event, status: .kFailed, trigger: "BIOMETRIC and the biometric prompt is cancelled: `errorCode` 802000000 + 128 (also: an empty parameter, a code of another user)", documented: true, produce: {
            let device = CatalogueDevice.started(prompt: ScriptedBiometricPrompt([.failure(.userCanceled)]))
            await device.start()
            return (await device.set(try await device.enrollmentCode(), mode: .BIOMETRIC)).statusAndCode
        }, errorCode: 802_000_128),
        StatusFact(event: event, status: .kCannotAcquireTokenData, trigger: "the IDP refuses the code (unknown, expired, reused, wrong verifier) or cannot be reached", documented: true) {
            let device = CatalogueDevice.started()
            await device.start()
            _ = try await device.enrollmentCode()
            return (await device.set("not-a-code")).statusAndCode
        },
    ]
}()

private let offlineFacts: [StatusFact] = {
    let event = "OfflineLoginResult"
    return [
        StatusFact(event: event, status: .kOk, trigger: "an activated user after a restart, with stored tokens", documented: true) {
            let device = await CatalogueDevice.activated()
            _ = await device.mc.receive(KSMRestartEvent())
            return (await device.offlineLogin(device.uma)).statusAndCode
        },
        StatusFact(event: event, status: .kInternalError, trigger: "the device storage fails", documented: true) {
            let device = await CatalogueDevice.activated()
            device.store.simulateStorageFailure(true)
            return (await device.offlineLogin(device.uma)).statusAndCode
        },
        StatusFact(event: event, status: .kInvalidState, trigger: "OfflineLogin before Start", documented: true) {
            (await CatalogueDevice.started().offlineLogin()).statusAndCode
        },
        StatusFact(event: event, status: .kInvalidParameter, trigger: "a user identifier with an empty user id", documented: true) {
            let device = await CatalogueDevice.activated()
            return (await device.offlineLogin(KsUserIdentifier(tenantId: "demo", userId: ""))).statusAndCode
        },
        StatusFact(event: event, status: .kFailed, trigger: "BIOMETRIC, after CLEAR_ACCESS_AND_REFRESH, and the prompt fails: `errorCode` 802000000 + 25293", documented: true, produce: {
            let device = await CatalogueDevice.activated(mode: .BIOMETRIC, prompt: ScriptedBiometricPrompt([.success, .failure(.authFailed)]))
            _ = await device.mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: device.uma, clearBehavior: .CLEAR_ACCESS_AND_REFRESH))
            return (await device.offlineLogin(device.uma)).statusAndCode
        }, errorCode: 802_025_293),
        StatusFact(event: event, status: .kInvalidUserId, trigger: "a user not activated on the device (or none given and nobody logged in yet)", documented: true) {
            let device = await CatalogueDevice.activated()
            return (await device.offlineLogin(KsUserIdentifier(tenantId: "demo", userId: "ghost"))).statusAndCode
        },
        StatusFact(event: event, status: .kTemporaryLocked, trigger: "the access token expired and the IDP refuses the refresh: the account is locked", documented: true) {
            let device = await CatalogueDevice.activated(lockout: LockoutPolicy(maximumFailures: 1, lockoutDuration: .seconds(3600)))
            await device.wrongLogin()
            device.idp.clock.advance(by: .seconds(301))
            return (await device.offlineLogin(device.uma)).statusAndCode
        },
        StatusFact(event: event, status: .kPinBlocked, trigger: "as above, with a permanent lock", documented: true) {
            let device = await CatalogueDevice.activated(lockout: LockoutPolicy(maximumFailures: 5, permanentLockoutAfterTotalFailures: 1))
            await device.wrongLogin()
            device.idp.clock.advance(by: .seconds(301))
            return (await device.offlineLogin(device.uma)).statusAndCode
        },
        StatusFact(event: event, status: .kLoginRequired, trigger: "the IDP refuses the stored tokens: past Offline Session Max (also revoked, reused)", documented: true) {
            let device = await CatalogueDevice.activated()
            device.idp.clock.advance(by: .seconds(31 * 24 * 3600))
            return (await device.offlineLogin(device.uma)).statusAndCode
        },
        StatusFact(event: event, status: .kOfflineNotActivated, trigger: "the user activated with AuthenticationMode PASSWORD or PIN, which have no offline login", documented: true) {
            let device = await CatalogueDevice.activated(mode: .PASSWORD)
            return (await device.offlineLogin(device.uma)).statusAndCode
        },
        StatusFact(event: event, status: .kNoTokenDataAvailable, trigger: "after ClearIamTokenCache CLEAR_ALL (logout)", documented: true) {
            let device = await CatalogueDevice.activated()
            _ = await device.mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: device.uma))
            return (await device.offlineLogin(device.uma)).statusAndCode
        },
        StatusFact(event: event, status: .kCannotAcquireTokenData, trigger: "the access token expired and the connection to the IDP is lost (the MC retries once)", documented: true) {
            let device = await CatalogueDevice.activated()
            device.idp.clock.advance(by: .seconds(301))
            device.transport.loseConnections(true)
            return (await device.offlineLogin(device.uma)).statusAndCode
        },
    ]
}()

private let exchangeFacts: [StatusFact] = {
    let event = "ExchangeIamTokenResult"
    return [
        StatusFact(event: event, status: .kOk, trigger: "a logged-in user, audience \"banking-api\"", documented: false) {
            try statusOf(await CatalogueDevice.activated().exchange())
        },
        StatusFact(event: event, status: .kInvalidParameter, trigger: "an empty audience", documented: false) {
            try statusOf(await CatalogueDevice.activated().exchange(""))
        },
        StatusFact(event: event, status: .kFailed, trigger: "the audience is the login's own client (its token would carry the 'ast-client' role): `errorCode` 800000287, as documented", documented: false, produce: {
            try statusOf(await CatalogueDevice.activated().exchange("KssIdpEnrollment"))
        }, errorCode: 800_000_287),
        StatusFact(event: event, status: .kNoTokenDataAvailable, trigger: "logged in with the offline token, which was then cleared (CLEAR_OFFLINE), and the access token expired", documented: false) {
            let device = await CatalogueDevice.activated()
            _ = await device.mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: device.uma, clearBehavior: .CLEAR_ACCESS_AND_REFRESH))
            _ = await device.offlineLogin(device.uma)
            _ = await device.mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: device.uma, clearBehavior: .CLEAR_OFFLINE))
            device.idp.clock.advance(by: .seconds(301))
            return try statusOf(await device.exchange())
        },
        StatusFact(event: event, status: .kTokenDataIsOutdated, trigger: "the access token expired and the IDP refuses the refresh (the refresh token expired)", documented: false) {
            let device = await CatalogueDevice.activated()
            device.idp.clock.advance(by: .seconds(1801))
            return try statusOf(await device.exchange())
        },
        StatusFact(event: event, status: .kTemporaryLocked, trigger: "the access token expired and the account is locked", documented: false) {
            let device = await CatalogueDevice.activated(lockout: LockoutPolicy(maximumFailures: 1, lockoutDuration: .seconds(3600)))
            await device.wrongLogin()
            device.idp.clock.advance(by: .seconds(301))
            return try statusOf(await device.exchange())
        },
        StatusFact(event: event, status: .kCannotAcquireTokenData, trigger: "the connection to the IDP is lost", documented: false) {
            let device = await CatalogueDevice.activated()
            device.transport.loseConnections(true)
            return try statusOf(await device.exchange())
        },
        StatusFact(event: event, status: .kInternalError, trigger: "the device storage fails", documented: false) {
            let device = await CatalogueDevice.activated()
            device.store.simulateStorageFailure(true)
            return try statusOf(await device.exchange())
        },
    ]
}()

private let otherFacts: [StatusFact] = [
    StatusFact(event: "ClearIamTokenCacheResult", status: .kOk, trigger: "any ClearIamTokenCache after Start (for a user not on the device it clears nothing and says so)", documented: false) {
        let device = await CatalogueDevice.activated()
        return try statusOf(await device.mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: device.uma)))
    },
    StatusFact(event: "GetInformationResult", status: .kOk, trigger: "GetInformation after Start", documented: false) {
        let device = await CatalogueDevice.activated()
        return try statusOf(await device.mc.receive(KSMGetInformationEvent()))
    },
    StatusFact(event: "StatusResult", status: .kOk, trigger: "ConfigurationEvent with an https exporter URL; EnableOpenCensusTracingEvent after Start", documented: true) {
        let device = CatalogueDevice.started()
        return try statusOf(await device.mc.receive(KSMConfigurationEvent(exporterUrl: "https://traces.example.test", userName: "u", password: "p", serverCertificate: Data())))
    },
    StatusFact(event: "StatusResult", status: .kNotSupported, trigger: "an event the MasterController does not simulate", documented: true) {
        try statusOf(await CatalogueDevice.started().mc.receive(UnsimulatedEvent()))
    },
    StatusFact(event: "StatusResult", status: .kInvalidParameter, trigger: "ConfigurationEvent with an exporter URL that is not https", documented: true) {
        try statusOf(await CatalogueDevice.started().mc.receive(KSMConfigurationEvent(exporterUrl: "http://traces.example.test", userName: "u", password: "p", serverCertificate: Data())))
    },
]

private final class UnsimulatedEvent: KsMacroEvent {
    var traceContext: TraceContext? { get { nil } set {} }
}

/// `loginAfterRestart` is IdpHarness's own API; its statuses map IdpSdk failures onto MC statuses.
private let loginAfterRestartFacts: [StatusFact] = {
    let event = "loginAfterRestart (IdpHarness's own)"
    @Sendable func afterLogout(password: String, sdk: (@Sendable (TestIDP) -> IdpSdkService)? = nil, clientId: String = "KssIdpLogin", lockout: LockoutPolicy = .disabled) async -> (status: KSMEventStatusType, errorCode: Int) {
        let device = await CatalogueDevice.activated(lockout: lockout)
        _ = await device.mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: device.uma))
        let provider = TableProvider(["username": "uma", "password": password])
        let result = await device.mc.loginAfterRestart(device.uma, authenticationMode: .no, idpSdk: sdk?(device.idp) ?? device.idp.sdk(),
                                                       clientId: clientId, interactionInterface: provider)
        return (result.status, 0)
    }
    return [
        StatusFact(event: event, status: .kWrongCredentials, trigger: "after a logout, the fresh login's password is wrong as often as the client allows", documented: false) {
            await afterLogout(password: "wrong")
        },
        StatusFact(event: event, status: .kNotReachable, trigger: "after a logout, no IDP answers at the IdpSdk's URL", documented: false) {
            await afterLogout(password: "pw-uma-1") { _ in
                IdpSdkService(tenantId: "demo", idpUrl: "https://nowhere.test", certificateChain: Data(), shouldHashPin: false)
            }
        },
        StatusFact(event: event, status: .kConnectionLost, trigger: "after a logout, the IdpSdk's connection breaks", documented: false) {
            await afterLogout(password: "pw-uma-1") { idp in
                IdpSdkService(tenantId: "demo", idpUrl: idp.url, certificateChain: Data(), shouldHashPin: false, configuration: .init(),
                              transport: FaultyTransport(inner: nil) { _ in .failure(TransportError(.connectionLost, "reset")) })
            }
        },
        StatusFact(event: event, status: .kTemporaryLocked, trigger: "after a logout, a wrong password locks the account", documented: false) {
            await afterLogout(password: "wrong", lockout: LockoutPolicy(maximumFailures: 1, lockoutDuration: .seconds(60)))
        },
        StatusFact(event: event, status: .kCannotAcquireAuthorizationCode, trigger: "after a logout, the login client is unknown to the IDP", documented: false) {
            await afterLogout(password: "pw-uma-1", clientId: "NoSuchClient")
        },
    ]
}()

extension KSMResultEvent {
    var statusAndCode: (status: KSMEventStatusType, errorCode: Int) { (status, errorCode) }
}

/// The status table of the McSdk article "MC statuses", rendered from ``statusFacts`` and ``unsimulatedEvents``.
func renderStatusTable() -> String {
    var lines = [
        "| status | result event | trigger here | test |",
        "|---|---|---|---|",
    ]
    for fact in statusFacts {
        let listed = fact.documented ? "" : " ¹"
        lines.append("| `\(fact.status)` | \(fact.event)\(listed) | \(fact.trigger) | `statusComesWhereDocumented` (\(fact.event)/\(fact.status)) |")
    }
    lines.append("")
    lines.append("¹ The documents list no statuses for this result (or it is IdpHarness's own API); the statuses are this simulation's choice.")
    lines.append("")
    let produced = Set(statusFacts.map(\.status))
    lines.append("Statuses no simulated event produces, and the documented events they belong to:")
    lines.append("")
    lines.append("| status | documented for | why not here |")
    lines.append("|---|---|---|")
    for status in KSMEventStatusType.allCases where !produced.contains(status) {
        let owners = unsimulatedEvents.filter { $0.statuses.contains(status) }
        let events = owners.map(\.event).joined(separator: "; ")
        let why = owners.map(\.why).joined(separator: "; ")
        lines.append("| `\(status)` | \(events.isEmpty ? "no event's list" : events) | \(why.isEmpty ? "the documents list it for no event" : why) |")
    }
    return lines.joined(separator: "\n")
}
