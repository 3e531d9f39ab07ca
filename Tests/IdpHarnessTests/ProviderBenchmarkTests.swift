import CredentialProviders
import IdpHarness
import Testing

@Suite("ProviderBenchmark: flow cells")
struct ProviderBenchmarkTests {
    /// A run of a few milliseconds per cell over 10 users, at `threads` and `inFlight`.
    static func tiny(threads: [Int], inFlight: [Int]) -> ProviderBenchmark.Configuration {
        var configuration = ProviderBenchmark.Configuration()
        configuration.threads = threads
        configuration.rounds = 1
        configuration.secondsPerCell = 0.01
        configuration.inFlight = inFlight
        configuration.users = 10
        configuration.secondsPerFlowCell = 0.02
        return configuration
    }

    @Test("a flow cell shorter than one flow runs on (up to 10 s) until a flow counts, and its throughput is over the longer window")
    func cellShorterThanAFlowRunsOn() async throws {
        // Given flows of at least three 10 ms round trips, and a 20 ms flow cell
        var configuration = Self.tiny(threads: [1], inFlight: [1])
        configuration.latency = .milliseconds(10)
        // When it is measured
        let report = try await ProviderBenchmark.measure(configuration, name: "CredentialStore", instances: .shared) { users in
            let store = CredentialStore()
            for user in users { store.set(user.credentials, userId: user.userId, tenantId: user.tenantId) }
            return store
        }
        // Then the cell counted a flow, with no error, at fewer flows per second than one per 20 ms
        let cell = try #require(report.flows.first)
        #expect(cell.completed >= 1 && cell.errors == 0)
        #expect(cell.throughputPerS < Double(cell.completed) / 0.02)
    }

    @Test("the report names what the article and README name: three floors at every thread count, the provider measured, and flows through the engine and IDP without a MasterController")
    func reportMatchesItsDocs() async throws {
        let configuration = Self.tiny(threads: [1, 2], inFlight: [1])
        let given = LockedValue(0)
        let report = try await ProviderBenchmark.measure(configuration, name: "StaticCredentials per user", instances: .shared) { users in
            given.withLock { $0 += users.count }
            let store = CredentialStore()
            for user in users { store.set(user.credentials, userId: user.userId, tenantId: user.tenantId) }
            return store
        }
        // One instance for all users: the closure was called once, with every user
        #expect(given.withLock { $0 } == 10)
        for threads in [1, 2] {
            let floors = Set(report.floors.filter { $0.threads == threads }.map(\.name))
            #expect(floors == ["Mutex + dictionary lookup", "nothing shared", "shared answer"], "\(floors)")
        }
        let text = render(report, as: .text)
        #expect(text.contains("through engine and IDP, no MasterController"), "\(text)")
        #expect(!text.contains("IDP and MC"))
    }

    @Test("instances: .perUser makes one instance per user and sends each call, hot path and flows, to its own user's instance")
    func perUserInstancesAnswerTheirOwnUser() async throws {
        let configuration = Self.tiny(threads: [2], inFlight: [4])
        let made = LockedValue<[String]>([])
        // StaticCredentials answers its one user's values to any call: a call routed to another
        // user's instance is a wrong answer (the benchmark refuses it) or a failed login.
        let report = try await ProviderBenchmark.measure(configuration, name: "StaticCredentials", instances: .perUser) { user in
            made.withLock { $0.append(user.userId) }
            return StaticCredentials(user.credentials)
        }
        #expect(made.withLock { $0.sorted() } == (0..<10).map { "bench-\($0)" }.sorted())
        #expect(report.providers.contains { $0.strategy == "StaticCredentials" && $0.threads == 2 })
        let cell = try #require(report.flows.first)
        #expect(cell.completed >= 1 && cell.errors == 0)
    }

    @Test("a provider that answers another user's values is refused before any timing")
    func wrongAnswerRefused() async throws {
        var configuration = ProviderBenchmark.Configuration()
        configuration.users = 10
        let first = LockedValue<[String: String]?>(nil)
        await #expect(throws: ProviderBenchmarkError.self) {
            _ = try await ProviderBenchmark.measure(configuration, name: "FirstUserOnly", instances: .perUser) { user in
                StaticCredentials(first.withLock { values in
                    if values == nil { values = user.credentials }
                    return values!
                })
            }
        }
    }
}
