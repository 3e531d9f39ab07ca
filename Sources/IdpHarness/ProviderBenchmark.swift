import BenchSupport
import CredentialProviders
import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import Synchronization

/// Measures your provider the way `idp-bench` measures the library's: nanoseconds per
/// `provideCredentials` call at 1…N threads, side by side with three floors (a `Mutex` +
/// dictionary lookup; *nothing shared*: a provider call returning each thread's own prepared
/// answer; *shared answer*: one provider returning one prepared answer to every thread) and
/// `CredentialStore`, and end-to-end flow latency (p0 … p99.9, p100) through the real engine
/// and an in-process IDP (no MasterController) at several flows in flight, in one run.
///
/// ```swift
/// import BenchSupport
/// import IdpHarness
///
/// // One instance for every user, as an app with one provider for everyone has it:
/// let report = try await ProviderBenchmark.measure(name: "SessionCacheProvider", instances: .shared) { users in
///     SessionCacheProvider(users)
/// }
/// print(render(report, as: .markdown))      // or .text, .json (schema "idp-bench/1")
/// ```
///
/// Build it in release (`swift run -c release`); a debug build measures the debugger's view.
/// Every provider is first asked once per user and must answer each user's own values; a wrong
/// answer stops the run with ``ProviderBenchmarkError`` rather than timing it.
public enum ProviderBenchmark {
    /// What to measure.
    public struct Configuration: Sendable {
        /// Thread counts for the hot path.
        public var threads = [1, 2, 4, 8]
        /// Seconds per hot-path cell; each cell runs `rounds` times, interleaved, and reports the median.
        public var secondsPerCell = 0.1
        /// Runs per hot-path cell, interleaved with the other cells; the cell reports their median.
        public var rounds = 3
        /// Flows in flight for the end-to-end cells (closed loop: each worker starts its next flow
        /// when its last one ends).
        public var inFlight = [1, 16, 256]
        /// Seconds per end-to-end cell, after a short warm-up.
        public var secondsPerFlowCell = 1.0
        /// Simulated IDP round trip per request.
        public var latency: Duration = .zero
        /// Users with credentials (the hot path cycles through them).
        public var users = 1_000
        /// The seed of the generated users' names and passwords.
        public var seed: UInt64 = 42

        /// The defaults: 1, 2, 4 and 8 threads, 0.1 s per cell, 1, 16 and 256 flows in flight.
        public init() {
            if let defaults = ProviderBenchmark.defaults { self = defaults }
        }
    }

    /// What ``Configuration/init()`` gives in this task instead of the documented defaults, when
    /// set: the package's own tests run documented calls with cells short enough for a debug build.
    @TaskLocal package static var defaults: Configuration?

    /// Measures the provider `sharedProvider` builds: **one instance for all users**, shared by
    /// every measuring thread and every flow (the closure is given every user, once).
    /// - Parameters:
    ///   - configuration: Thread counts, cell times, in-flight levels, users and seed.
    ///   - name: Your provider's name, as the report's rows show it.
    ///   - instances: ``ProviderInstances/Shared/shared``.
    ///   - sharedProvider: Called once with every user of the run (``Configuration/users`` of
    ///     them, with a username and password each); returns the one instance to measure.
    /// - Returns: An `idp-bench/1` report: the providers and floors at each thread count, then
    ///   the login flows at each in-flight level.
    /// - Throws: ``ProviderBenchmarkError`` when the configuration is out of range, the provider
    ///   answers wrongly or flows fail.
    public static func measure(
        _ configuration: Configuration = Configuration(),
        name: String,
        instances: ProviderInstances.Shared,
        sharedProvider: @escaping @Sendable ([ProviderConformanceKit.User]) async -> any IdpSdkInteractionInterface
    ) async throws(ProviderBenchmarkError) -> BenchReport {
        try await measure(configuration, name: name) { users in
            let provider = await sharedProvider(users)
            return users.map { _ in provider }
        }
    }

    /// Measures the providers `makeProvider` builds: **one instance per user**, each called only
    /// for its own user, by every measuring thread whose call is for that user and by that user's
    /// flows. The benchmark picks the instance from an array by the user's index, prepared before
    /// timing, so your row carries no lookup the benchmark adds.
    ///
    /// ```swift
    /// let report = try await ProviderBenchmark.measure(name: "MyProvider", instances: .perUser) { user in
    ///     MyProvider(user)
    /// }
    /// ```
    /// - Parameters:
    ///   - configuration: Thread counts, cell times, in-flight levels, users and seed.
    ///   - name: Your provider's name, as the report's rows show it.
    ///   - instances: ``ProviderInstances/PerUser/perUser``.
    ///   - makeProvider: Called once per user of the run (``Configuration/users`` of them, with a
    ///     username and password each), before any timing.
    /// - Returns: An `idp-bench/1` report, as
    ///   ``measure(_:name:instances:sharedProvider:)`` gives it.
    /// - Throws: ``ProviderBenchmarkError`` when the configuration is out of range, a provider
    ///   answers wrongly or flows fail.
    public static func measure(
        _ configuration: Configuration = Configuration(),
        name: String,
        instances: ProviderInstances.PerUser,
        makeProvider: @escaping @Sendable (ProviderConformanceKit.User) async -> any IdpSdkInteractionInterface
    ) async throws(ProviderBenchmarkError) -> BenchReport {
        try await measure(configuration, name: name) { users in
            var providers: [any IdpSdkInteractionInterface] = []
            for user in users { providers.append(await makeProvider(user)) }
            return providers
        }
    }

