import IdpPrimitives
import IdpWireFormats

/// The Kotlin documents' name of `LockoutInformation`.
public typealias LockoutAttemptInformation = LockoutInformation

/// How an authentication ended, with the documents' eight cases (seeds/003): switch on it to handle
/// a lockout apart from the other ends.
///
/// ```swift
/// switch result {
/// case .userLogin(let userLoginResult): …            // userLoginResult.authorizationCode
/// case .serviceLogin(let serviceLoginResult): …
/// case .apiAccessAddFactor(let apiAccessAddFactor): …
/// case .apiAccessChangePin(let apiAccessChangePin): …
/// case .apiAccessMergeComplete(idmIdentifier: let idmIdentifier): …
/// case .apiAccessRequestNewActivationData(let request): …
/// case .apiAccessDelete(let apiAccessDelete): …
/// case .lockout(lockoutInformation: let lockoutInformation, authenticationUserInformation: let info):
///     if lockoutInformation.isPermanent { /* disabled */ } else { /* wait until lockedUntil, sign info again */ }
/// }
/// ```
///
/// An IdpSdk flow ends in ``userLogin(_:)`` or ``lockout(lockoutInformation:authenticationUserInformation:)``
/// (``IdpSdkResult/authenticationResult``); the other cases end an ``Authenticator`` process started
/// for that purpose (``AuthenticationUserInformation/Purpose``). Any other failure is an
/// ``IdpSdkError``, not a case, so the documents' exhaustive `switch` compiles as printed.
public enum AuthenticationResult: Sendable, Equatable {
    /// The end of a normal user login.
    case userLogin(UserLoginResult)
    /// The end of the authentication of an in-app authentication; continue with the service.
    case serviceLogin(ServiceLoginResult)
    /// Authenticated to add a factor.
    case apiAccessAddFactor(ApiAccessAddFactor)
    /// Authenticated to change the PIN.
    case apiAccessChangePin(ApiAccessChangePin)
    /// An account merge succeeded.
    case apiAccessMergeComplete(idmIdentifier: String)
    /// Authenticated to request new activation data.
    case apiAccessRequestNewActivationData(ApiAccessRequestNewActivationData)
    /// Authenticated to delete the account.
    case apiAccessDelete(ApiAccessDelete)
    /// A supplied secret was wrong and locked the account, or it was locked already (then nothing
    /// was evaluated). Wait for `LockoutInformation/lockedUntil`, sign
    /// `authenticationUserInformation` again (its signatures are cleared) and retry.
    case lockout(lockoutInformation: LockoutInformation, authenticationUserInformation: AuthenticationUserInformation)
}

/// The end of a normal user login: the authorization code for `KSMSetAuthorisationCodeEvent` and
/// some metadata.
public struct UserLoginResult: Sendable, Equatable, CustomStringConvertible {
    /// The authorization code.
    public let authorizationCode: String
    /// The role the user logged in with (the IDP client).
    public let roleName: String
    /// What the service is, for display (the tenant).
    public let serviceInformation: String

    /// A login result.
    ///
    /// - Parameters:
    ///   - authorizationCode: The authorization code.
    ///   - roleName: The role the user logged in with (the IDP client).
    ///   - serviceInformation: What the service is, for display (the tenant).
    public init(authorizationCode: String, roleName: String, serviceInformation: String) {
        self.authorizationCode = authorizationCode
        self.roleName = roleName
        self.serviceInformation = serviceInformation
    }

    /// Never shows the code.
    public var description: String { "UserLoginResult(role: \(roleName), service: \(serviceInformation))" }
}

/// What a finished process of another purpose carries: the authorization code that proves the
/// authentication, and the user information to continue with.
public struct AuthenticatedProcess: Sendable, Equatable, CustomStringConvertible {
    /// The authorization code that proves the authentication.
    public let authorizationCode: String
    /// The user and purpose the process was started for.
    public let userInformation: AuthenticationUserInformation

    /// A finished process.
    ///
    /// - Parameters:
    ///   - authorizationCode: The authorization code that proves the authentication.
    ///   - userInformation: The user and purpose the process was started for.
    public init(authorizationCode: String, userInformation: AuthenticationUserInformation) {
        self.authorizationCode = authorizationCode
        self.userInformation = userInformation
    }

    /// Never shows the code.
    public var description: String { "AuthenticatedProcess(\(userInformation))" }
}

/// The documents' result types of the other purposes; each carries the proof of authentication.
public typealias ServiceLoginResult = AuthenticatedProcess
/// The documents' result type of ``AuthenticationUserInformation/Purpose/addFactor``.
public typealias ApiAccessAddFactor = AuthenticatedProcess
/// The documents' result type of ``AuthenticationUserInformation/Purpose/changePin``.
public typealias ApiAccessChangePin = AuthenticatedProcess
/// The documents' result type of
/// ``AuthenticationUserInformation/Purpose/requestNewActivationData``.
public typealias ApiAccessRequestNewActivationData = AuthenticatedProcess
/// The documents' result type of ``AuthenticationUserInformation/Purpose/delete``.
public typealias ApiAccessDelete = AuthenticatedProcess

extension IdpSdkResult {
    /// This result as the documents' ``AuthenticationResult``: ``AuthenticationResult/userLogin(_:)``
    /// with the code, ``AuthenticationResult/lockout(lockoutInformation:authenticationUserInformation:)``
    /// when the account is locked, `nil` for any other error (read ``idpSdkError``).
    public var authenticationResult: AuthenticationResult? {
        if let idpSdkError {
            guard let lockout = idpSdkError.lockoutInformation else { return nil }
            return .lockout(lockoutInformation: lockout, authenticationUserInformation: flowUser ?? AuthenticationUserInformation(tenantId: "", userId: nil, clientId: ""))
        }
        return .userLogin(UserLoginResult(authorizationCode: authorizationCode ?? "", roleName: flowUser?.clientId ?? "", serviceInformation: flowUser?.tenantId ?? ""))
    }
}
