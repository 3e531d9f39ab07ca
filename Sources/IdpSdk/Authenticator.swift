import Dispatch
import Foundation
import IdpPrimitives
import IdpWireFormats

/// Who is authenticating, for what, and the secrets signed so far: what
/// ``Authenticator/finishAuthenticationSynchronous(userInfo:)`` submits.
///
/// The secrets are kept by factor (the IDP form's field ids: `username`, `password`, …) and never
/// shown by `description`. A lockout hands it back with its signatures cleared, as the documents
/// say: "all previous supplied signatures have been cleared".
public struct AuthenticationUserInformation: Sendable, Equatable, CustomStringConvertible {
    /// Why the authentication runs; it decides the ``AuthenticationResult`` case of a success.
    public enum Purpose: Sendable, Equatable {
        /// A normal user login; a success is ``AuthenticationResult/userLogin(_:)``.
        case userLogin
        /// An in-app authentication for a service; a success is
        /// ``AuthenticationResult/serviceLogin(_:)``.
        case serviceLogin
        /// Authentication to add a factor; a success is
        /// ``AuthenticationResult/apiAccessAddFactor(_:)``.
        case addFactor
        /// Authentication to change the PIN; a success is
        /// ``AuthenticationResult/apiAccessChangePin(_:)``.
        case changePin
        /// Merging the account into the IDM account `idmIdentifier`; a success is
        /// ``AuthenticationResult/apiAccessMergeComplete(idmIdentifier:)``.
        case mergeAccount(idmIdentifier: String)
        /// Authentication to request new activation data; a success is
        /// ``AuthenticationResult/apiAccessRequestNewActivationData(_:)``.
        case requestNewActivationData
        /// Authentication to delete the account; a success is
        /// ``AuthenticationResult/apiAccessDelete(_:)``.
        case delete
    }

    /// The tenant (realm) the user belongs to.
    public let tenantId: String
    /// The user, or `nil` when the form asks for the username.
    public let userId: String?
    /// The IDP client whose steps are answered.
    public let clientId: String
    /// Why the authentication runs.
    public let purpose: Purpose
    /// The signed secrets by factor (field id).
    public private(set) var signatures: [String: String]

    /// The information for a process.
    ///
    /// - Parameters:
    ///   - tenantId: The tenant (realm) the user belongs to.
    ///   - userId: The user, or `nil` when the form asks for the username.
    ///   - clientId: The IDP client whose steps are answered.
    ///   - purpose: Why the authentication runs; a user login by default.
    ///   - signatures: The signed secrets by factor (field id); none by default.
    public init(tenantId: String, userId: String?, clientId: String, purpose: Purpose = .userLogin, signatures: [String: String] = [:]) {
        self.tenantId = tenantId
        self.userId = userId.flatMap { $0.isEmpty ? nil : $0 }
        self.clientId = clientId
        self.purpose = purpose
        self.signatures = signatures
    }

    /// Signs one factor: the value answers the form field `factor`.
    public mutating func sign(_ factor: String, with value: String) { signatures[factor] = value }

    /// The same user and purpose with no signatures.
    public var clearingSignatures: AuthenticationUserInformation {
        AuthenticationUserInformation(tenantId: tenantId, userId: userId, clientId: clientId, purpose: purpose)
    }

    /// Names the signed factors, never their values.
    public var description: String {
        "AuthenticationUserInformation(\(tenantId)/\(userId ?? "-"), client: \(clientId), purpose: \(purpose), signed: \(signatures.keys.sorted()))"
    }
}

/// Finishes an authentication by running the IdpSdk flow of ``AuthenticationUserInformation/clientId``
/// with the signed secrets as the answers: the `Authenticator` of the documents' seeds/003, over the
/// in-process IDP.
///
/// Threading: ``finishAuthenticationSynchronous(userInfo:)`` blocks its thread until the flow ends,
/// so it refuses (throws ``IdpSdkError/Code/blockingCallInsideTask``) inside a Swift task; call
/// ``finishAuthentication(userInfo:)`` there.
public final class Authenticator: Sendable {
    private let service: LockedValue<IdpSdkService?>

    init() { service = LockedValue(nil) }

    /// Uses `idpSdk` (its tenant's IDP) for every authentication from now on.
    public func use(_ idpSdk: IdpSdkService) { service.withLock { $0 = idpSdk } }

