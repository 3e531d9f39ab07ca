import IdpSdk

/// One user's credentials as an immutable value: the simplest thread-safe provider, and the floor
/// the others are measured against.
///
/// ```swift
/// let provider = StaticCredentials([IdpSdkConstants.USERNAME: "alice", IdpSdkConstants.PASSWORD: "s3cret"])
/// ```
///
/// Threading: immutable, so any number of threads may call it at once with no synchronisation.
/// Cost: one dictionary lookup per requested field, no lock, no allocation beyond the answer. It
/// is a value cheap to make (apps and fixtures make one per call); the price is that threads
/// answering from one instance write the reference count of its one dictionary, the cost
/// `idp-bench` shows as the "shared answer" row. ``CredentialStore`` answers each thread stripe
/// from copies of its own.
/// It answers exactly the fields a step requests; a requested field it has no value for ends the
/// flow with ``CredentialProviderError/Code/missingValue``.
public struct StaticCredentials: IdpSdkNonBlockingProvider, Sendable, CustomStringConvertible {
    /// The values by field id.
    public let values: [String: String]

    /// A provider that answers `values`.
    /// - Parameter values: The values by field id.
    public init(_ values: [String: String]) {
        self.values = values
    }

    /// Answers exactly the asked fields from ``values``, on the calling thread, without a lock.
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: The asked fields' values, or ``CredentialProviderError/Code/missingValue`` for an
    ///   asked field without one.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        .answering(interactionData, from: values)
    }

    /// Names the fields, never their values.
    public var description: String { "StaticCredentials(fields: \(values.keys.sorted()))" }
}
