import IdpSdk

/// The errors the providers of this module return to end a flow. Each is an `IdpSdkError` with
/// subsystem ``subsystem`` and one of these codes, so it comes back unchanged in the flow's
/// `IdpSdkResult`.
public enum CredentialProviderError {
    /// The subsystem of every error this module's providers return.
    public static let subsystem = "CredentialProviders"

    /// The codes of the errors the providers of this module answer with.
    public enum Code: Int, Sendable, CaseIterable {
        /// The provider has no credentials for the flow's user.
        case noCredentials = 2001
        /// The provider has credentials for the user but no value for a requested field.
        case missingValue = 2002
        /// The IDP rejected every answer the provider had for a step.
        case answersExhausted = 2003
        /// The async answer did not arrive within the bridge's timeout.
        case timedOut = 2004
        /// The flow ended (cancelled, timed out) while the bridge waited for its answer.
        case cancelled = 2005
        /// A blocking provider was called from inside a Swift task or on the main thread, where
        /// waiting could deadlock; it refused instead of blocking.
        case calledWhereBlockingIsUnsafe = 2006
        /// The async answer threw (or a refresh or mapping threw something that is not an
        /// `IdpSdkError`).
        case answerFailed = 2007
        /// ``TokenCacheProvider/clear()`` forgot the token while the refresh the caller waited
        /// for was in flight.
        case cleared = 2008
    }

    /// An `IdpSdkError` of this module.
    public static func make(_ code: Code, _ description: String) -> IdpSdkError {
        IdpSdkError(subsystem, code.rawValue, description)
    }
}

extension IdpSdkError {
    /// The provider error code, if a provider of `CredentialProviders` returned this error.
    public var credentialProviderCode: CredentialProviderError.Code? {
        subsystem == CredentialProviderError.subsystem ? CredentialProviderError.Code(rawValue: errorCode) : nil
    }
}

extension IdpSdkProvideCredentialsResult {
    /// Answers exactly the fields `data` asks, from `values` (by field id), or names the first
    /// field it has no value for (``CredentialProviderError/Code/missingValue``).
    ///
    /// When `values` holds exactly the asked fields, the usual case, they are handed over as they
    /// are: no copy, no allocation. This is the answer step of every store-like provider here, and
    /// of `idp-bench`'s peer patterns.
    public static func answering(_ data: IdpSdkInteractionData, from values: [String: String]) -> IdpSdkProvideCredentialsResult {
        let ids = data.inputFieldIds
        // Every stored key is asked and there are as many keys as ids: then the two sets are equal
        // (ids cannot repeat, or some id would have no key).
        if values.count == ids.count, Self.asksEveryKey(ids, of: values) {
            return .init(credentials: values)
        }
        var credentials: [String: String] = [:]
        credentials.reserveCapacity(ids.count)
        for id in ids {
            guard let value = values[id] else {
                return .init(error: CredentialProviderError.make(.missingValue, "no value for field '\(id)' of \(userDescription(data))"))
            }
            credentials[id] = value
        }
        return .init(credentials: credentials)
    }

    /// Whether every key of `values` is among `ids`.
    private static func asksEveryKey(_ ids: [String], of values: [String: String]) -> Bool {
        keys: for key in values.keys {
            for index in 0..<ids.count where ids[index] == key { continue keys }
            return false
        }
        return true
    }
}

/// Who a flow is for, as error texts name it.
func userDescription(_ data: IdpSdkInteractionData) -> String {
    "user '\(data.userId ?? "(activation)")' of tenant '\(data.tenantId)'"
}
