import IdpSdk

/// Credentials kept in an actor, for apps whose state already lives in one.
///
/// ```swift
/// let vault = CredentialVault()
/// await vault.store(["username": "alice", "password": "s3cret"], userId: "alice", tenantId: "demo")
/// let provider = VaultProvider(vault: vault, timeout: .seconds(5))
/// ```
public actor CredentialVault {
    private var entries: [CredentialStore.Key: [String: String]] = [:]

    /// An empty vault.
    public init() {}

    /// Adds or replaces the user's values (by field id).
    public func store(_ values: [String: String], userId: String, tenantId: String) {
        entries[CredentialStore.Key(tenantId: tenantId, userId: userId)] = values
    }

    /// Removes the user.
    public func remove(userId: String, tenantId: String) {
        entries[CredentialStore.Key(tenantId: tenantId, userId: userId)] = nil
    }

    /// The user's values, or `nil`.
    public func values(userId: String, tenantId: String) -> [String: String]? {
        entries[CredentialStore.Key(tenantId: tenantId, userId: userId)]
    }
}

/// Answers from a ``CredentialVault`` by hopping onto the actor while the SDK thread waits.
///
/// The slow path: every call starts a task, hops to the actor and back, and wakes a blocked
/// thread — `idp-bench` shows the cost against ``CredentialStore``. Same blocking rules as
/// ``AsyncCredentialBridge``: it refuses inside a Swift task or on the main thread, gives up after
/// `timeout`, and stops waiting when the flow ends. Flows are matched to users by
/// `interactionData.userId` (logins).
public final class VaultProvider: IdpSdkFlowObserving, Sendable, CustomStringConvertible {
    /// The actor the answers come from.
    public let vault: CredentialVault
    private let timeout: Duration
    private let waits = WaitRegistry()

    /// A provider over `vault`.
    /// - Parameters:
    ///   - vault: The actor the answers come from.
    ///   - timeout: How long a call waits for the actor before it ends its flow with ``CredentialProviderError/Code/timedOut``.
    public init(vault: CredentialVault, timeout: Duration) {
        self.vault = vault
        self.timeout = timeout
    }

    /// Answers a login step from the vault, blocking the calling SDK thread while a task reads the
    /// actor.
    ///
    /// - Parameter interactionData: The step to answer; it must carry a user id.
    /// - Returns: The values of the asked fields, or an error that ends the flow:
    ///   ``CredentialProviderError/Code/noCredentials`` for an activation or an unknown user,
    ///   ``CredentialProviderError/Code/timedOut``, ``CredentialProviderError/Code/cancelled``, or
    ///   ``CredentialProviderError/Code/calledWhereBlockingIsUnsafe`` inside a Swift task or on the
    ///   main thread.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        guard let userId = interactionData.userId else {
            return .init(error: CredentialProviderError.make(.noCredentials, "VaultProvider answers logins only; this flow has no user id"))
        }
        let vault = self.vault
        let result = waits.answer(interactionData, timeout: timeout, who: "VaultProvider") {
            guard let values = await vault.values(userId: userId, tenantId: interactionData.tenantId) else {
                throw CredentialProviderError.make(.noCredentials, "no credentials for \(userDescription(interactionData))")
            }
            return values
        }
        guard let values = result.credentials else { return result }
        return .answering(interactionData, from: values)
    }

    /// Ends the wait of the flow: its answer would be discarded anyway.
    public func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
        waits.cancel(flowId)
    }

    /// Does nothing: the provider keeps no state between a flow's calls.
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {}

    /// The timeout; never a value.
    public var description: String { "VaultProvider(timeout: \(timeout))" }
}
