import Foundation
import IdpPrimitives
import IdpWireFormats

/// An in-process IDP that behaves like the real one behind the IdpSdk: tenants (realms), clients
/// with multi-step XHTML login forms, users, one-time activation codes, single-use PKCE-bound
/// authorization codes and a token endpoint.
///
/// ```swift
/// let idp = IdpServer()
/// try idp.addTenant("demo")                       // with the standard clients (KssIdpLogin, …)
/// try idp.addUser("alice", tenant: "demo")          // pending activation
/// let code = try idp.issueActivationCode(for: "alice", tenant: "demo")
/// IdpNetwork.shared.register(idp, at: "https://idp.example.test")
/// ```
///
/// Endpoints (Keycloak's paths, which the KOBIL IDP uses):
/// - `GET  /auth/realms/{tenant}/protocol/openid-connect/auth` — starts a flow, serves step 1;
/// - `POST /auth/realms/{tenant}/login-actions/authenticate?session_code=…&execution=N` — answers
///   a step; serves the next step, the same step with the rejection attached, or redirects to
///   `redirect_uri#code=…` (or `#error=…`);
/// - `POST /auth/realms/{tenant}/protocol/openid-connect/token` — exchanges code and PKCE verifier
///   for access, refresh and offline tokens, or (`grant_type=refresh_token`) a refresh or offline
///   token for rotated ones; reuse of a spent token revokes its family (JSON, RFC 6749 §5.1 / §5.2).
///
/// With a ``LockoutPolicy`` in ``Configuration/lockout``, wrong secrets lock the account; the flow
/// then ends with an error redirect carrying the `LockoutInformation`.
///
/// Thread safety: every method may be called from any thread at once. State lives in sharded
/// `LockedValue`s (sessions by session code, users by tenant and id, codes and tokens by their
/// value, the audit log by user or by thread), held only to read and decide; no call-out happens
/// under them. Flows of different users
/// seldom meet on one lock; what must be atomic for one user, code or token family is decided
/// under its shard's lock (see `ServerState` for the lock order).
public final class IdpServer: Sendable {
    /// Tunables of the server. Durations are measured on ``clock``.
    public struct Configuration: Sendable {
        /// The clock every lifetime, expiry and lock is measured on; the system clock by default, a
        /// `ManualClock` in tests.
        public var clock: any IdpClock
        /// How long an authorization code may be redeemed after it is issued; 60 s by default.
        public var authorizationCodeLifetime: Duration
        /// How long a login flow (from the authorize request to its last step) may take; 30 min by
        /// default.
        public var authSessionLifetime: Duration
        /// How long an activation code issued without a validity of its own is valid; 7 days by
        /// default.
        public var activationCodeLifetime: Duration
        /// How long a password-reset code is valid by default (a reset link's short life).
        public var passwordResetCodeLifetime: Duration
        /// How long an access token is valid; 5 min by default.
        public var accessTokenLifetime: Duration
        /// How long a refresh token is valid; 30 min by default.
        public var refreshTokenLifetime: Duration
        /// How long an offline token family lives from the login that created it
        /// (``offlineSessionMax``); 30 days by default.
        public var offlineTokenLifetime: Duration
        /// The longest accepted credential value, in UTF-8 bytes.
        public var maximumFieldLength: Int
        /// The largest accepted request body.
        public var maximumBodySize: Int
        /// The shortest password a user may choose.
        public var minimumPasswordLength: Int
        /// How many audit entries each of the log's shards keeps (its oldest are dropped first).
        ///
        /// The log has one shard per shard of the server state (four per core, from 16 to 64): a
        /// user's entries are all in the user's shard, and entries that name no user in the shard
        /// of the thread that appended them. So every user keeps at least their newest
        /// `auditLogCapacity` entries, the log as a whole keeps at least the newest
        /// `auditLogCapacity` entries and at most a shard count times that many, and the memory
        /// it takes is bounded by the latter. The default, 8 192, bounds the whole log near 131 000
        /// entries on up to four cores, and near 524 000 on sixteen.
        public var auditLogCapacity: Int
        /// When wrong secrets lock an account; off by default.
        public var lockout: LockoutPolicy
        /// Takes over the server's decision points for a controlled stress run (`IdpHarness`'s
        /// `SystemStress`): before it decides a login step, an authorization code's redemption or a
        /// refresh, a request pauses there (`ExecutionController.pause(at:)`), so another
        /// request may be decided first. `nil`, the default: requests run straight through.
        package var controller: (any ExecutionController)?
        #if DEBUG
        /// A bug planted for the mutation tests; set only by tests.
        package var plantedBug = PlantedBugSwitch()
        #endif