    /// Measures the providers `bind` gives, one per user (the same instance for all, when shared).
    private static func measure(
        _ configuration: Configuration,
        name: String,
        bind: @Sendable ([ProviderConformanceKit.User]) async -> [any IdpSdkInteractionInterface]
    ) async throws(ProviderBenchmarkError) -> BenchReport {
        guard !configuration.threads.isEmpty, configuration.threads.allSatisfy({ $0 > 0 }), configuration.rounds > 0,
              configuration.users > 0, configuration.secondsPerCell > 0, configuration.secondsPerFlowCell > 0,
              configuration.inFlight.allSatisfy({ $0 > 0 }) else {
            throw ProviderBenchmarkError("threads, rounds, users, in-flight levels and seconds must be positive")
        }
        var random = SeededRandom(seed: configuration.seed)
        let users = (0..<configuration.users).map { index in
            let userId = "bench-\(index)"
            return ProviderConformanceKit.User(tenantId: ProviderConformanceKit.tenant, userId: userId,
                                               credentials: ["username": userId, "password": "pw-\(random.next() % 1_000_000_000)"])
        }
        let contenders = Contenders(yours: Unverified(await bind(users)), name: name, users: users)
        try await contenders.verify()

        var report = BenchReport(
            machine: Machine(cores: Processors.available, os: ProcessInfo.processInfo.operatingSystemVersionString,
                             swift: "6", date: ISO8601DateFormatter().string(from: Date())),
            settings: Settings(secondsPerCell: configuration.secondsPerCell, latencyMs: configuration.latency.timeInterval * 1e3,
                               seed: configuration.seed, sections: ["providers", "flows"], threads: configuration.threads,
                               inFlight: configuration.inFlight, quick: false, flowPath: "engine and IDP, no MasterController"))
        (report.providers, report.floors) = await OSThreads.run { contenders.hotPath(configuration) }
        for level in configuration.inFlight.sorted() {
            report.flows.append(try await contenders.flows(inFlight: level, configuration: configuration))
        }
        return report
    }
}

/// Why a measurement could not be made.
public struct ProviderBenchmarkError: Error, CustomStringConvertible, Equatable {
    /// What made the measurement impossible, as a sentence.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Your provider, ``CredentialStore`` and the `Mutex` floor over the same users. Each provider is
/// an array of instances by user index (one instance repeated, when shared). The providers are
/// shared with the measuring threads through ``Unverified``: sharing yours is what measuring it
/// means; whether that is safe is what ``ProviderConformanceKit`` checks.
private final class Contenders: Sendable {
    let yours: Unverified<[any IdpSdkInteractionInterface]>
    let store: Unverified<[any IdpSdkInteractionInterface]>
    let name: String
    let users: [ProviderConformanceKit.User]
    let table: Mutex<[String: [String: String]]>

    init(yours: Unverified<[any IdpSdkInteractionInterface]>, name: String, users: [ProviderConformanceKit.User]) {
        self.yours = yours
        self.name = name
        self.users = users
        let store = CredentialStore()
        for user in users { store.set(user.credentials, userId: user.userId, tenantId: user.tenantId) }
        self.store = Unverified(users.map { _ in store })
        table = Mutex(Dictionary(uniqueKeysWithValues: users.map { ($0.userId, $0.credentials) }))
    }

    /// The calls of one thread: a ring of 1,024 login steps over the users, each with the index
    /// of its user.
    func calls(thread: Int) -> [(user: Int, data: IdpSdkInteractionData)] {
        let fields = [IdpSdkInputField(id: "username", label: "Username", isSecret: false),
                      IdpSdkInputField(id: "password", label: "Password", isSecret: true)]
        return (0..<1_024).map { index in
            let owner = (thread * 7_919 + index * 31) % users.count
            let user = users[owner]
            return (owner, IdpSdkInteractionData(inputFields: fields, flowId: IdpSdkFlowID.next(),
                                                 step: 1, attempt: 1, tenantId: user.tenantId, clientId: "KssIdpLogin", userId: user.userId,
                                                 traceParent: nil, previousError: nil))
        }
    }

