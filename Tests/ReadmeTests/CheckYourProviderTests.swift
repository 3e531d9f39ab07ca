// README.md's block under "Check your own provider", verbatim between the markers (ReadmeBlockTests checks that it is).
import IdpHarness
import Testing

// README block begin
/// Answers from an app's session cache, kept under the house lock.
final class SessionCacheProvider: IdpSdkInteractionInterface, Sendable {
    private let cache: LockedValue<[String: [String: String]]>

    init(_ users: [ProviderConformanceKit.User]) {
        cache = LockedValue(Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) }))
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        guard let values = cache.withLock({ $0[interactionData.userId ?? ""] }), !values.isEmpty else {
            return .init(error: IdpSdkError("SessionCache", 1, "no session for this user"))
        }
        var credentials: [String: String] = [:]
        for id in interactionData.inputFieldIds { credentials[id] = values[id] }
        return .init(credentials: credentials)
    }
}

@Test func sessionCacheProviderPassesTheKit() async {
    var configuration = ProviderConformanceKit.Configuration()
    configuration.flows = 1_000                   // the default is 10,000
    let report = await ProviderConformanceKit.run(configuration, name: "SessionCacheProvider", instances: .shared) { users in
        SessionCacheProvider(users)
    }
    print(report)                                 // the verdict per check, as a Markdown table
    #expect(report.passed)
}
// README block end