        /// Keycloak's "Offline Session Max": how long an offline token family lives from the login
        /// that created it. Refreshing rotates the offline token but never extends this.
        public var offlineSessionMax: Duration {
            get { offlineTokenLifetime }
            set { offlineTokenLifetime = newValue }
        }

        /// A configuration; every parameter has a default.
        ///
        /// - Parameters:
        ///   - clock: The clock lifetimes are measured on; the system clock by default.
        ///   - authorizationCodeLifetime: How long a code may be redeemed; 60 s.
        ///   - authSessionLifetime: How long a login flow may take; 30 min.
        ///   - activationCodeLifetime: How long an activation code is valid by default; 7 days.
        ///   - passwordResetCodeLifetime: How long a password-reset code is valid by default; 15
        ///     min.
        ///   - accessTokenLifetime: How long an access token is valid; 5 min.
        ///   - refreshTokenLifetime: How long a refresh token is valid; 30 min.
        ///   - offlineTokenLifetime: How long an offline token family lives; 30 days.
        ///   - maximumFieldLength: The longest accepted credential value, in UTF-8 bytes; 1024.
        ///   - maximumBodySize: The largest accepted request body, in bytes; 64 KiB.
        ///   - minimumPasswordLength: The shortest password a user may choose; 4.
        ///   - auditLogCapacity: How many audit entries each shard of the log keeps; 8 192.
        ///   - lockout: When wrong secrets lock an account; ``LockoutPolicy/disabled`` by default.
        public init(
            clock: any IdpClock = SystemClock(),
            authorizationCodeLifetime: Duration = .seconds(60),
            authSessionLifetime: Duration = .seconds(1800),
            activationCodeLifetime: Duration = .seconds(7 * 24 * 3600),
            passwordResetCodeLifetime: Duration = .seconds(15 * 60),
            accessTokenLifetime: Duration = .seconds(300),
            refreshTokenLifetime: Duration = .seconds(1800),
            offlineTokenLifetime: Duration = .seconds(30 * 24 * 3600),
            maximumFieldLength: Int = 1024,
            maximumBodySize: Int = 64 * 1024,
            minimumPasswordLength: Int = 4,
            auditLogCapacity: Int = 8_192,
            lockout: LockoutPolicy = .disabled
        ) {
            self.clock = clock
            self.authorizationCodeLifetime = authorizationCodeLifetime
            self.authSessionLifetime = authSessionLifetime
            self.activationCodeLifetime = activationCodeLifetime
            self.passwordResetCodeLifetime = passwordResetCodeLifetime
            self.accessTokenLifetime = accessTokenLifetime
            self.refreshTokenLifetime = refreshTokenLifetime
            self.offlineTokenLifetime = offlineTokenLifetime
            self.maximumFieldLength = maximumFieldLength
            self.maximumBodySize = maximumBodySize
            self.minimumPasswordLength = minimumPasswordLength
            self.auditLogCapacity = auditLogCapacity
            self.lockout = lockout
            controller = nil
        }
    }

    /// How the IDP expects password-type fields on the wire.
    public enum SecretEncoding: String, Sendable {
        /// The clear value (an `IdpSdkService` with `shouldHashPin: false`).
        case plain
        /// `base64url(SHA-256(value))` (an `IdpSdkService` with `shouldHashPin: true`).
        case sha256
    }

    /// The configuration the server was made with; fixed for its life.
    public let configuration: Configuration
    /// The configuration's lifetimes in seconds and its step rules, made once: every request
    /// reads some, and a `Duration`'s seconds take a 128-bit division to read.
    let lifetimes: Lifetimes
    let stepRules: StepRules
    let state: ServerState
    let audit: AuditLog

