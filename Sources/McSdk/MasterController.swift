import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer

/// The MC-SDK's MasterController for one app installation (one device): Start, Restart,
/// GetAstClientData, SetAuthorisationCode, OfflineLogin and ClearIamTokenCache, against the
/// in-process IDP; and ``validAccessToken(for:)``, which refreshes once for any number of callers.
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
///
/// What survives an app restart lives in the configuration's ``McTokenStore``: a new
/// MasterController on the same store is the same device after a restart.
public actor MasterController {
    /// Where the MC finds the IDP and how it talks to it.
    public struct Configuration: Sendable {
        public var idpUrl: String
        public var certificateChain: Data?
        /// The redirect URI sent with the token request; must be the one the code was issued for.
        public var redirectUri: String
        /// Carries token requests; `nil` looks `idpUrl` up in `IdpNetwork.shared`.
        public var transport: (any Transport)?
        /// The device's persistent storage; share it with a new MasterController to simulate an
        /// app restart.
        public var tokenStore: McTokenStore
        /// The clock token expiry is measured on (a `ManualClock` in tests, the IDP's).
        public var clock: any IdpClock
        /// Asked before an OfflineLogin uses the offline token of a BIOMETRIC user; `nil`: the
        /// device has no biometry (such an OfflineLogin fails with `kNotSupported`).
        public var biometricPrompt: (any BiometricPrompt)?
        /// How long a token refresh may take before its waiters get ``McTokenError/Reason/timedOut``.
        public var refreshTimeout: Duration

        public init(
            idpUrl: String,
            certificateChain: Data? = nil,
            redirectUri: String = "https://kobil/OpenIdRedirectUri",
            transport: (any Transport)? = nil,
            tokenStore: McTokenStore = McTokenStore(),
            clock: any IdpClock = SystemClock(),
            biometricPrompt: (any BiometricPrompt)? = nil,
            refreshTimeout: Duration = .seconds(30)
        ) {
            self.idpUrl = idpUrl
            self.certificateChain = certificateChain
            self.redirectUri = redirectUri
            self.transport = transport
            self.tokenStore = tokenStore
            self.clock = clock
            self.biometricPrompt = biometricPrompt
            self.refreshTimeout = refreshTimeout
        }
    }

    public let configuration: Configuration
    private var started = false
    /// Users logged in since the last Start or Restart (not persistent).
    private var loggedIn: Set<KsUserIdentifier> = []
    private var pending: [KsUserIdentifier: PendingAuthorization] = [:]
    /// Refreshes in flight, one per user and token kind.
    private var flights: [FlightKey: RefreshFlight] = [:]

    private var store: McTokenStore { configuration.tokenStore }
    private var now: Date { configuration.clock.now() }

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: - Entry points

    /// Handles `event` and returns its result event (downcast it to the documented type).
    public func receive(_ event: any KsMacroEvent) async -> any KsMacroEvent {
        switch event {
        case is KSMStartEvent:
            return start()
        case is KSMRestartEvent:
            return restart()
        case let event as KSMGetAstClientDataEvent:
            return getAstClientData(event)
        case let event as KSMSetAuthorisationCodeEvent:
            return await setAuthorisationCode(event)
        case let event as KSMOfflineLoginEvent:
            return await offlineLogin(event)
        case let event as KSMClearIamTokenCacheEvent:
            return clearIamTokenCache(event)
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
    public func tokenSet(for user: KsUserIdentifier) -> McTokenSet? { store.tokens(for: user) }

    /// Whether `user` is logged in since the last Start or Restart.
    public func isLoggedIn(_ user: KsUserIdentifier) -> Bool { loggedIn.contains(user) }

    // MARK: - Events

    private func start() -> KSMStartResultEvent {
        let (state, users) = reinitialise()
        return KSMStartResultEvent(status: .kOk, sdkState: state, userList: users)
    }

    private func restart() -> KSMRestartResultEvent {
        let (state, users) = reinitialise()
        return KSMRestartResultEvent(status: .kOk, sdkState: state, userList: users)
    }

    /// Start and Restart: every user must log in again; the stored tokens stay.
    private func reinitialise() -> (KSMSdkState, [KsUserIdentifier]) {
        started = true
        loggedIn = []
        let users = store.userList
        return (users.isEmpty ? .activationRequired : .loginRequired, users)
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
        // One binding per device: every user activated here shares the first activation's AST
        // client id, and it goes with every later authorization (add user, login).
        let astClientId = store.deviceAstClientId ?? IdpServer.unassignedAstClientId
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
        store.save(StoredUser(tokens: tokens, astClientId: tokens.astClientId, authenticationMode: event.authenticationMode), for: user, loggedIn: true)
        loggedIn.insert(user)
        return KSMSetAuthorisationCodeResultEvent(status: .kOk, userIdentifier: user)
    }

    private func offlineLogin(_ event: KSMOfflineLoginEvent) async -> KSMOfflineLoginResultEvent {
        func fail(_ status: KSMEventStatusType, _ text: String, errorCode: Int? = nil) -> KSMOfflineLoginResultEvent {
            KSMOfflineLoginResultEvent(status: status, errorCode: errorCode, errorDescription: text)
        }
        guard started else { return fail(.kInvalidState, "post a KSMStartEvent before KSMOfflineLoginEvent") }
        guard let user = event.userIdentifier ?? store.lastLoggedInUser else {
            return fail(.kInvalidUserId, "no user identifier was given and no user has logged in on this device yet")
        }
        guard let stored = store.user(user) else {
            return fail(.kInvalidUserId, "user \(user) is not activated on this device")
        }
        let mode = stored.authenticationMode
        guard mode == .no || mode == .biometric else {
            return fail(.kNotSupported, "offline login cannot be used with AuthenticationMode \(mode); log in at the IDP")
        }
        let tokens = stored.tokens
        func loggedInNow() -> KSMOfflineLoginResultEvent {
            loggedIn.insert(user)
            store.markLoggedIn(user)
            return KSMOfflineLoginResultEvent(status: .kOk, userIdentifier: user)
        }
        // 1. A live access token is enough.
        if tokens.accessToken != nil, tokens.accessTokenExpiresAt > now { return loggedInNow() }
        // 2. Else the refresh token, if the IDP still takes it.
        if tokens.refreshToken != nil {
            switch await refreshedAccessToken(user, with: .refresh) {
            case .success: return loggedInNow()
            case .failure(let error):
                guard case .refused = error.reason else { return fail(error.status, error.errorDescription) }
            }
        }
        // 3. Else the offline token, behind the biometric prompt in BIOMETRIC mode.
        guard store.tokens(for: user)?.offlineToken != nil else {
            return fail(.kNoTokenDataAvailable, "no offline token is stored for \(user); log in at the IDP")
        }
        if mode == .biometric {
            guard let prompt = configuration.biometricPrompt else {
                return fail(.kNotSupported, "user \(user) is in BIOMETRIC mode and no biometric prompt is configured")
            }
            if case .failure(let error) = await prompt.authenticate(reason: "Log in as \(user.userId)") {
                return fail(error.isCancellation ? .kUserCancel : .kNegative, "the biometric prompt ended with \(error)",
                            errorCode: BiometricPromptError.errorCodeBase + error.rawValue)
            }
        }
        switch await refreshedAccessToken(user, with: .offline) {
        case .success: return loggedInNow()
        case .failure(let error): return fail(error.status, error.errorDescription)
        }
    }

    private func clearIamTokenCache(_ event: KSMClearIamTokenCacheEvent) -> KSMClearIamTokenCacheResultEvent {
        guard started else { return KSMClearIamTokenCacheResultEvent(status: .kInvalidState, errorDescription: "post a KSMStartEvent before KSMClearIamTokenCacheEvent") }
        let user = event.userIdentifier
        let cleared: Void? = store.updateTokens(of: user) { tokens in
            switch event.clearBehavior {
            case .CLEAR_ALL:
                tokens.accessToken = nil
                tokens.refreshToken = nil
                tokens.offlineToken = nil
            case .CLEAR_ACCESS_AND_REFRESH:
                tokens.accessToken = nil
                tokens.refreshToken = nil
            case .CLEAR_OFFLINE:
                tokens.offlineToken = nil
            }
        }
        guard cleared != nil else {
            return KSMClearIamTokenCacheResultEvent(status: .kInvalidUserId, errorDescription: "user \(user) is not activated on this device")
        }
        if event.clearBehavior != .CLEAR_OFFLINE { loggedIn.remove(user) }
        return KSMClearIamTokenCacheResultEvent(status: .kOk)
    }

    // MARK: - Fresh tokens

    /// A valid access token for `user`, refreshed if it has expired.
    ///
    /// Callers that find the token expired at the same moment share one refresh (single flight):
    /// the IDP sees one refresh-token grant per expiry, however many callers wait. A caller whose
    /// task is cancelled stops waiting (throwing ``McTokenError/Reason/cancelled``) while the
    /// refresh goes on for the others; a failed refresh reaches every waiter; a refresh that takes
    /// longer than ``Configuration/refreshTimeout`` fails every waiter with
    /// ``McTokenError/Reason/timedOut``. The refresh token is rotated by the IDP; if the answer of
    /// a timed-out refresh arrives later it is still stored, and until it does, callers get the
    /// timeout at once rather than a second refresh that would present the spent token.
    ///
    /// ```swift
    /// let token = try await masterController.validAccessToken(for: user)
    /// request.headers.set("Authorization", "Bearer \(token)")
    /// ```
    /// - Throws: ``McTokenError``: ``McTokenError/Reason/loginRequired`` if the user is not logged
    ///   in here (or only a BIOMETRIC user's offline token is left); ``McTokenError/Reason/noTokenData``, ``McTokenError/Reason/refused(_:)`` (expired,
    ///   revoked, reused), ``McTokenError/Reason/locked(_:)``, ``McTokenError/Reason/timedOut``,
    ///   ``McTokenError/Reason/cancelled``, ``McTokenError/Reason/unreachable``.
    public func validAccessToken(for user: KsUserIdentifier) async throws -> String {
        guard loggedIn.contains(user), let tokens = store.tokens(for: user) else {
            throw McTokenError(.loginRequired, status: .kLoginRequired, "user \(user) is not logged in; post SetAuthorisationCode or OfflineLogin first")
        }
        if let access = tokens.accessToken, tokens.accessTokenExpiresAt > now { return access }
        // After an OfflineLogin with the offline token there is no refresh token; the offline token
        // serves, unless it is behind the biometric prompt (then OfflineLogin must ask again).
        if tokens.refreshToken == nil, tokens.offlineToken != nil {
            guard store.user(user)?.authenticationMode == .no else {
                throw McTokenError(.loginRequired, status: .kLoginRequired, "the access token of \(user) expired and only the biometry-protected offline token is left; post OfflineLogin")
            }
            return try await refreshedAccessToken(user, with: .offline).get()
        }
        return try await refreshedAccessToken(user, with: .refresh).get()
    }

    /// How many refreshes are in flight; for tests.
    public var refreshesInFlight: Int { flights.count }

    /// Joins the refresh in flight for `user` and `kind`, or starts one.
    private func refreshedAccessToken(_ user: KsUserIdentifier, with kind: FlightKey.Kind) async -> Result<String, McTokenError> {
        let key = FlightKey(user: user, kind: kind)
        let flight: RefreshFlight
        if let running = flights[key] {
            flight = running
        } else {
            guard let tokens = store.tokens(for: user), let presented = kind == .refresh ? tokens.refreshToken : tokens.offlineToken else {
                return .failure(McTokenError(.noTokenData, status: .kNoTokenDataAvailable, "no \(kind) token is stored for \(user)"))
            }
            flight = RefreshFlight()
            flights[key] = flight
            let timeout = configuration.refreshTimeout
            DispatchQueue.global().asyncAfter(deadline: .now(plus: timeout)) { [weak flight] in
                flight?.complete(.failure(McTokenError(.timedOut, status: .kCannotAcquireTokenData, "the token refresh did not end within \(timeout)")))
            }
            let configuration = self.configuration
            // Unstructured: a cancelled caller must not cancel the refresh the others wait for.
            Task {
                let outcome = await TokenExchange.refresh(presented, clientId: tokens.clientId, tenantId: user.tenantId, configuration: configuration)
                self.finishRefresh(key, flight: flight, presented: presented, outcome: outcome)
            }
        }
        do {
            return .success(try await flight.wait())
        } catch let error as McTokenError {
            return .failure(error)
        } catch {
            return .failure(McTokenError(.protocolError, status: .kFailed, "\(error)"))
        }
    }

    /// Stores what a refresh brought — only if the presented token is still the stored one (a
    /// ClearIamTokenCache in between wins) — then ends the flight.
    private func finishRefresh(_ key: FlightKey, flight: RefreshFlight, presented: String, outcome: Result<TokenExchange.Refreshed, McTokenError>) {
        if flights[key] === flight { flights[key] = nil }
        switch outcome {
        case .success(let refreshed):
            let applied = store.updateTokens(of: key.user) { tokens -> Bool in
                switch key.kind {
                case .refresh:
                    guard tokens.refreshToken == presented else { return false }
                    tokens.refreshToken = refreshed.rotatedToken
                case .offline:
                    guard tokens.offlineToken == presented else { return false }
                    tokens.offlineToken = refreshed.rotatedToken
                }
                tokens.accessToken = refreshed.accessToken
                tokens.accessTokenExpiresAt = refreshed.accessTokenExpiresAt
                return true
            }
            guard applied == true else {
                flight.complete(.failure(McTokenError(.loginRequired, status: .kLoginRequired, "the tokens of \(key.user) were cleared while the refresh was in flight")))
                return
            }
            flight.complete(.success(refreshed.accessToken))
        case .failure(let error):
            flight.complete(.failure(error))
        }
    }
}

/// A refresh in flight is per user and per token kind presented.
struct FlightKey: Hashable, Sendable {
    enum Kind: String, Sendable { case refresh, offline }
    let user: KsUserIdentifier
    let kind: Kind
}

struct PendingAuthorization: Sendable {
    let verifier: String
    let challenge: String
    let clientData: String
}
