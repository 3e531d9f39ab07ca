import IdpHarness

/// An example provider: answers from a session cache under the house lock.
final class SessionCacheProvider: IdpSdkInteractionInterface {
    private let cache: LockedValue<[String: [String: String]]>

    init(_ users: [ProviderConformanceKit.User]) {
        cache = LockedValue(Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) }))
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        guard let values = cache.withLock({ $0[interactionData.userId ?? ""] }) else {
            return .init(error: IdpSdkError("SessionCache", 1, "no session for \(interactionData.userId ?? "?")"))
        }
        var credentials: [String: String] = [:]
        for id in interactionData.inputFieldIds { credentials[id] = values[id] }
        return .init(credentials: credentials)
    }
}