    /// An IDP with no tenants; add them with the administrative calls before sending requests.
    ///
    /// - Parameter configuration: Lifetimes, limits and the lockout policy; the defaults if
    ///   omitted.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        lifetimes = Lifetimes(configuration)
        stepRules = StepRules(configuration)
        state = ServerState()
        audit = AuditLog(capacity: configuration.auditLogCapacity, shardCount: state.shardCount)
    }

    var now: Date { configuration.clock.now() }

    // MARK: - Administration

    /// Adds a tenant (a realm).
    /// - Parameters:
    ///   - tenantId: The realm name; the `tenantId` of the SDKs.
    ///   - secretEncoding: How password fields arrive (must match the SDK's `shouldHashPin`).
    ///   - standardClients: Whether to add ``IdpClientConfiguration/standard``: the IdpSdk clients
    ///     `KssIdpEnrollment`, `KssIdpLogin`, `KssIdpChangePassword` and `KssIdpForgotPassword`,
    ///     and the web-view clients `IDPRegistration`, `IDPLogin` and `IDPSubsequentLogin`.
    /// - Throws: ``IdpServerError`` if the tenant exists or the id is empty.
    public func addTenant(_ tenantId: String, secretEncoding: SecretEncoding = .plain, standardClients: Bool = true) throws(IdpServerError) {
        guard !tenantId.isEmpty, !tenantId.contains("/") else {
            throw IdpServerError(.invalidArgument("tenant id '\(tenantId)' is empty or contains '/'"))
        }
        var tenant = TenantConfiguration(id: tenantId, secretEncoding: secretEncoding)
        if standardClients {
            for client in IdpClientConfiguration.standard {
                tenant.clients[client.clientId] = PreparedClient(client, tenant: tenantId)
            }
        }
        try state.updateTenants { (directory) throws(IdpServerError) in
            guard directory.tenants[tenantId] == nil else { throw IdpServerError(.tenantExists(tenantId)) }
            directory.tenants[tenantId] = tenant
        }
    }

    /// Adds a client with its form steps.
    /// - Throws: ``IdpServerError`` if the tenant is unknown, the client exists, or its steps do not
    ///   make sense for its purpose (no username, enrollment without activation code, …).
    public func addClient(_ client: IdpClientConfiguration, tenant tenantId: String) throws(IdpServerError) {
        if let problem = client.validationProblem() { throw IdpServerError(.invalidClient(problem)) }
        let prepared = PreparedClient(client, tenant: tenantId)
        try state.updateTenants { (directory) throws(IdpServerError) in
            guard directory.tenants[tenantId] != nil else { throw IdpServerError(.unknownTenant(tenantId)) }
            guard directory.tenants[tenantId]!.clients[client.clientId] == nil else {
                throw IdpServerError(.clientExists(client.clientId))
            }
            directory.tenants[tenantId]!.clients[client.clientId] = prepared
        }
    }

    /// Adds a user.
    /// - Parameters:
    ///   - userId: The user's id, which is also the username the forms ask for.
    ///   - tenantId: The tenant the user belongs to.
    ///   - password: With a password the user is active at once (ready to log in); without one the
    ///     user awaits activation with an activation code.
    ///   - attributes: Values that custom form fields with role `.attribute(key)` are checked against.
    /// - Throws: ``IdpServerError`` if the tenant is unknown, the user exists, or an argument is empty.
    public func addUser(_ userId: String, tenant tenantId: String, password: String? = nil, attributes: [String: String] = [:]) throws(IdpServerError) {
        guard !userId.isEmpty, userId.utf8.count <= configuration.maximumFieldLength else {
            throw IdpServerError(.invalidArgument("user id is empty or longer than \(configuration.maximumFieldLength) bytes"))
        }
        if let password, password.isEmpty { throw IdpServerError(.invalidArgument("password is empty")) }
        let salt = SecureRandom.bytes(16)
        let key = UserKey(tenant: tenantId, user: userId)
        // Tenants are never removed, so the tenant read here still exists at the insert.
        guard let tenant = state.tenant(tenantId, stripe: key.hashValue) else { throw IdpServerError(.unknownTenant(tenantId)) }
        var user = UserRecord(id: userId, salt: salt, attributes: attributes)
        if let password {
            user.passwordHash = UserRecord.hash(tenant.wireForm(ofSecret: password), salt: salt)
            user.status = .active
        }
        try state.userShard(key).withLockThenUpkeep { (shard) throws(IdpServerError) in
            guard shard[key] == nil else { throw IdpServerError(.userExists(userId)) }
            shard.store(user, for: key)
        }
    }

    /// Issues a one-time activation code for the user (several may be outstanding, one per device).
    /// - Parameters:
    ///   - userId: The user awaiting activation, or an active user adding a device.
    ///   - tenantId: The user's tenant.
    ///   - validFor: Lifetime; by default ``Configuration/activationCodeLifetime``.
    /// - Returns: The code, 12 digits, to be handed to the user out of band.
    /// - Throws: ``IdpServerError`` if the tenant or user is unknown.
    public func issueActivationCode(for userId: String, tenant tenantId: String, validFor: Duration? = nil) throws(IdpServerError) -> String {
        try issueOneTimeCode(for: userId, tenant: tenantId, validFor: validFor ?? configuration.activationCodeLifetime) { user, code, expiresAt in
            user.activationCodes[code] = expiresAt
            return nil
        }
    }

    /// Issues a one-time password-reset code for an active user, for the `KssIdpForgotPassword`
    /// flow (as a real IDP mails a reset link when the user asks for one).
    ///
    /// ```swift
    /// let resetCode = try idp.issuePasswordResetCode(for: "alice", tenant: "demo")
    /// // the user answers IdpSdkConstants.ACTIVATION_CODE with resetCode in KssIdpForgotPassword
    /// ```
    ///
    /// Reset codes are kept apart from activation codes: a reset code cannot activate a device,
    /// and an activation code (which also adds a device) cannot reset a password. Several may be
    /// outstanding; the flow consumes the one it used, only when it completes.
    /// - Parameters:
    ///   - userId: The active user who forgot the password.
    ///   - tenantId: The user's tenant.
    ///   - validFor: Lifetime; by default ``Configuration/passwordResetCodeLifetime``.
    /// - Returns: The code, 12 digits, to be handed to the user out of band.
    /// - Throws: ``IdpServerError`` if the tenant or user is unknown, or the user is not active
    ///   (a pending user activates with an activation code instead).
    public func issuePasswordResetCode(for userId: String, tenant tenantId: String, validFor: Duration? = nil) throws(IdpServerError) -> String {
        let lifetime = validFor ?? configuration.passwordResetCodeLifetime
        let code = try issueOneTimeCode(for: userId, tenant: tenantId, validFor: lifetime) { user, code, expiresAt in
            guard user.status == .active else {
                return IdpServerError(.invalidArgument("user '\(userId)' is not active; a pending user activates with an activation code"))
            }
            user.passwordResetCodes[code] = expiresAt
            return nil
        }
        record(.passwordResetCodeIssued, tenant: tenantId, clientId: nil, userId: userId, traceParent: nil, "valid for \(lifetime)")
        return code
    }

    /// Makes a 12-digit code and lets `store` keep it in the user's record, under the lock;
    /// `store` returns an error to refuse.
    private func issueOneTimeCode(
        for userId: String, tenant tenantId: String, validFor lifetime: Duration,
        store: (inout UserRecord, String, Date) -> IdpServerError?
    ) throws(IdpServerError) -> String {
        let code = SecureRandom.digits(12)
        let expiresAt = now.addingTimeInterval(lifetime.timeInterval)
        let key = UserKey(tenant: tenantId, user: userId)
        guard state.tenant(tenantId, stripe: key.hashValue) != nil else { throw IdpServerError(.unknownTenant(tenantId)) }
        try state.userShard(key).withLockThenUpkeep { (shard) throws(IdpServerError) in
            let refusal = shard.update(key) { store(&$0, code, expiresAt) }
            guard let refusal else { throw IdpServerError(.unknownUser(userId)) }
            if let refusal { throw refusal }
        }
        return code
    }

    /// A snapshot of a user, without secrets; `nil` if unknown.
    public func user(_ userId: String, tenant tenantId: String) -> IdpUserSnapshot? {
        let now = self.now
        let key = UserKey(tenant: tenantId, user: userId)
        return state.userShard(key).withLock { shard in
            shard[key].map { IdpUserSnapshot($0, now: now) }
        }
    }

    /// Lifts any lock of the user and clears their failure counts, as an administrator would.
    /// - Throws: ``IdpServerError`` if the tenant or user is unknown.
    public func unlock(_ userId: String, tenant tenantId: String) throws(IdpServerError) {
        let key = UserKey(tenant: tenantId, user: userId)
        guard state.tenant(tenantId, stripe: key.hashValue) != nil else { throw IdpServerError(.unknownTenant(tenantId)) }
        try state.userShard(key).withLockThenUpkeep { (shard) throws(IdpServerError) in
            guard shard.update(key, { $0.recordSuccess() }) != nil else { throw IdpServerError(.unknownUser(userId)) }
        }
    }

    /// The page the IDP serves for one step of a client's flow, rendered from the client's prepared
    /// template exactly as the authorize and authenticate endpoints render it; `nil` if the tenant,
    /// client or step is unknown. For tools and benchmarks (idp-bench measures one render).
    ///
    /// ```swift
    /// let page = idp.renderStepForm(tenant: "demo", clientId: "KssIdpLogin", step: 0, sessionCode: "abc")
    /// ```
    /// - Parameters:
    ///   - tenantId: The tenant.
    ///   - clientId: The client whose step is rendered.
    ///   - step: The step's index, from 0.
    ///   - sessionCode: Put into the form's action and hidden field as is; pass URL-safe
    ///     Base 64, as the IDP's own session codes are.
    package func renderStepForm(tenant tenantId: String, clientId: String, step: Int, sessionCode: String) -> HTTPResponse? {
        guard let client = state.tenant(tenantId, stripe: ShardRouting.route(of: sessionCode))?.clients[clientId],
              client.forms.indices.contains(step) else { return nil }
        return Page.form(client.forms[step], sessionCode: sessionCode, rejection: nil)
    }

    /// The audit log, oldest first; with a trace id, only that trace's entries.
    ///
    /// The log is kept in shards (by user, or by thread for entries that name no user) and
    /// merged here. Oldest first means by the order key each entry got when it was appended:
    /// the monotonic clock read at the append, so an entry appended after another's append
    /// returned comes after it, on any thread; a decision's entries are appended together and
    /// stay together, in order. Every entry whose append returned before this call began is
    /// in the result (unless its shard dropped it, see ``Configuration/auditLogCapacity``), and
    /// with any entry, every entry ordered before it.
    ///
    /// ```swift
    /// let steps = idp.auditLog(traceId: "4bf92f3577b34da6a3ce929d0e0e4736").map(\.event)
    /// ```
    /// - Parameter traceId: Only entries whose ``AuditEntry/traceId`` is this; all entries if
    ///   `nil`.
    /// - Returns: The entries, oldest first.
    public func auditLog(traceId: String? = nil) -> [AuditEntry] {
        guard let traceId else { return audit.entries() }
        return audit.entries { $0.isOfTrace(traceId) }
    }

    /// Counts of live server state, for leak checks in tests and the benchmark. Shard by shard:
    /// exact when no request is in flight.
    public func statistics() -> IdpServerStatistics {
        var statistics = IdpServerStatistics(authSessions: 0, outstandingCodes: 0, redeemedCodes: 0, tokens: 0)
        for shard in state.sessions { statistics.authSessions += shard.withLock { $0.count } }
        for shard in state.grants {
            let (codes, redeemed, tokens) = shard.withLock { ($0.outstandingCodeCount, $0.redeemedCodeCount, $0.tokenCount) }
            statistics.outstandingCodes += codes
            statistics.redeemedCodes += redeemed
            statistics.tokens += tokens
        }
        return statistics
    }

    /// The IDP's decisions on `userId`'s form steps (steps passed, wrong secrets, locks, attempts
    /// refused while locked, flows ended or completed), in the order they were decided: what a
    /// lockout is judged by.
    ///
    /// ```swift
    /// let decisions = idp.userDecisions("alice", tenant: "bank")
    /// let evaluatedWrong = decisions.filter { $0.event == .credentialsRejected }.count
    /// ```
    /// - Parameters:
    ///   - userId: The user whose decisions to read.
    ///   - tenant: The user's tenant.
    /// - Returns: The entries with a ``AuditEntry/userDecision`` for that user, oldest decision
    ///   first (a decision's `credentialsRejected` before its `accountLocked`). A decision made a
    ///   moment ago may not be there yet; when the numbers run from 1 to the last without a gap,
    ///   every decision up to the last is.
    package func userDecisions(_ userId: String, tenant: String) -> [AuditEntry] {
        let entries = audit.entries { $0.userId == userId && $0.tenant == tenant && $0.userDecision != nil }.enumerated()
        return entries.sorted { ($0.element.userDecision!, $0.offset) < ($1.element.userDecision!, $1.offset) }.map(\.element)
    }

    /// Appends `entries` to the audit log together (one decision's).
    func record<Entries: Collection<AuditEntry>>(_ entries: Entries) {
        audit.append(entries)
    }

    /// Appends to the audit log; `time`: when the request was decided (default: now).
    func record(_ event: AuditEntry.Event, tenant: String, clientId: String?, userId: String?, traceParent: String?, _ detail: String,
                at time: Date? = nil) {
        let entry = AuditEntry(time: time ?? now, event: event, tenant: tenant, clientId: clientId, userId: userId, traceParent: traceParent, detail: detail)
        audit.append(CollectionOfOne(entry))
    }

    // MARK: - HTTP

    /// Answers one HTTP-shaped request. Thread-safe, non-blocking, never throws: bad requests get
    /// 4xx responses whose body names the problem.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard request.body.count <= configuration.maximumBodySize else {
            return Page.errorResponse(status: 413, code: "request_too_large", "request body exceeds \(configuration.maximumBodySize) bytes")
        }
        guard let (tenant, endpoint) = Self.route(request.target) else {
            return Page.errorResponse(status: 404, code: "not_found", "no endpoint at \(request.path)")
        }
        let traceParent = request.headers["traceparent"].flatMap(TraceParent.canonical)
        switch endpoint {
        case .authorize? where request.method == "GET":
            return authorize(tenant: tenant, request: request, traceParent: traceParent)
        case .authenticate? where request.method == "POST":
            return authenticate(tenant: tenant, request: request, traceParent: traceParent)
        case .token? where request.method == "POST":
            return token(tenant: tenant, request: request, traceParent: traceParent)
        case .authorize?, .authenticate?, .token?:
            return Page.errorResponse(status: 405, code: "method_not_allowed", "\(request.method) is not allowed on \(request.path)")
        case nil:
            return Page.errorResponse(status: 404, code: "not_found", "no endpoint at \(request.path)")
        }
    }
}

