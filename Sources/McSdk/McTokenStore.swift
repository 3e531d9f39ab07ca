import Foundation
import IdpPrimitives
import Synchronization
import IdpWireFormats

/// What the MC keeps on the device across app restarts: the activated users, their tokens and
/// authentication modes, and the last user who logged in.
///
/// A restart of the app is a new ``MasterController`` on the same store:
///
/// ```swift
/// let store = McTokenStore()
/// let before = MasterController(configuration: .init(idpUrl: url, tokenStore: store))
/// // … activate and log in …
/// let after = MasterController(configuration: .init(idpUrl: url, tokenStore: store))   // "restart"
/// let start = await after.receive(KSMStartEvent()) as! KSMStartResultEvent         // LOGIN_REQUIRED, same users
/// ```
///
/// Thread safety: every member may be used from any thread; the contents live in one
/// `LockedValue`, held only to copy or change them, and the failure switch is an atomic flag
/// (read twice per login, it publishes nothing else).
public final class McTokenStore: Sendable {
    struct Contents {
        var users: [KsUserIdentifier: StoredUser] = [:]
        var enrollmentOrder: [KsUserIdentifier] = []
        var lastLoggedInUser: KsUserIdentifier?
        /// The device's AST client id, from its first activation; every later user shares it.
        var deviceAstClientId: String?
    }

    private let contents = LockedValue(Contents())
    private let failing = Atomic<Bool>(false)

    /// An empty store: a fresh installation.
    public init() {}

    /// Makes the device's storage fail (a locked keychain, a corrupted file) or work again. While
    /// it fails, every MC event that needs the store ends with ``KSMEventStatusType/kInternalError``
    /// and changes nothing: the simulation's trigger for that documented status.
    public func simulateStorageFailure(_ fail: Bool) { failing.store(fail, ordering: .sequentiallyConsistent) }

    /// Whether the storage fails now.
    var isFailing: Bool { failing.load(ordering: .sequentiallyConsistent) }

    /// The activated users, in activation order.
    package var userList: [KsUserIdentifier] { contents.withLock { $0.enrollmentOrder } }

    /// The user of the last successful login (SetAuthorisationCode or OfflineLogin), if any.
    package var lastLoggedInUser: KsUserIdentifier? { contents.withLock { $0.lastLoggedInUser } }

    /// The tokens stored for `user`, or `nil` if the user is not activated here. Internal: the MC
    /// never hands its tokens to the app (apps use ``KSMExchangeIamTokenEvent``).
    func tokens(for user: KsUserIdentifier) -> McTokenSet? { contents.withLock { $0.users[user]?.tokens } }

    func user(_ user: KsUserIdentifier) -> StoredUser? { contents.withLock { $0.users[user] } }

    /// Which kinds of token the store holds for `user` (never the tokens themselves), or `nil` if
    /// the user is not activated here: what the system stress reads to judge that a logout
    /// stays one.
    package func heldTokens(of user: KsUserIdentifier) -> (access: Bool, refresh: Bool, offline: Bool)? {
        contents.withLock { contents in
            contents.users[user].map { ($0.tokens.accessToken != nil, $0.tokens.refreshToken != nil, $0.tokens.offlineToken != nil) }
        }
    }

    /// The device's AST client id (its binding at the IDP), once a user was activated here.
    var deviceAstClientId: String? { contents.withLock { $0.deviceAstClientId } }

    /// Stores `record` for `user` (activating the user if new).
    func save(_ record: consuming StoredUser, for user: KsUserIdentifier, loggedIn: Bool) {
        let assigned = IdpWire.isAssigned(astClientId: record.tokens.astClientId)
        // Moved into the dictionary, not copied; the record it replaces is returned, so it is
        // released after the lock, with its strings.
        var saving = Optional(record)
        _ = contents.withLock { contents -> StoredUser? in
            let record = saving.take()!
            if assigned, contents.deviceAstClientId == nil { contents.deviceAstClientId = record.tokens.astClientId }
            let replaced = contents.users.updateValue(record, forKey: user)
            if replaced == nil { contents.enrollmentOrder.append(user) }
            if loggedIn { contents.lastLoggedInUser = user }
            return replaced
        }
    }

    /// Changes the tokens of `user` if the user is activated; returns the result of `body`.
    func updateTokens<T>(of user: KsUserIdentifier, _ body: (inout McTokenSet) -> T) -> T? {
        contents.withLock { contents in
            guard contents.users[user] != nil else { return nil }
            return body(&contents.users[user]!.tokens)
        }
    }

    func markLoggedIn(_ user: KsUserIdentifier) { contents.withLock { $0.lastLoggedInUser = user } }
}

/// An activated user as the store keeps them.
struct StoredUser: Sendable {
    var tokens: McTokenSet
    var authenticationMode: KSMAuthenticationMode
}

/// The tokens the MC holds for a user; they never leave the MC. A token is `nil` once cleared by
/// ``KSMClearIamTokenCacheEvent``. `description` never shows them.
struct McTokenSet: Sendable, CustomStringConvertible {
    var accessToken: String?
    var refreshToken: String?
    var offlineToken: String?
    let userId: String
    let astClientId: String
    /// The IDP client the tokens were issued to (the `client_id` of refresh requests).
    let clientId: String
    /// When the access token expires, by the IDP's `expires_in` counted on the MC's clock.
    var accessTokenExpiresAt: Date

    var description: String {
        "McTokenSet(user: \(userId), access: \(accessToken == nil ? "none" : "expires \(accessTokenExpiresAt)"), refresh: \(refreshToken == nil ? "none" : "kept"), offline: \(offlineToken == nil ? "none" : "kept"))"
    }
}
