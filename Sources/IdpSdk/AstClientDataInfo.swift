/// The AST client data of a `KSMGetAstClientDataResultEvent`, as `getAuthorizationCode` takes it.
///
/// `McSdk` adds `init(astClientData:)`, which builds it from the result event.
public struct AstClientDataInfo: Sendable, Equatable, CustomStringConvertible {
    /// The opaque AST client data, sent to the IDP as `X-KOBIL-ASTCLIENTDATA`.
    public let clientData: String
    /// The AST client id; all zeros for a device with no user yet. Sent as `X-KOBIL-ASTCLIENTID`
    /// when not all zeros.
    public let astClientId: String
    /// The RFC 7636 code challenge of the MC's verifier.
    public let codeChallenge: String
    /// The challenge method; the IDP accepts `S256`.
    public let codeChallengeMethod: String

    /// The Kotlin samples' positional form.
    public init(_ clientData: String, _ astClientId: String, _ codeChallenge: String, _ codeChallengeMethod: String) {
        self.clientData = clientData
        self.astClientId = astClientId
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
    }

    /// The Swift samples' labelled form.
    ///
    /// - Parameters:
    ///   - clientData: The opaque AST client data.
    ///   - astClientId: The AST client id; all zeros for a device with no user yet.
    ///   - codeChallenge: The RFC 7636 code challenge of the MC's verifier.
    ///   - codeChallengeMethod: The challenge method; the IDP accepts `S256`.
    public init(clientData: String, astClientId: String, codeChallenge: String, codeChallengeMethod: String) {
        self.init(clientData, astClientId, codeChallenge, codeChallengeMethod)
    }

    /// The AST client id and the challenge method; never the client data or the challenge.
    public var description: String {
        "AstClientDataInfo(astClientId: \(astClientId), codeChallengeMethod: \(codeChallengeMethod))"
    }
}