extension IdpServer {
    /// The endpoints ``IdpServer/handle(_:)`` serves, by the path after the tenant.
    enum Endpoint {
        /// `protocol/openid-connect/auth`
        case authorize
        /// `login-actions/authenticate`
        case authenticate
        /// `protocol/openid-connect/token`
        case token
    }

    /// The tenant and the endpoint of a request target `/auth/realms/{tenant}/{endpoint}`, before
    /// any `?`: `nil` for a target of another shape, no endpoint for a path that names none.
    ///
    /// Cut and compared by bytes, in place, which is how Characters compare here: the prefix and
    /// the endpoints' paths are ASCII, and no text with another byte is canonically equivalent
    /// to them (no character decomposes to a lower-case letter, `-` or `/`). Only a non-ASCII
    /// byte right after the prefix's `/` may join it into another Character (a combining mark),
    /// so that the path has not the prefix; the Characters decide that case.
    static func route(_ target: String) -> (tenant: String, endpoint: Endpoint?)? {
        var target = target
        return target.withUTF8 { bytes in
            let start = routePrefix.utf8CodeUnitCount
            var end = 0
            while end < bytes.count, bytes[end] != UInt8(ascii: "?") { end += 1 }
            guard end >= start, matches(UnsafeBufferPointer(rebasing: bytes[..<start]), routePrefix) else { return nil }
            if end > start, bytes[start] >= 0x80 {
                let path = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
                guard path.hasPrefix(routePrefix.description) else { return nil }
            }
            var slash = start
            while slash < end, bytes[slash] != UInt8(ascii: "/") { slash += 1 }
            guard slash < end else { return nil }
            let tenant = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<slash]), as: UTF8.self)
            let rest = UnsafeBufferPointer(rebasing: bytes[(slash + 1)..<end])
            let endpoint: Endpoint? = matches(rest, "protocol/openid-connect/auth") ? .authorize
                : matches(rest, "login-actions/authenticate") ? .authenticate
                : matches(rest, "protocol/openid-connect/token") ? .token : nil
            return (tenant, endpoint)
        }
    }

    private static let routePrefix: StaticString = "/auth/realms/"

    /// Whether `bytes` are the bytes of `literal`.
    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { literal in
            guard bytes.count == literal.count else { return false }
            for index in 0..<bytes.count where bytes[index] != literal[index] { return false }
            return true
        }
    }
}

