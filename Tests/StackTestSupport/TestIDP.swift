import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import McSdk
import Synchronization
import TestSupport

/// One in-process IDP at a URL of its own, with a tenant "demo", for one test.
public struct TestIDP: Sendable {
    public let server: IdpServer
    public let url: String
    public let tenant = "demo"
    public let clock: ManualClock

    #if DEBUG
    /// - Parameter plantedBug: A bug to plant in the server (debug builds only; see `PlantedBug`).
    package init(latency: Duration = .zero, secretEncoding: IdpServer.SecretEncoding = .plain, auditLogCapacity: Int = 100_000, lockout: LockoutPolicy = .disabled,
                 refreshTokenLifetime: Duration = .seconds(1800), plantedBug: PlantedBug?) {
        self.init(latency: latency, secretEncoding: secretEncoding, auditLogCapacity: auditLogCapacity, lockout: lockout,
                  refreshTokenLifetime: refreshTokenLifetime, adjust: { $0.plantedBug = PlantedBugSwitch(plantedBug) })
    }
    #endif

    public init(latency: Duration = .zero, secretEncoding: IdpServer.SecretEncoding = .plain, auditLogCapacity: Int = 100_000, lockout: LockoutPolicy = .disabled,
                refreshTokenLifetime: Duration = .seconds(1800)) {
        self.init(latency: latency, secretEncoding: secretEncoding, auditLogCapacity: auditLogCapacity, lockout: lockout,
                  refreshTokenLifetime: refreshTokenLifetime, adjust: { _ in })
    }

    private init(latency: Duration, secretEncoding: IdpServer.SecretEncoding, auditLogCapacity: Int, lockout: LockoutPolicy,
                 refreshTokenLifetime: Duration, adjust: (inout IdpServer.Configuration) -> Void) {
        clock = ManualClock()
        var configuration = IdpServer.Configuration(clock: clock, refreshTokenLifetime: refreshTokenLifetime, auditLogCapacity: auditLogCapacity, lockout: lockout)
        adjust(&configuration)
        server = IdpServer(configuration: configuration)
        url = "https://idp-\(UUID().uuidString.lowercased()).test"
        try! server.addTenant(tenant, secretEncoding: secretEncoding)
        IdpNetwork.shared.register(server, at: url, latency: latency)
    }

    /// An IdpSdkService bound to this IDP; with no configuration, on this IDP's clock, so that a
    /// flow times out only when a test moves the clock, however slow a loaded machine is.
    public func sdk(_ configuration: IdpSdkService.Configuration? = nil, shouldHashPin: Bool = false) -> IdpSdkService {
        IdpSdkService(tenantId: tenant, idpUrl: url, certificateChain: Data("test-certificate".utf8),
                      shouldHashPin: shouldHashPin, configuration: configuration ?? .init(clock: clock))
    }

    /// A MasterController on this IDP's clock; pass the `store` of an earlier one to simulate an
    /// app restart on the same device.
    public func masterController(store: McTokenStore = McTokenStore(), transport: (any Transport)? = nil,
                          biometricPrompt: (any BiometricPrompt)? = nil, refreshTimeout: Duration = .seconds(600)) -> MasterController {
        MasterController(configuration: .init(idpUrl: url, transport: transport, tokenStore: store, clock: clock,
                                              biometricPrompt: biometricPrompt, refreshTimeout: refreshTimeout))
    }

    /// How many entries of `event` the audit log holds.
    public func count(_ event: AuditEntry.Event) -> Int { server.auditLog().filter { $0.event == event }.count }

    /// Adds a user awaiting activation and returns one activation code.
    public func pendingUser(_ userId: String) -> String {
        try! server.addUser(userId, tenant: tenant)
        return try! server.issueActivationCode(for: userId, tenant: tenant)
    }

    /// Adds an active user with a password.
    public func activeUser(_ userId: String, password: String) {
        try! server.addUser(userId, tenant: tenant, password: password)
    }

    /// AST client data with a fresh PKCE pair, without an MC; returns the verifier too.
    public static func astClientData() -> (info: AstClientDataInfo, verifier: String) {
        let verifier = PKCE.makeVerifier()
        let info = AstClientDataInfo(clientData: SecureRandom.token(), astClientId: IdpServer.unassignedAstClientId,
                                     codeChallenge: PKCE.challenge(for: verifier), codeChallengeMethod: PKCE.methodS256)
        return (info, verifier)
    }
}

/// A provider that answers each requested field from a fixed table and records every call.
public final class TableProvider: IdpSdkInteractionInterface, Sendable {
    public let table: [String: String]
    public let calls = LockedValue<[IdpSdkInteractionData]>([])
    /// Calls that ran somewhere a provider must never run.
    public let misplacedCalls = Atomic<Int>(0)

    public init(_ table: [String: String]) { self.table = table }

    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if !IdpSdkService.isSDKThread || Thread.isMainThread || withUnsafeCurrentTask(body: { $0 != nil }) {
            misplacedCalls.add(1, ordering: .relaxed)
        }
        calls.withLock { $0.append(interactionData) }
        var credentials: [String: String] = [:]
        for id in interactionData.inputFieldIds { credentials[id] = table[id] }
        return .init(credentials: credentials)
    }

    public var recorded: [IdpSdkInteractionData] { calls.withLock { $0 } }
}

