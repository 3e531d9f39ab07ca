import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer

/// The MC-SDK's MasterController for one app installation (one device): Start, GetAstClientData
/// and SetAuthorisationCode of the IdpSdk flows, against the in-process IDP.
///
/// ```swift
/// let masterController = MasterController(configuration: .init(idpUrl: "https://idp.example.test"))
/// let start = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
/// ```
///
/// Three ways in, as in the documents: `receive(_:) async`; `sendEvent2MasterController(_:completion:)`,
/// whose completion runs on a Swift concurrency thread (do not block it); and `postEvent(_:)`,
/// returning an ``McFuture`` with `then`.
///
/// One authorization is in flight per user identifier (the tenant and the user id, empty at
/// activation), as on a device: a second GetAstClientData for the same identifier replaces the
/// kept verifier, and a code obtained with the first then fails to exchange. Run concurrent
/// flows on separate MasterControllers, one per simulated device.
public actor MasterController {
    /// Where the MC finds the IDP and how it talks to it.
    public struct Configuration: Sendable {
        public var idpUrl: String
        public var certificateChain: Data?
        /// The redirect URI sent with the token request; must be the one the code was issued for.
        public var redirectUri: String
        /// Carries token requests; `nil` looks `idpUrl` up in `IdpNetwork.shared`.
        public var transport: (any Transport)?

        public init(idpUrl: String, certificateChain: Data? = nil, redirectUri: String = "https://kobil/OpenIdRedirectUri", transport: (any Transport)? = nil) {
            self.idpUrl = idpUrl
            self.certificateChain = certificateChain
            self.redirectUri = redirectUri
            self.transport = transport
        }
    }

    public let configuration: Configuration
    private var started = false
    private var users: [KsUserIdentifier: EnrolledUser] = [:]
    private var enrollmentOrder: [KsUserIdentifier] = []
    private var pending: [KsUserIdentifier: PendingAuthorization] = [:]

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: - Entry points

    /// Handles `event` and returns its result event (downcast it to the documented type).
    public func receive(_ event: any KsMacroEvent) async -> any KsMacroEvent {
        switch event {
        case is KSMStartEvent:
            return start()
        case let event as KSMGetAstClientDataEvent:
            return getAstClientData(event)
        case let event as KSMSetAuthorisationCodeEvent:
            return await setAuthorisationCode(event)
        default:
            return KSMStatusResultEvent(status: .kNotSupported, errorDescription: "\(type(of: event)) is not supported by this MasterController")
        }
    }

    /// The completion-handler form of the iOS samples. `completion` runs once, on a Swift
    /// concurrency thread, with the result event.
    public nonisolated func sendEvent2MasterController(_ event: any KsMacroEvent, completion: @escaping @Sendable (any KSMEvent) -> Void) {
        Task { completion(await receive(event)) }
    }

    /// The same, with the label of the Start sample.
    public nonisolated func sendEvent2MasterController(event: any KsMacroEvent, completion: @escaping @Sendable (any KSMEvent) -> Void) {
        sendEvent2MasterController(event, completion: completion)
    }

    /// The Kotlin samples' form: a future that `then` callbacks observe.
    public nonisolated func postEvent(_ event: any KsMacroEvent) -> McFuture<any KsMacroEvent> {
        let future = McFuture<any KsMacroEvent>()
        Task { future.resolve(await receive(event)) }
        return future
    }

    /// The tokens stored for `user`, or `nil`; for tests. Not part of the documented API.
    public func tokenSet(for user: KsUserIdentifier) -> McTokenSet? { users[user]?.tokens }

    /// Whether `user` is logged in since the last Start.
    public func isLoggedIn(_ user: KsUserIdentifier) -> Bool { users[user]?.loggedIn ?? false }

    // MARK: - Events

    private func start() -> KSMStartResultEvent {
        started = true
        for user in users.keys { users[user]?.loggedIn = false }
        let state: KSMSdkState = enrollmentOrder.isEmpty ? .activationRequired : .loginRequired
        return KSMStartResultEvent(status: .kOk, sdkState: state, userList: enrollmentOrder)
    }

    private func getAstClientData(_ event: KSMGetAstClientDataEvent) -> KSMGetAstClientDataResultEvent {
        guard started else {
            return KSMGetAstClientDataResultEvent(status: .kInvalidState, errorDescription: "post a KSMStartEvent before KSMGetAstClientDataEvent")
        }
        guard !event.tenantId.isEmpty else {
            return KSMGetAstClientDataResultEvent(status: .kInvalidParameter, errorDescription: "tenantId is empty")
        }
        let verifier = PKCE.makeVerifier()
        let challenge = PKCE.challenge(for: verifier)
        let clientData = SecureRandom.token(byteCount: 32)
        pending[event.userIdentifier] = PendingAuthorization(verifier: verifier, challenge: challenge, clientData: clientData)
        let astClientId = users[event.userIdentifier]?.astClientId ?? IdpServer.unassignedAstClientId
        return KSMGetAstClientDataResultEvent(status: .kOk, clientData: clientData, astClientId: astClientId,
                                              codeChallenge: challenge, codeChallengeMethod: PKCE.methodS256)
    }

    private func setAuthorisationCode(_ event: KSMSetAuthorisationCodeEvent) async -> KSMSetAuthorisationCodeResultEvent {
        func fail(_ status: KSMEventStatusType, _ text: String) -> KSMSetAuthorisationCodeResultEvent {
            KSMSetAuthorisationCodeResultEvent(status: status, errorDescription: text)
        }
        guard started else { return fail(.kInvalidState, "post a KSMStartEvent before KSMSetAuthorisationCodeEvent") }
        for (name, value) in [("tenantId", event.tenantId), ("authorisationCode", event.authorisationCode), ("clientId", event.clientId)] where value.isEmpty {
            return fail(.kInvalidParameter, "\(name) is empty")
        }
        guard let authorization = pending[event.userIdentifier] else {
            return fail(.kInvalidState, "no authorization is pending for \(event.userIdentifier); post a KSMGetAstClientDataEvent first")
        }
        let exchange = await TokenExchange.run(
            code: event.authorisationCode, clientId: event.clientId, tenantId: event.tenantId,
            authorization: authorization, configuration: configuration
        )
        // The actor may have handled other events while the request was out: decide on what is
        // true now.
        let tokens: McTokenSet
        switch exchange {
        case .failure(let failure): return fail(failure.status, failure.description)
        case .success(let issued): tokens = issued
        }
        if !event.userIdentifier.userId.isEmpty, event.userIdentifier.userId != tokens.userId {
            return fail(.kMismatchedUser, "the code was issued for another user than \(event.userIdentifier)")
        }
        if pending[event.userIdentifier]?.challenge == authorization.challenge {
            pending[event.userIdentifier] = nil
        }
        let user = KsUserIdentifier(tenantId: event.tenantId, userId: tokens.userId)
        if users[user] == nil { enrollmentOrder.append(user) }
        users[user] = EnrolledUser(tokens: tokens, astClientId: tokens.astClientId, authenticationMode: event.authenticationMode, loggedIn: true)
        return KSMSetAuthorisationCodeResultEvent(status: .kOk, userIdentifier: user)
    }
}

/// The tokens the MC holds for a user. `description` never shows them.
public struct McTokenSet: Sendable, CustomStringConvertible {
    public let accessToken: String
    public let refreshToken: String
    public let offlineToken: String
    public let userId: String
    public let astClientId: String
    /// When the access token expires, by the IDP's `expires_in` counted from receipt.
    public let accessTokenExpiresAt: Date

    public var description: String { "McTokenSet(user: \(userId), access token expires \(accessTokenExpiresAt))" }
}

struct EnrolledUser: Sendable {
    var tokens: McTokenSet
    var astClientId: String
    var authenticationMode: KSMAuthenticationMode
    var loggedIn: Bool
}

struct PendingAuthorization: Sendable {
    let verifier: String
    let challenge: String
    let clientData: String
}