/// The lifetimes of a server's ``IdpServer/Configuration``, as `TimeInterval`s.
struct Lifetimes: Sendable {
    let authSession: TimeInterval
    let accessToken: TimeInterval
    let refreshToken: TimeInterval
    let offlineSession: TimeInterval

    init(_ configuration: IdpServer.Configuration) {
        authSession = configuration.authSessionLifetime.timeInterval
        accessToken = configuration.accessTokenLifetime.timeInterval
        refreshToken = configuration.refreshTokenLifetime.timeInterval
        offlineSession = configuration.offlineSessionMax.timeInterval
    }
}

/// A user as the IDP sees them, without secrets.
public struct IdpUserSnapshot: Sendable, Equatable {
    /// Whether the user has activated: `pendingActivation` until an activation code is consumed,
    /// then `active`.
    public enum Status: String, Sendable {
        /// Added, with no activation code consumed yet: the user cannot log in.
        case pendingActivation
        /// Activated: the user may log in.
        case active
    }
    /// The user's id in the tenant.
    public var userId: String
    /// Whether the user has activated.
    public var status: Status
    /// Wrong secrets since the last success or the last lockout (the lockout rules count these).
    public var failedAttempts: Int
    /// Wrong secrets since the last success, across lockouts.
    public var totalFailedAttempts: Int
    /// Lockouts since the last success.
    public var lockouts: Int
    /// The lock in force at the time of the snapshot, if any.
    public var lockout: LockoutInformation?
    /// Activation codes issued and not yet used (expired ones included until used or pruned).
    public var outstandingActivationCodes: Int
    /// Password-reset codes issued and not yet used (expired ones included until used).
    public var outstandingPasswordResetCodes: Int
    /// The AST client ids of the devices this user activated.
    public var astClientIds: [String]

    init(_ record: UserRecord, now: Date) {
        userId = record.id
        status = record.status
        failedAttempts = record.failedAttempts
        totalFailedAttempts = record.totalFailedAttempts
        lockouts = record.lockouts
        lockout = record.lockout(at: now)
        outstandingActivationCodes = record.activationCodes.count
        outstandingPasswordResetCodes = record.passwordResetCodes.count
        astClientIds = record.astClientIds
    }
}

/// Live state counts of an ``IdpServer``.
public struct IdpServerStatistics: Sendable, Equatable {
    /// Login flows in progress (authorize requests not yet completed, failed or expired).
    public var authSessions: Int
    /// Authorization codes issued and not yet redeemed.
    public var outstandingCodes: Int
    /// Redeemed codes still remembered, so that a second redemption is refused.
    public var redeemedCodes: Int
    /// Tokens the IDP holds (access, refresh, offline and exchanged ones).
    public var tokens: Int
}
