import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

/// Caches each user's values for 30 seconds of `clock` and refills them once they have expired,
/// counting its refills: correct, and what an app's provider with a short-lived cache looks like.
final class ThirtySecondCacheProvider: IdpSdkInteractionInterface, Sendable {
    let user: ProviderConformanceKit.User
    let clock: any IdpClock
    let refills: LockedValue<Int>
    private let cache = LockedValue<(values: [String: String], expires: Date)?>(nil)

    init(user: ProviderConformanceKit.User, clock: any IdpClock, refills: LockedValue<Int>) {
        self.user = user
        self.clock = clock
        self.refills = refills
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let now = clock.now()
        let (values, refilled) = cache.withLock { cache -> ([String: String], Bool) in
            if let cached = cache, cached.expires > now { return (cached.values, false) }
            let refill = cache != nil
            cache = (user.credentials, now.addingTimeInterval(30))
            return (user.credentials, refill)
        }
        if refilled { refills.withLock { $0 += 1 } }
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

/// Notes, per user, how many of its instances were inside the provider at once (each call stays
/// 0.2 ms), and the most seen.
final class InstanceOverlapProvider: IdpSdkInteractionInterface, Sendable {
    /// Per user: the instances inside now, with their calls inside.
    static let inside = LockedValue<[String: [ObjectIdentifier: Int]]>([:])
    let user: ProviderConformanceKit.User
    let mostAtOnce: LockedValue<[String: Int]>

    init(user: ProviderConformanceKit.User, mostAtOnce: LockedValue<[String: Int]>) {
        self.user = user
        self.mostAtOnce = mostAtOnce
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let me = ObjectIdentifier(self)
        let key = user.userId + "/" + (user.credentials["password"] ?? "")
        let together = Self.inside.withLock { inside -> Int in
            inside[key, default: [:]][me, default: 0] += 1
            return inside[key]?.count ?? 0
        }
        mostAtOnce.withLock { $0[user.userId] = max($0[user.userId] ?? 0, together) }
        usleep(200)
        Self.inside.withLock { inside in
            inside[key]?[me]? -= 1
            if inside[key]?[me] == 0 { inside[key]?[me] = nil }
        }
        return StaticCredentials(user.credentials).provideCredentials(interactionData)
    }
}

@Suite("Several instances of one user, the kit's clock and its expiry storms, and the engine's overlap")
struct InstancesAndExpiryTests {
    /// The race hammer's quick settings (4 rounds of 4 threads), with 4 several-instances rounds:
    /// 10 crossings in all, with the warm-ups.
    static var quick: ProviderConformanceKit.Configuration {
        var configuration = RaceHammerTests.quick
        configuration.instanceRounds = 4
        // These tests look at what their providers saw, so the providers run in this process.
        configuration.isolation = .inProcess
        return configuration
    }

    @Test("a provider whose cache lasts 30 s has its refresh path run at every crossing when it takes the kit's clock, without waiting 30 s")
    func thirtySecondCacheExercised() async throws {
        // Given a provider that caches for 30 s of the clock its factory hands it: the kit's
        let refills = LockedValue(0)
        let started = ContinuousClock.now

        // When the kit hammers it
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "ThirtySecondCacheProvider", instances: .perUser) { user in
            ThirtySecondCacheProvider(user: user, clock: user.clock, refills: refills)
        }

        // Then its cache expired at every crossing and was refilled, every answer right; the run
        // waited for none of it (how long it takes is a figure, printed, not a test)
        let took = ContinuousClock.now - started
        print("ThirtySecondCacheProvider: kit run of \(took) for 10 crossings of 24 h")
        let expiry = try #require(report.check("expiry storms"))
        #expect(report.passed, "\(report)")
        #expect(expiry.verdict == "held" && expiry.exercised, "\(expiry.detail)")
        #expect(expiry.detail.hasPrefix("the provider read the kit's clock after 10 of 10 crossings of 24 h"), "\(expiry.detail)")
        #expect(refills.withLock { $0 } >= 10, "refilled \(refills.withLock { $0 }) times over 10 crossings")
        let table = try #require(report.outcomes.first { $0.check == "expiry storms" })
        #expect(table.rows.contains { $0.outcome == "crossing: the provider read the kit's clock after it" && $0.count == 10 })
        #expect(table.rows.contains { $0.outcome == "several instances, after the crossing: instance 1: answered its own user's values" })
    }

    @Test("the same provider on the system clock is reported as expiry not exercised, never as passing that check")
    func systemClockNotExercised() async throws {
        let refills = LockedValue(0)
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "ThirtySecondCacheProvider on the system clock", instances: .perUser) { user in
            ThirtySecondCacheProvider(user: user, clock: SystemClock(), refills: refills)
        }
        let expiry = try #require(report.check("expiry storms"))
        #expect(expiry.verdict == "not exercised")
        #expect(!expiry.exercised)
        #expect(expiry.detail.hasPrefix("expiry not exercised (the provider does not read the kit's clock)"), "\(expiry.detail)")
        #expect(report.description.contains("| expiry storms | not exercised | expiry not exercised (the provider does not read the kit's clock)"))
        let table = try #require(report.outcomes.first { $0.check == "expiry storms" })
        #expect(table.rows.map(\.outcome) == ["crossing: the provider did not read the kit's clock after it"])
        #expect(table.rows.first?.count == 10 && table.rows.first?.grade == .notExercised)
        // Its answers after the crossings are graded as ordinary answers: none is lost.
        let hammer = try #require(report.outcomes.first { $0.check == "race hammer" })
        #expect(hammer.rows.map(\.count).reduce(0, +) >= 5 * 4 * 16)
        #expect(refills.withLock { $0 } == 0)
        #expect(report.passed)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let checks = try #require(json["checks"] as? [[String: Any]])
        let entry = try #require(checks.first { $0["name"] as? String == "expiry storms" })
        #expect(entry["verdict"] as? String == "not exercised")
        #expect(entry["exercised"] as? Bool == false)
    }