/// A provider built from a closure.
public struct ClosureProvider: IdpSdkInteractionInterface, Sendable {
    public let body: @Sendable (IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult
    public init(_ body: @escaping @Sendable (IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult) { self.body = body }
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { body(interactionData) }
}

/// A ``ClosureProvider`` that is told when a flow has ended and none of its calls runs any more
/// (`flowDidEnd`): past that, the engine does nothing more for the flow, so a test can judge
/// "exactly once" then, without waiting a fixed time.
public struct ObservingClosureProvider: IdpSdkFlowObserving, Sendable {
    public let body: @Sendable (IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult
    public let ended = LockedValue<[IdpSdkFlowID]>([])
    public let endedGate = Gate()
    public init(_ body: @escaping @Sendable (IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult) { self.body = body }
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { body(interactionData) }
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        ended.withLock { $0.append(flowId) }
        endedGate.open()
    }
}

/// Counts completions per flow, to prove exactly-once delivery.
public final class CompletionCounter: Sendable {
    private let counts = LockedValue<[IdpSdkFlowID: Int]>([:])
    private let total = Atomic<Int>(0)

    public init() {}

    public func record(_ result: IdpSdkResult) {
        total.add(1, ordering: .relaxed)
        if let id = result.flowId { counts.withLock { $0[id, default: 0] += 1 } }
    }

    public var completions: Int { total.load(ordering: .relaxed) }
    public var flowsCompletedMoreThanOnce: Int { counts.withLock { $0.values.filter { $0 > 1 }.count } }
}

extension IdpSdkService {
    /// The completion form, awaited; for tests that want the flow id handle too.
    public func run(_ info: AstClientDataInfo, clientId: String, provider: any IdpSdkInteractionInterface & Sendable, userId: String? = nil, traceParent: String? = nil) async -> IdpSdkResult {
        await getAuthorizationCode(withAstClientData: info, clientId: clientId, interactionInterface: provider, userId: userId, traceParent: traceParent)
    }
}

extension TestIDP {
    /// Activates a new user on `masterController` through the three documented steps; returns the
    /// SetAuthorisationCode status.
    @discardableResult
    public func activate(_ userId: String, password: String, on masterController: MasterController, sdk: IdpSdkService? = nil,
                  mode: KSMAuthenticationMode = .no, existingUserId: String? = nil) async -> KSMEventStatusType {
        let code = pendingUser(userId)
        let sdk = sdk ?? self.sdk()
        _ = await masterController.receive(KSMStartEvent())
        let ast = await masterController.receive(KSMGetAstClientDataEvent(tenantId: tenant)) as! KSMGetAstClientDataResultEvent
        let provider = TableProvider(["username": userId, "activation-code": code, "password": password])
        let result = await sdk.run(AstClientDataInfo(astClientData: ast), clientId: "KssIdpEnrollment", provider: provider, userId: existingUserId)
        guard let authorizationCode = result.authorizationCode else { return .kCannotAcquireAuthorizationCode }
        let set = await masterController.receive(KSMSetAuthorisationCodeEvent(
            tenantId: tenant, authenticationMode: mode, authorisationCode: authorizationCode, clientId: "KssIdpEnrollment"
        )) as! KSMSetAuthorisationCodeResultEvent
        return set.status
    }

    /// Logs an activated user in on `masterController` through the three documented steps (with
    /// `KssIdpLogin`); returns the SetAuthorisationCode status.
    @discardableResult
    public func login(_ userId: String, password: String, on masterController: MasterController, mode: KSMAuthenticationMode = .no) async -> KSMEventStatusType {
        let user = KsUserIdentifier(tenantId: tenant, userId: userId)
        let ast = await masterController.receive(KSMGetAstClientDataEvent(userIdentifier: user)) as! KSMGetAstClientDataResultEvent
        let result = await sdk().run(AstClientDataInfo(astClientData: ast), clientId: "KssIdpLogin",
                                     provider: TableProvider(["username": userId, "password": password]), userId: userId)
        guard let authorizationCode = result.authorizationCode else { return .kCannotAcquireAuthorizationCode }
        let set = await masterController.receive(KSMSetAuthorisationCodeEvent(
            userIdentifier: user, authenticationMode: mode, authorisationCode: authorizationCode, clientId: "KssIdpLogin"
        )) as! KSMSetAuthorisationCodeResultEvent
        return set.status
    }
}

public struct FaultyTransport: Transport {
    public let inner: (any Transport)?
    public let answer: @Sendable (HTTPRequest) -> Result<HTTPResponse, TransportError>?

    public init(inner: (any Transport)?, answer: @escaping @Sendable (HTTPRequest) -> Result<HTTPResponse, TransportError>?) {
        self.inner = inner
        self.answer = answer
    }

    public func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        if let canned = answer(request) {
            completion(canned)
        } else {
            inner?.send(request, completion: completion)
        }
    }
}

/// A transport in front of another that can hold requests (a slow or hung IDP) until released.
public final class HoldingTransport: Transport {
    public typealias Completion = @Sendable (Result<HTTPResponse, TransportError>) -> Void
    private let inner: any Transport
    private let state = LockedValue<(holding: Bool, held: [(HTTPRequest, Completion)])>((false, []))

    public init(_ inner: any Transport) { self.inner = inner }

    public func send(_ request: HTTPRequest, completion: @escaping Completion) {
        let held = state.withLock { state -> Bool in
            guard state.holding else { return false }
            state.held.append((request, completion))
            return true
        }
        if !held { inner.send(request, completion: completion) }
    }

    /// From now on, requests wait until ``release()``.
    public func hold() { state.withLock { $0.holding = true } }

    /// Sends every held request on, and stops holding.
    public func release() {
        let held = state.withLock { state in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for (request, completion) in held { inner.send(request, completion: completion) }
    }

    public var heldCount: Int { state.withLock { $0.held.count } }
}
