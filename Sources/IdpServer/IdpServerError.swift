/// A refused administrative call on ``IdpServer`` (adding tenants, clients, users, codes).
///
/// HTTP requests never throw: they get an HTTP error response, as from a real IDP.
public struct IdpServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Sendable, Equatable {
        case tenantExists(String)
        case unknownTenant(String)
        case clientExists(String)
        case invalidClient(String)
        case userExists(String)
        case unknownUser(String)
        case invalidArgument(String)
    }

    public let reason: Reason

    public init(_ reason: Reason) { self.reason = reason }

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
