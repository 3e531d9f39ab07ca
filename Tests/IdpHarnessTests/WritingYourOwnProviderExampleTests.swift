// The example of the IdpSdk article "Writing your own provider", verbatim, run through the kit.
import CredentialProviders
import IdpHarness
import Testing

/// Answers from an app's session cache; counts how often each user was asked.
final class SessionCacheProvider: IdpSdkInteractionInterface {
    private let cache: LockedValue<[String: (username: String, password: String)]>
    private let asked = LockedValue<[String: Int]>([:])

    init(_ entries: [String: (username: String, password: String)]) { cache = LockedValue(entries) }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let user = interactionData.userId ?? ""
        asked.withLock { $0[user, default: 0] += 1 }
        guard let entry = cache.withLock({ $0[user] }) else {
            return .init(error: IdpSdkError("SessionCache", 1, "no session for \(user)"))
        }
        var credentials: [String: String] = [:]
        for id in interactionData.inputFieldIds {
            credentials[id] = id == IdpSdkConstants.USERNAME ? entry.username : entry.password
        }
        return .init(credentials: credentials)
    }
}

@Test func sessionCacheProviderPassesTheKit() async {
    let report = await ProviderConformanceKit.run(ConformanceTests.battery, name: "SessionCacheProvider", instances: .shared) { users in
        SessionCacheProvider(Dictionary(uniqueKeysWithValues: users.compactMap { user in
            user.credentials.isEmpty ? nil : (user.userId, (user.credentials["username"]!, user.credentials["password"]!))
        }))
    }
    print(report)
    #expect(report.passed)
}
