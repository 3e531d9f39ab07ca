import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk
import Synchronization

/// One in-process IDP at a URL of its own, with a tenant "demo", for one test.
struct TestIDP {
    let server: IdpServer
    let url: String
    let tenant = "demo"
    let clock: ManualClock

    init(latency: Duration = .zero, secretEncoding: IdpServer.SecretEncoding = .plain, auditLogCapacity: Int = 100_000) {
        clock = ManualClock()
        server = IdpServer(configuration: .init(clock: clock, auditLogCapacity: auditLogCapacity))
        url = "https://idp-\(UUID().uuidString.lowercased()).test"
        try! server.addTenant(tenant, secretEncoding: secretEncoding)
        IdpNetwork.shared.register(server, at: url, latency: latency)
    }

    func sdk(_ configuration: IdpSdkService.Configuration = .init(), shouldHashPin: Bool = false) -> IdpSdkService {
        IdpSdkService(tenantId: tenant, idpUrl: url, certificateChain: Data("test-certificate".utf8),
                      shouldHashPin: shouldHashPin, configuration: configuration)
    }

    func masterController() -> MasterController {
        MasterController(configuration: .init(idpUrl: url))
    }

    /// Adds a user awaiting activation and returns one activation code.
    func pendingUser(_ userId: String) -> String {
        try! server.addUser(userId, tenant: tenant)
        return try! server.issueActivationCode(for: userId, tenant: tenant)
    }

    /// Adds an active user with a password.
    func activeUser(_ userId: String, password: String) {
        try! server.addUser(userId, tenant: tenant, password: password)
    }

    /// AST client data with a fresh PKCE pair, without an MC; returns the verifier too.
    static func astClientData() -> (info: AstClientDataInfo, verifier: String) {
        let verifier = PKCE.makeVerifier()
        let info = AstClientDataInfo(clientData: SecureRandom.token(), astClientId: IdpServer.unassignedAstClientId,
                                     codeChallenge: PKCE.challenge(for: verifier), codeChallengeMethod: PKCE.methodS256)
        return (info, verifier)
    }
}

/// A provider that answers each requested field from a fixed table and records every call.
final class TableProvider: IdpSdkInteractionInterface {
    let table: [String: String]
    let calls = LockedValue<[IdpSdkInteractionData]>([])
    /// Calls that ran somewhere a provider must never run.
    let misplacedCalls = Atomic<Int>(0)

    init(_ table: [String: String]) { self.table = table }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if !IdpSdkService.isSDKThread || Thread.isMainThread || withUnsafeCurrentTask(body: { $0 != nil }) {
            misplacedCalls.add(1, ordering: .relaxed)
        }
        calls.withLock { $0.append(interactionData) }
        var credentials: [String: String] = [:]
        for id in interactionData.inputFieldIds { credentials[id] = table[id] }
        return .init(credentials: credentials)
    }

    var recorded: [IdpSdkInteractionData] { calls.withLock { $0 } }
}

/// A provider built from a closure.
struct ClosureProvider: IdpSdkInteractionInterface {
    let body: @Sendable (IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult
    init(_ body: @escaping @Sendable (IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult) { self.body = body }
    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { body(interactionData) }
}

/// Counts completions per flow, to prove exactly-once delivery.
final class CompletionCounter: Sendable {
    private let counts = LockedValue<[IdpSdkFlowID: Int]>([:])
    private let total = Atomic<Int>(0)

    func record(_ result: IdpSdkResult) {
        total.add(1, ordering: .relaxed)
        if let id = result.flowId { counts.withLock { $0[id, default: 0] += 1 } }
    }

    var completions: Int { total.load(ordering: .relaxed) }
    var flowsCompletedMoreThanOnce: Int { counts.withLock { $0.values.filter { $0 > 1 }.count } }
}

/// A one-shot gate that OS threads can wait on; for providers that must block.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func open() { semaphore.signal() }
    /// Blocks the calling (non-task) thread until opened or `timeout` passes; returns whether opened.
    @discardableResult
    func wait(timeout: Duration) -> Bool {
        semaphore.wait(timeout: .now(plus: timeout)) == .success
    }
}

extension IdpSdkService {
    /// The completion form, awaited; for tests that want the flow id handle too.
    func run(_ info: AstClientDataInfo, clientId: String, provider: any IdpSdkInteractionInterface, userId: String? = nil, traceParent: String? = nil) async -> IdpSdkResult {
        await getAuthorizationCode(withAstClientData: info, clientId: clientId, interactionInterface: provider, userId: userId, traceParent: traceParent)
    }
}

extension TestIDP {
    /// Activates a new user on `masterController` through the three documented steps; returns the
    /// SetAuthorisationCode status.
    @discardableResult
    func activate(_ userId: String, password: String, on masterController: MasterController, sdk: IdpSdkService? = nil) async -> KSMEventStatusType {
        let code = pendingUser(userId)
        let sdk = sdk ?? self.sdk()
        _ = await masterController.receive(KSMStartEvent())
        let ast = await masterController.receive(KSMGetAstClientDataEvent(tenantId: tenant)) as! KSMGetAstClientDataResultEvent
        let provider = TableProvider(["username": userId, "activation-code": code, "password": password])
        let result = await sdk.run(AstClientDataInfo(astClientData: ast), clientId: "KssIdpEnrollment", provider: provider)
        guard let authorizationCode = result.authorizationCode else { return .kCannotAcquireAuthorizationCode }
        let set = await masterController.receive(KSMSetAuthorisationCodeEvent(
            tenantId: tenant, authenticationMode: .no, authorisationCode: authorizationCode, clientId: "KssIdpEnrollment"
        )) as! KSMSetAuthorisationCodeResultEvent
        return set.status
    }
}