    @Test("two instances of one user answer at once, in the several-instances check and within the hammer's rounds")
    func instancesAnswerTogether() async throws {
        // Given a factory that counts its calls per user, and a provider that notes how many
        // instances of its user were inside at once
        let made = LockedValue<[String: Int]>([:])
        let mostAtOnce = LockedValue<[String: Int]>([:])
        var hammerOnly = Self.quick
        hammerOnly.instanceRounds = 0

        // When the hammer runs alone, then with the several-instances check
        let hammer = await ProviderConformanceKit.hammer(hammerOnly, name: "InstanceOverlapProvider", instances: .perUser) { user in
            made.withLock { $0[user.userId, default: 0] += 1 }
            return InstanceOverlapProvider(user: user, mostAtOnce: mostAtOnce)
        }
        let hammerAtOnce = mostAtOnce.withLock { $0 }
        var instancesOnly = Self.quick
        instancesOnly.hammerRounds = 0
        let instances = await ProviderConformanceKit.hammer(instancesOnly, name: "InstanceOverlapProvider", instances: .perUser) { user in
            InstanceOverlapProvider(user: user, mostAtOnce: mostAtOnce)
        }

        // Then the factory made two instances of each user per round, and two of one user were inside at once
        #expect(made.withLock { $0["hammer-000"] } == 2 * 5)
        #expect(hammerAtOnce.values.max() == 2, "\(hammerAtOnce)")
        #expect(mostAtOnce.withLock { $0.values.max() } == 2)
        #expect(hammer.passed && instances.passed, "\(hammer)\n\(instances)")
        #expect(hammer.check("several instances") == nil)
        let check = try #require(instances.check("several instances"))
        #expect(check.detail.hasPrefix("2 instances of each of 5 users, fresh each round, answered for their user at once from 4 OS threads in a warm-up and 4 rounds"),
                "\(check.detail)")
        let table = try #require(instances.outcomes.first { $0.check == "several instances" })
        #expect(table.rows.map(\.outcome) == ["instance 0: answered its own user's values", "instance 1: answered its own user's values"])
    }

    @Test("with a shared provider the several-instances check says it was not exercised, and the hammer calls the one instance")
    func sharedProviderNotExercised() async throws {
        let report = await ProviderConformanceKit.hammer(Self.quick, name: "LockedValueProvider", instances: .shared) { users in LockedValueProvider(users) }
        let check = try #require(report.check("several instances"))
        #expect(check.verdict == "not exercised")
        #expect(check.detail == "not exercised: one instance serves every user (a shared provider)")
        #expect(report.passed)
        #expect(!(report.check("race hammer")?.detail.contains("of each user") ?? true))
    }

    @Test("the engine's flows, released together, meet inside the provider, and the report says how far")
    func engineOverlap() async throws {
        // Given a provider whose calls take 1 ms, and four threads starting flows
        var configuration = ConformanceCheckTests.smallWithoutHammer
        configuration.instanceRounds = 0

        // When the battery runs
        let report = await ProviderConformanceKit.run(configuration, name: "SlowStaticCredentials", instances: .perUser) { user in
            SlowStaticCredentials(values: user.credentials)
        }

        // Then calls were inside the provider together, and the verdict and the JSON say so
        #expect(report.passed, "\(report)")
        #expect(report.providerOverlap.max >= 2, "\(report.providerOverlap)")
        #expect(report.providerOverlap.p50 >= 1 && report.providerOverlap.p50 <= report.providerOverlap.max)
        let detail = try #require(report.check("concurrent flows")?.detail)
        #expect(detail.hasSuffix("; calls in the provider at once: p50 \(report.providerOverlap.p50), max \(report.providerOverlap.max)"), "\(detail)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let overlap = try #require(json["provider_overlap"] as? [String: Int])
        #expect(overlap == ["p50": report.providerOverlap.p50, "max": report.providerOverlap.max])
    }
}

/// Answers like `StaticCredentials`, after 1 ms: a provider slow enough for calls to meet inside it.
struct SlowStaticCredentials: IdpSdkInteractionInterface, Sendable {
    let values: [String: String]

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        usleep(1_000)
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}