    /// Asks both providers once per user (up to 256) on an OS thread; both must answer right.
    func verify() async throws(ProviderBenchmarkError) {
        let problem: String? = await OSThreads.run { [self] in
            for (owner, data) in calls(thread: 0).prefix(256) {
                let expected = users[owner].credentials
                for (label, provider) in [(name, yours.value[owner]), ("CredentialStore", store.value[owner])] {
                    let answer = provider.provideCredentials(data).credentials
                    if data.inputFieldIds.contains(where: { answer?[$0] != expected[$0] }) {
                        return "\(label) answered wrongly for \(data.userId ?? "?")"
                    }
                }
            }
            return nil
        }
        if let problem { throw ProviderBenchmarkError(problem) }
    }

    /// ns per call at each thread count: the floors (a `Mutex` + dictionary lookup; the call of a
    /// provider with nothing shared: each thread its own provider returning its own prepared
    /// answer; a shared answer: one provider returning one prepared answer to every thread), your
    /// provider, `CredentialStore`; each cell the median of `rounds` interleaved runs. Runs on an
    /// OS thread (it blocks).
    func hotPath(_ configuration: ProviderBenchmark.Configuration) -> ([ProviderRow], [FloorRow]) {
        let cells: [(label: String, kind: String?, provider: Unverified<[any IdpSdkInteractionInterface]>?)] = [
            ("Mutex + dictionary lookup", nil, nil), ("nothing shared", nil, nil), ("shared answer", nil, nil), (name, "yours", yours),
            ("CredentialStore", "product", store),
        ]
        // The shared answer's one provider, made before timing: every thread returns its dictionary.
        let sharedAnswer = PreparedAnswer(answer: IdpSdkProvideCredentialsResult(credentials: users[0].credentials))
        func operation(_ cell: Int, _ threads: Int) -> (Int) -> @Sendable (Int) -> Int {
            let perThread = (0..<threads).map { calls(thread: $0) }
            return { [self] thread in
                let calls = perThread[thread].map(\.data)
                guard let provider = cells[cell].provider else {
                    if cell == 1 {
                        // A dictionary of this thread's own storage, made before timing.
                        let user = users[thread % users.count]
                        let answer = IdpSdkProvideCredentialsResult(credentials: Dictionary(uniqueKeysWithValues: user.credentials.map { ($0.key, $0.value) }))
                        let own: any IdpSdkInteractionInterface & Sendable = PreparedAnswer(answer: answer)
                        return { call in own.provideCredentials(calls[call & 1_023]).credentials?.count ?? -1 }
                    }
                    if cell == 2 {
                        return { call in sharedAnswer.provideCredentials(calls[call & 1_023]).credentials?.count ?? -1 }
                    }
                    let keys = calls.map { $0.userId ?? "" }
                    return { call in self.table.withLock { $0[keys[call & 1_023]] }?.count ?? 0 }
                }
                // Each call with its user's instance, paired before timing.
                let pairs = Unverified(perThread[thread].map { (provider.value[$0.user], $0.data) })
                return { call in
                    let (instance, data) = pairs.value[call & 1_023]
                    return instance.provideCredentials(data).credentials?.count ?? -1
                }
            }
        }
        for cell in cells.indices { _ = race(threads: 1, seconds: configuration.secondsPerCell / 2, makeOperation: operation(cell, 1)) }
        var providers: [ProviderRow] = []
        var floors: [FloorRow] = []
        for threads in configuration.threads {
            var runs = Array(repeating: [RaceResult](), count: cells.count)
            for _ in 0..<configuration.rounds {
                for cell in cells.indices {
                    runs[cell].append(race(threads: threads, seconds: configuration.secondsPerCell, makeOperation: operation(cell, threads)))
                }
            }
            for (cell, results) in runs.enumerated() {
                let median = results.sorted { $0.nanosecondsPerOperation < $1.nanosecondsPerOperation }[results.count / 2]
                let calls = results.reduce(0) { $0 + $1.operations }
                if let kind = cells[cell].kind {
                    providers.append(ProviderRow(strategy: cells[cell].label, kind: kind, recommended: cells[cell].label == "CredentialStore" && cells[cell].kind == "product", threads: threads,
                                                 nsPerCall: median.nanosecondsPerOperation, calls: calls))
                } else {
                    floors.append(FloorRow(name: cells[cell].label, threads: threads, nsPerOp: median.nanosecondsPerOperation, ops: calls))
                }
            }
        }
        return (providers, floors)
    }

