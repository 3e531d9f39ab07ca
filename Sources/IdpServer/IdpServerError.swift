/// A refused administrative call on ``IdpServer`` (adding tenants, clients, users, codes).
///
/// HTTP requests never throw: they get an HTTP error response, as from a real IDP.
public struct IdpServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Sendable, Equatable {
        /// A tenant with this id already exists.
        case tenantExists(String)
        /// No tenant has this id.
        case unknownTenant(String)
        /// A client with this id already exists in the tenant.
        case clientExists(String)
        /// The client configuration is not valid; the text says what is wrong.
        case invalidClient(String)
        /// A user with this id already exists in the tenant.
        case userExists(String)
        /// The tenant has no user with this id.
        case unknownUser(String)
        /// An argument is not valid (an empty id, an inactive user, …); the text says what is
        /// wrong.
        case invalidArgument(String)
    }

    /// What was wrong.
    public let reason: Reason

    /// An error for `reason`.
    ///
    /// - Parameter reason: What was wrong.
    public init(_ reason: Reason) { self.reason = reason }

    /// A sentence naming the problem, e.g. `no user 'alice' in this tenant`.
    public var description: String {
        switch reason {
        case .tenantExists(let id): "tenant '\(id)' already exists"
        case .unknownTenant(let id): "no tenant '\(id)'"
        case .clientExists(let id): "client '\(id)' already exists in this tenant"
        case .invalidClient(let problem): "invalid client: \(problem)"
        case .userExists(let id): "user '\(id)' already exists in this tenant"
        case .unknownUser(let id): "no user '\(id)' in this tenant"
        case .invalidArgument(let problem): "invalid argument: \(problem)"
        }
    }
}
