import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

/// `TokenCacheProvider` as the conformance kit sees it: each instance holds a session of
/// `RotatingGrantServer`, whose refresh grants are single-use (a second redemption revokes every
/// session of the login), refreshed through an async call; it answers the user's credentials
/// while the server accepts the session's access token. The app signed in before: each instance
/// starts with a session of an hour on the kit's clock, and callers refresh from the session that
/// expired. Offline at start, it has none: the app's first sign-in failed, and the next caller
/// signs in.
enum TokenCacheFixture {
    typealias Session = RotatingGrantServer.Session

    /// A cache for `user`, with `bug` planted, refreshing through an async call, or a
    /// synchronous one on the caller's thread; with `offlineAtStart`, the app's first refresh
    /// (made here, before the kit calls) fails as a device without network would, and the kit's
    /// callers must refresh again.
    static func make(_ user: ProviderConformanceKit.User, bug: PlantedBug? = nil, synchronous: Bool = false,
                     offlineAtStart: Bool = false) async -> TokenCacheProvider<Session> {
        let offline = LockedValue(offlineAtStart)
        #if DEBUG
        let planted = PlantedBugSwitch(bug)
        #else
        let planted = PlantedBugSwitch()
        #endif
        let initial = offlineAtStart || user.credentials.isEmpty
            ? nil : RotatingGrantServer.shared.login(now: user.clock.now(), lifetime: 3_600)
        @Sendable func refreshed(from previous: CachedToken<Session>?) throws -> CachedToken<Session> {
            if offline.withLock({ offline in defer { offline = false }; return offline }) {
                throw URLError(.notConnectedToInternet)
            }
            let now = user.clock.now()
            guard !user.credentials.isEmpty else { throw CredentialProviderError.make(.noCredentials, "no credentials for \(user.userId)") }
            guard let previous else {
                let session = RotatingGrantServer.shared.login(now: now, lifetime: 3_600)
                return CachedToken(session, expires: session.expires)
            }
            switch RotatingGrantServer.shared.redeem(previous.token.grant, now: now, lifetime: 3_600, roundTrip: synchronous) {
            case .success(let session): return CachedToken(session, expires: session.expires)
            case .failure(let refusal): throw IdpSdkError("Port", 2, refusal.description)
            }
        }
        @Sendable func credentials(_ session: Session, _ data: IdpSdkInteractionData) throws -> [String: String] {
            // Revoked sessions are refused; expiry is the cache's to judge, at the time it read.
            guard RotatingGrantServer.shared.accepts(session.accessToken, now: .distantPast) else {
                throw IdpSdkError("Port", 1, "the server refused the session's access token")
            }
            return try StaticCredentials(user.credentials).provideCredentials(data).get()
        }
        let start = initial.map { CachedToken($0, expires: $0.expires) }
        let cache = PlantedBugSwitch.$inTask.withValue(planted) {
            synchronous
                ? TokenCacheProvider<Session>(clock: user.clock, initial: start, refreshSynchronously: refreshed, credentials: credentials)
                : TokenCacheProvider<Session>(clock: user.clock, initial: start, refresh: { previous in
                    try await Task.sleep(for: .milliseconds(1))      // the round trip
                    return try refreshed(from: previous)
                }, credentials: credentials)
        }
        if offlineAtStart { _ = try? await cache.token() }
        return cache
    }
}

extension IdpSdkProvideCredentialsResult {
    /// The credentials, or the error thrown.
    func get() throws -> [String: String] {
        if let error { throw error }
        return credentials ?? [:]
    }
}

@Suite("TokenCacheProvider passes the conformance kit, and the kit catches each of its planted bugs", .serialized, .heavy(goesFirst: true))
struct TokenCacheProviderKitTests {
    /// The whole kit, the engine's flows included (fewer under ThreadSanitizer, as for the
    /// library's other providers).
    static var battery: ProviderConformanceKit.Configuration { ConformanceTests.battery }

    @Test("the whole kit passes: race hammer, several instances, expiry storms, controlled interleavings, the engine's flows, and no data race where ThreadSanitizer runs; async and synchronous refresh",
          arguments: [false, true])
    func passesTheKit(synchronous: Bool) async {
        let report = await ProviderConformanceKit.run(Self.battery, name: "TokenCacheProvider", instances: .perUser) { user in
            await TokenCacheFixture.make(user, synchronous: synchronous)
        }
        ConformanceTests.show(report)
        #expect(report.passed, "\(report)")
        for name: ConformanceReport.CheckName in [.raceHammer, .severalInstances, .expiryStorms, .controlledInterleavings] {
            #expect(report.check(name)?.exercised == true, "\(name) was not exercised: \(report)")
        }
    }

    @Test("a refresh that failed does not stick: after the app's first refresh failed offline, the kit's callers refresh again and pass")
    func failureDoesNotStick() async {
        let report = await ProviderConformanceKit.hammer(Self.battery, name: "TokenCacheProvider, offline at start", instances: .perUser) { user in
            await TokenCacheFixture.make(user, offlineAtStart: true)
        }
        #expect(report.passed, "\(report)")
    }

    #if DEBUG
    /// A planted bug, the refresh it runs with, and the check that must fail: the controlled
    /// phase (the same schedules from the same seed on any machine) for the ordering bugs, the
    /// race hammer for the failure kept. Waiters woken before the store run with the synchronous
    /// refresh: the async refresh's landing runs inside one job of its task, which the controlled
    /// phase runs whole, so only free-running calls could fall between its waking and its store.
    static let mutations: [(bug: PlantedBug, synchronous: Bool, offlineAtStart: Bool, caughtBy: ConformanceReport.CheckName)] = [
        (.providersTokenRefreshWithoutSingleFlight, false, false, .controlledInterleavings),
        (.providersTokenRefreshWithoutSingleFlight, true, false, .controlledInterleavings),
        (.providersTokenWakesWaitersBeforeStore, true, false, .controlledInterleavings),
        (.providersTokenKeepsFailure, false, true, .raceHammer),
    ]

    @Test("each planted bug fails the kit: a caller that refreshes beside the flight, waiters woken before the store, a failure kept",
          arguments: mutations.indices)
    func plantedBugCaught(_ index: Int) async {
        let (bug, synchronous, offlineAtStart, caughtBy) = Self.mutations[index]
        let report = await ProviderConformanceKit.hammer(Self.battery, name: "TokenCacheProvider with \(bug.rawValue)", instances: .perUser) { user in
            await TokenCacheFixture.make(user, bug: bug, synchronous: synchronous, offlineAtStart: offlineAtStart)
        }
        print(report)
        let check = report.check(caughtBy)
        #expect(check?.checked == true && check?.passed == false, "\(bug.rawValue) (synchronous: \(synchronous)) was not caught by \(caughtBy): \(report)")
    }

    @Test("every planted bug of TokenCacheProvider has a mutation test")
    func everyBugTested() {
        let tokenBugs = Set(PlantedBug.allCases.filter { $0.rawValue.hasPrefix("providers.token") })
        #expect(Set(Self.mutations.map(\.bug)) == tokenBugs)
        #expect(Set(PlantedBug.allCases.filter { $0.caughtBy == .conformanceKit }) == tokenBugs)
    }
    #endif
}