    /// Submits `userInfo`'s signatures and waits for the end.
    /// - Throws: ``IdpSdkError``: ``IdpSdkError/Code/blockingCallInsideTask`` inside a task,
    ///   ``IdpSdkError/Code/invalidArgument`` when no IdpSdk is set (``use(_:)``), and any flow
    ///   error other than a lockout (which is a result).
    public func finishAuthenticationSynchronous(userInfo: AuthenticationUserInformation) throws -> AuthenticationResult {
        if withUnsafeCurrentTask(body: { $0 != nil }) {
            throw IdpSdkError(.blockingCallInsideTask, "finishAuthenticationSynchronous blocks its thread; call finishAuthentication(userInfo:) with await inside a task")
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedValue<Result<AuthenticationResult, IdpSdkError>?>(nil)
        try start(userInfo) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// The `async` form of ``finishAuthenticationSynchronous(userInfo:)``; it holds no thread.
    public func finishAuthentication(userInfo: AuthenticationUserInformation) async throws -> AuthenticationResult {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try start(userInfo) { continuation.resume(with: $0) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    private func start(_ userInfo: AuthenticationUserInformation, completion: @escaping @Sendable (Result<AuthenticationResult, IdpSdkError>) -> Void) throws(IdpSdkError) {
        guard let idpSdk = service.withLock({ $0 }) else {
            throw IdpSdkError(.invalidArgument, "the Authenticator has no IdpSdk: call XignSdk.shared.authenticator.use(idpSdk) first")
        }
        guard userInfo.tenantId == idpSdk.tenantId else {
            throw IdpSdkError(.invalidArgument, "the user information is for tenant '\(userInfo.tenantId)', the IdpSdk for '\(idpSdk.tenantId)'")
        }
        let verifier = PKCE.makeVerifier()
        let info = AstClientDataInfo(clientData: SecureRandom.token(), astClientId: "", codeChallenge: PKCE.challenge(for: verifier), codeChallengeMethod: PKCE.methodS256)
        idpSdk.getAuthorizationCode(withAstClientData: info, clientId: userInfo.clientId, interactionInterface: SignedAnswers(userInfo),
                                    userId: userInfo.userId, traceParent: nil) { result in
            completion(Self.outcome(of: result, for: userInfo))
        }
    }

    static func outcome(of result: IdpSdkResult, for userInfo: AuthenticationUserInformation) -> Result<AuthenticationResult, IdpSdkError> {
        if let error = result.idpSdkError {
            guard let lockout = error.lockoutInformation else { return .failure(error) }
            return .success(.lockout(lockoutInformation: lockout, authenticationUserInformation: userInfo.clearingSignatures))
        }
        let code = result.authorizationCode ?? ""
        let proof = AuthenticatedProcess(authorizationCode: code, userInformation: userInfo.clearingSignatures)
        let result: AuthenticationResult = switch userInfo.purpose {
        case .userLogin: .userLogin(UserLoginResult(authorizationCode: code, roleName: userInfo.clientId, serviceInformation: userInfo.tenantId))
        case .serviceLogin: .serviceLogin(proof)
        case .addFactor: .apiAccessAddFactor(proof)
        case .changePin: .apiAccessChangePin(proof)
        case .mergeAccount(let idmIdentifier): .apiAccessMergeComplete(idmIdentifier: idmIdentifier)
        case .requestNewActivationData: .apiAccessRequestNewActivationData(proof)
        case .delete: .apiAccessDelete(proof)
        }
        return .success(result)
    }
}

/// Answers each step from the signed secrets.
private struct SignedAnswers: IdpSdkInteractionInterface, Sendable {
    let userInfo: AuthenticationUserInformation
    init(_ userInfo: AuthenticationUserInformation) { self.userInfo = userInfo }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        var answers: [String: String] = [:]
        for id in interactionData.inputFieldIds {
            guard let value = userInfo.signatures[id] else {
                return .init(error: IdpSdkError(.missingCredentialField, "no signature for factor '\(id)' of step \(interactionData.step) of client '\(interactionData.clientId)'"))
            }
            answers[id] = value
        }
        // A wrong secret that the IDP re-asks is not signed again: the process ends, as a lockout
        // does, and the user signs afresh.
        if let rejection = interactionData.previousError { return .init(error: rejection) }
        return .init(credentials: answers)
    }
}

/// The entry point of the documents' seeds/003 sample: `XignSdk.shared.authenticator`.
public final class XignSdk: Sendable {
    /// The one instance.
    public static let shared = XignSdk()
    /// Finishes authentications; point it at an IdpSdk with ``Authenticator/use(_:)``.
    public let authenticator = Authenticator()
    private init() {}
}
