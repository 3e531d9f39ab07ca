import IdpSdk

extension AstClientDataInfo {
    /// The IdpSdk's view of a `KSMGetAstClientDataResultEvent`, as the iOS samples build it.
    public init(astClientData: KSMGetAstClientDataResultEvent) {
        self.init(astClientData.clientData, astClientData.astClientId, astClientData.codeChallenge, astClientData.codeChallengeMethod)
    }
}