    /// Closed-loop logins with your provider at `inFlight` flows at once through the engine and an
    /// in-process IDP; latency of flows that start after a warm-up and end before the end.
    func flows(inFlight: Int, configuration: ProviderBenchmark.Configuration) async throws(ProviderBenchmarkError) -> FlowRow {
        let idp = IdpServer(configuration: .init(auditLogCapacity: 4_096))
        do {
            try idp.addTenant(ProviderConformanceKit.tenant)
            for user in users { try idp.addUser(user.userId, tenant: user.tenantId, password: user.credentials["password"]!) }
        } catch {
            throw ProviderBenchmarkError("setting up the IDP: \(error)")
        }
        let sdk = IdpSdkService(tenantId: ProviderConformanceKit.tenant, idpUrl: "https://provider-benchmark.invalid", certificateChain: Data(),
                                shouldHashPin: false, configuration: .init(),
                                transport: InProcessTransport(server: idp, latency: configuration.latency))
        let seconds = configuration.secondsPerFlowCell
        let warmUp = DispatchTime.now().uptimeNanoseconds + UInt64(min(0.5, seconds / 4) * 1e9)
        let end = warmUp + UInt64(seconds * 1e9)
        // A cell that counted no flow by its end runs on, up to ten times its length or 10 s,
        // whichever is longer, until one counts: a slow machine (a sanitizer, a loaded runner)
        // gets a figure instead of an error. Each worker also starts at least one flow after the
        // warm-up, however late, so a worker whose first flow outlasted the whole window still
        // has a flow to count. Each worker writes the shared flag once, at its first counted flow.
        let runOn = max(seconds * 9, 10)
        let lastChance = end + UInt64(runOn * 1e9)
        let anyCounted = CountedFlag()
        let providers = yours
        let users = self.users
        let cells = await withTaskGroup(of: (LatencyHistogram, Int, Int, String?, UInt64).self) { group in
            for worker in 0..<inFlight {
                group.addTask {
                    var histogram = LatencyHistogram()
                    var completed = 0, errors = 0
                    var firstError: String?
                    var lastCounted: UInt64 = 0
                    var next = worker
                    var startedAfterWarmUp = false
                    while true {
                        let now = DispatchTime.now().uptimeNanoseconds
                        guard now < end || (!anyCounted.isSet && (now < lastChance || !startedAfterWarmUp)) else { break }
                        let user = users[next % users.count]
                        let provider = providers.value[next % users.count]
                        next += inFlight
                        let start = DispatchTime.now().uptimeNanoseconds
                        startedAfterWarmUp = startedAfterWarmUp || start >= warmUp
                        let result = await sdk.getAuthorizationCode(
                            withAstClientData: AstClientDataInfo(clientData: "provider-benchmark", astClientId: IdpServer.unassignedAstClientId,
                                                                 codeChallenge: PKCE.challenge(for: PKCE.makeVerifier()), codeChallengeMethod: PKCE.methodS256),
                            clientId: "KssIdpLogin", interactionInterface: provider, userId: user.userId, traceParent: nil)
                        let finished = DispatchTime.now().uptimeNanoseconds
                        if let error = result.idpSdkError {
                            errors += 1
                            firstError = firstError ?? error.description
                        } else if start >= warmUp && (finished <= end || !anyCounted.isSet) {
                            histogram.record(finished - start)
                            completed += 1
                            lastCounted = finished
                            if completed == 1 { anyCounted.set() }
                        }
                    }
                    return (histogram, completed, errors, firstError, lastCounted)
                }
            }
            var merged = (LatencyHistogram(), 0, 0, String?.none, end)
            for await cell in group {
                merged.0.merge(cell.0)
                merged.1 += cell.1
                merged.2 += cell.2
                merged.3 = merged.3 ?? cell.3
                merged.4 = max(merged.4, cell.4)
            }
            return merged
        }
        if cells.2 > 0 { throw ProviderBenchmarkError("\(cells.2) flows failed at \(inFlight) in flight; first: \(cells.3 ?? "-")") }
        if cells.1 == 0 { throw ProviderBenchmarkError("no flow completed at \(inFlight) in flight within \(Int(seconds + runOn)) s; raise secondsPerFlowCell") }
        // The window the counted flows ran in: the cell, or longer when it ran on for its first flow.
        let window = Double(cells.4 - warmUp) / 1e9
        return FlowRow(scenario: "login (\(name))", mode: "closed", inFlight: inFlight, offeredPerS: nil,
                       throughputPerS: Double(cells.1) / window, completed: cells.1, errors: 0, latencyUs: cells.0.percentiles())
    }
}

/// Returns one prepared answer to every call: the floor of calling a provider at all, when each
/// thread has its own; shared by every thread, what returning one cached object costs.
private struct PreparedAnswer: IdpSdkInteractionInterface, Sendable {
    let answer: IdpSdkProvideCredentialsResult
    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { answer }
}

/// Set once by the first worker of a flow cell that counts a flow; read by the others only past
/// the cell's end. Sound as `Sendable`: its one stored property is an `Atomic`.
private final class CountedFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
