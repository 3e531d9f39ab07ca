import IdpPrimitives

/// The Kotlin documents' name of ``LockoutInformation``.
public typealias LockoutAttemptInformation = LockoutInformation

/// How an IdpSdk flow ended, in the shape of the documents' `AuthenticationResult`: switch on it
/// to handle a lockout apart from other failures.
///
/// ```swift
/// let result = await idpSdk.getAuthorizationCode(withAstClientData: info, clientId: "KssIdpLogin",
///                                                interactionInterface: provider, userId: userId, traceParent: nil)
/// switch result.authenticationResult {
/// case .userLogin(let authorizationCode):
///     // pass it to KSMSetAuthorisationCodeEvent
/// case .lockout(let lockoutInformation):
///     if lockoutInformation.isPermanent { /* the account is disabled */ }
///     else { /* wait until lockoutInformation.lockedUntil, then retry with all factors */ }
/// case .failure(let error):
///     // any other IdpSdkError
/// }
/// ```
public enum AuthenticationResult: Sendable, Equatable {
    /// The user authenticated; the authorization code is for `KSMSetAuthorisationCodeEvent`.
    case userLogin(authorizationCode: String)
    /// A wrong secret locked the account, or it was locked already (then the answers were not
    /// even evaluated). The documents' `.lockout(lockoutInformation:authenticationUserInformation:)`;
    /// there is no signed user information to retry with here: start a new flow after the lock.
    case lockout(lockoutInformation: LockoutInformation)
    /// Any other error.
    case failure(IdpSdkError)
}

extension IdpSdkResult {
    /// This result as an ``AuthenticationResult``.
    public var authenticationResult: AuthenticationResult {
        if let idpSdkError {
            if let lockout = idpSdkError.lockoutInformation { return .lockout(lockoutInformation: lockout) }
            return .failure(idpSdkError)
        }
        return .userLogin(authorizationCode: authorizationCode ?? "")
    }
}
