import IdpPrimitives
import IdpSdk

/// The outcome of ``MasterController/loginAfterRestart(_:authenticationMode:idpSdk:clientId:interactionInterface:traceParent:)``.
public struct LoginAfterRestartResult: Sendable {
    /// Which way the user got in (or was last tried).
    public enum Path: Sendable, Equatable {
        /// OfflineLogin with the stored tokens succeeded; no credentials were asked.
        case offlineLogin
        /// OfflineLogin did not succeed, and a fresh IdpSdk login was run.
        case idpLogin
    }

    /// ``KSMEventStatusType/kOk`` if the user is logged in. Otherwise, after a fresh login: the
    /// SetAuthorisationCode status, or the IdpSdk failure as
    /// ``KSMEventStatusType/init(idpSdkError:)`` maps it (a lock, wrong credentials, an
    /// unreachable IDP, …).
    public let status: KSMEventStatusType
    /// Whether OfflineLogin was enough or a fresh IdpSdk login was run.
    public let path: Path
    /// What OfflineLogin answered first.
    public let offlineLoginStatus: KSMEventStatusType
    /// How the fresh IdpSdk login ended, when it ran (`.lockout` carries the lock).
    public let authenticationResult: AuthenticationResult?
    /// What went wrong, or empty.
    public let errorDescription: String
}

extension MasterController {
    /// The documents' recommended login after a restart, as one call: an OfflineLogin first and,
    /// on any status but OK, a fresh IdpSdk login (GetAstClientData, `getAuthorizationCode`,
    /// SetAuthorisationCode) with the same `authenticationMode`.
    ///
    /// ```swift
    /// let start = await masterController.receive(KSMStartEvent()) as! KSMStartResultEvent
    /// let user = start.userList[0]
    /// let result = await masterController.loginAfterRestart(user, authenticationMode: .no, idpSdk: idpSdk,
    ///                                                       interactionInterface: handler)
    /// if result.status == .kOk { /* logged in, by result.path */ }
    /// ```
    /// - Parameters:
    ///   - user: An activated user (from the Start or Restart result's user list); its id is the
    ///     `userId` of the IdpSdk login.
    ///   - authenticationMode: The mode the user logged in with before.
    ///   - idpSdk: The IdpSdk that runs the fresh login if the offline login fails.
    ///   - clientId: The IDP login client.
    ///   - interactionInterface: Asked for the credentials if the fresh login runs (on an SDK thread).
    ///   - traceParent: The W3C traceparent of the fresh login, or `nil` for a new trace.
    public func loginAfterRestart(
        _ user: KsUserIdentifier,
        authenticationMode: KSMAuthenticationMode,
        idpSdk: IdpSdkService,
        clientId: String = "KssIdpLogin",
        interactionInterface: any IdpSdkInteractionInterface,
        traceParent: String? = nil
    ) async -> LoginAfterRestartResult {
        let offline = await receive(KSMOfflineLoginEvent(userIdentifier: user)) as! KSMOfflineLoginResultEvent
        if offline.status == .kOk {
            return LoginAfterRestartResult(status: .kOk, path: .offlineLogin, offlineLoginStatus: .kOk, authenticationResult: nil, errorDescription: "")
        }
        func ended(_ status: KSMEventStatusType, _ authentication: AuthenticationResult?, _ description: String) -> LoginAfterRestartResult {
            LoginAfterRestartResult(status: status, path: .idpLogin, offlineLoginStatus: offline.status, authenticationResult: authentication, errorDescription: description)
        }
        let ast = await receive(KSMGetAstClientDataEvent(userIdentifier: user)) as! KSMGetAstClientDataResultEvent
        guard ast.status == .kOk else { return ended(ast.status, nil, ast.errorDescription) }
        let result = await idpSdk.getAuthorizationCode(
            withAstClientData: AstClientDataInfo(astClientData: ast), clientId: clientId,
            interactionInterface: interactionInterface, userId: user.userId, traceParent: traceParent
        )
        let authentication = result.authenticationResult
        switch authentication {
        case .lockout(let lockout, _)?:
            return ended(KSMEventStatusType(lockout: lockout), authentication, result.idpSdkError?.errorDescription ?? "\(lockout)")
        case .userLogin(let login)?:
            let set = await receive(KSMSetAuthorisationCodeEvent(
                userIdentifier: user, authenticationMode: authenticationMode, authorisationCode: login.authorizationCode, clientId: clientId
            )) as! KSMSetAuthorisationCodeResultEvent
            return ended(set.status, authentication, set.errorDescription)
        default:
            guard let error = result.idpSdkError else { return ended(.kCannotAcquireAuthorizationCode, authentication, "no authorization code") }
            return ended(KSMEventStatusType(idpSdkError: error), authentication, error.errorDescription)
        }
    }
}
