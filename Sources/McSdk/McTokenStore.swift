import Foundation
import IdpPrimitives

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
/// `LockedValue`, held only to copy or change them.
public final class McTokenStore: Sendable {
    struct Contents {
        var users: [KsUserIdentifier: StoredUser] = [:]
        var enrollmentOrder: [KsUserIdentifier] = []
        var lastLoggedInUser: KsUserIdentifier?
        /// The device's AST client id, from its first activation; every later user shares it.
        var deviceAstClientId: String?
    }

    private let contents = LockedValue(Contents())

    /// An empty store: a fresh installation.
    public init() {}

    /// The activated users, in activation order.
    public var userList: [KsUserIdentifier] { contents.withLock { $0.enrollmentOrder } }

    /// The user of the last successful login (SetAuthorisationCode or OfflineLogin), if any.
    public var lastLoggedInUser: KsUserIdentifier? { contents.withLock { $0.lastLoggedInUser } }

    /// The tokens stored for `user`, or `nil` if the user is not activated here.
    public func tokens(for user: KsUserIdentifier) -> McTokenSet? { contents.withLock { $0.users[user]?.tokens } }

    func user(_ user: KsUserIdentifier) -> StoredUser? { contents.withLock { $0.users[user] } }

    /// The device's AST client id (its binding at the IDP), once a user was activated here.
    var deviceAstClientId: String? { contents.withLock { $0.deviceAstClientId } }

    /// Stores `record` for `user` (activating the user if new).
    func save(_ record: StoredUser, for user: KsUserIdentifier, loggedIn: Bool) {
        contents.withLock { contents in
            if contents.users.updateValue(record, forKey: user) == nil { contents.enrollmentOrder.append(user) }
            if loggedIn { contents.lastLoggedInUser = user }
            if contents.deviceAstClientId == nil, record.astClientId.contains(where: { $0 != "0" && $0 != "-" }) {
                contents.deviceAstClientId = record.astClientId
            }
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
    var astClientId: String
    var authenticationMode: KSMAuthenticationMode
}

/// The tokens the MC holds for a user. A token is `nil` once cleared by
/// ``KSMClearIamTokenCacheEvent``. `description` never shows them.
public struct McTokenSet: Sendable, CustomStringConvertible {
    public internal(set) var accessToken: String?
    public internal(set) var refreshToken: String?
    public internal(set) var offlineToken: String?
    public let userId: String
    public let astClientId: String
    /// The IDP client the tokens were issued to (the `client_id` of refresh requests).
    public let clientId: String
    /// When the access token expires, by the IDP's `expires_in` counted on the MC's clock.
    public internal(set) var accessTokenExpiresAt: Date

    public var description: String {
        "McTokenSet(user: \(userId), access: \(accessToken == nil ? "none" : "expires \(accessTokenExpiresAt)"), refresh: \(refreshToken == nil ? "none" : "kept"), offline: \(offlineToken == nil ? "none" : "kept"))"
    }
}
