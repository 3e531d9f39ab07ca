/// The outcome of `getAuthorizationCode`: an authorization code or an error, never both.
///
/// Check ``hasError()`` before reading ``authorizationCode``, as the documents do.
public struct IdpSdkResult: Sendable, CustomStringConvertible {
    /// The authorization code, to be passed to `KSMSetAuthorisationCodeEvent`; `nil` on error.
    public let authorizationCode: String?
    /// The error; `nil` on success. A provider's error is here unchanged.
    public let idpSdkError: IdpSdkError?
    /// The flow that produced this result.
    public let flowId: IdpSdkFlowID?
    /// The tenant, user and client of the flow, for ``authenticationResult``.
    let flowUser: AuthenticationUserInformation?

    /// A success.
    ///
    /// - Parameters:
    ///   - authorizationCode: The authorization code.
    ///   - flowId: The flow that produced it; `nil` if none.
    public init(authorizationCode: String, flowId: IdpSdkFlowID? = nil) {
        self.authorizationCode = authorizationCode
        self.idpSdkError = nil
        self.flowId = flowId
        self.flowUser = nil
    }

    /// A failure.
    ///
    /// - Parameters:
    ///   - error: Why the flow failed.
    ///   - flowId: The flow that failed; `nil` if none.
    public init(error: IdpSdkError, flowId: IdpSdkFlowID? = nil) {
        self.authorizationCode = nil
        self.idpSdkError = error
        self.flowId = flowId
        self.flowUser = nil
    }

    init(_ outcome: Result<String, IdpSdkError>, flowId: IdpSdkFlowID, user: AuthenticationUserInformation) {
        switch outcome {
        case .success(let code): authorizationCode = code; idpSdkError = nil
        case .failure(let error): authorizationCode = nil; idpSdkError = error
        }
        self.flowId = flowId
        self.flowUser = user
    }

    /// Whether the flow ended with an error.
    public func hasError() -> Bool { idpSdkError != nil }

    /// Never shows the code itself.
    public var description: String {
        if let idpSdkError { return "IdpSdkResult(error: \(idpSdkError))" }
        return "IdpSdkResult(authorizationCode: <\(authorizationCode?.count ?? 0) characters>)"
    }
}
