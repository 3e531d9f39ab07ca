import IdpPrimitives
import IdpSdk

/// Runs a battery of checks against a credential provider, through the real `IdpSdk` engine and
/// an in-process IDP, and reports per check what held and what did not.
///
/// ```swift
/// let report = await ProviderConformanceKit.run(name: "MyProvider", instances: .perUser) { user in
///     MyProvider(username: user.userId, password: user.credentials["password"])
/// }
/// print(report)            // a Markdown table of verdicts and figures
/// #expect(report.passed)
/// ```
///
/// The checks:
/// - **race hammer** (first; see ``hammer(_:name:instances:fileID:function:line:makeProvider:)``) — fresh instances (two of each
///   user, see ``Configuration/instances``; each thread calls its own), kit-owned OS threads
///   released together, direct calls with nothing between the threads, every answer graded;
/// - **several instances** — two or more instances of one user from the per-user factory answer
///   for that user at once, as two screens of an app that each create their own handler do; state
///   the instances share behind the provider (a keychain, a static cache) is exercised. With a
///   shared provider it reads "not exercised";
/// - **expiry storms** — halfway through every round of the two checks above, the kit's clock
///   (``User/clock``) jumps by ``Configuration/expiryHorizon`` and every thread calls at once; the
///   answers after the jump must be right. A provider that never reads the kit's clock after a
///   jump has no expiry the kit can reach: "expiry not exercised", which neither passes nor fails;
/// - **no data race (ThreadSanitizer)** — under `--sanitize=thread`, the reports ThreadSanitizer
///   printed during each phase (counted before and after it) fail the provider; without
///   ThreadSanitizer the check says it was not checked;
/// - **concurrent flows** — many flows from many OS threads at once (default 64 threads, 10,000
///   flows, 100 users), released together, each user's flows sharing one provider instance, all
///   succeed; the provider's calls are gathered to enter it together, and the detail says how many
///   were inside it at once (p50, max);
/// - **multi-step and re-asks** — half the flows use a two-step client (username, then password),
///   and every `reaskEvery`-th flow has its first answer corrupted on the way to the IDP, so the
///   provider is asked again with `previousError` set; it must answer again (the flow then
///   succeeds) or end the flow with its own error;
/// - **no cross-talk** — every code the IDP issued went to the flow's own user;
/// - **error propagation** — flows for users the provider has no credentials for end with exactly
///   the error the provider returned, and no other flow is disturbed;
/// - **cancellation** — flows cancelled while running complete once, cancelled or done;
/// - **exactly-once completion** — every flow completed exactly once;
/// - **no deadlock** — a watchdog names any flow that does not complete within `hangTimeout`, with
///   its step and the thread it is stuck on, then cancels it;
/// - **provider on SDK threads** — the provider was only ever called on SDK threads;
/// - **blocking under timeouts** (when `providerWait` is set) — with a flow timeout of half the
///   provider's wait every flow ends once with `timedOut`; with a much longer one every flow
///   succeeds.
///
/// Each check judges what the run collected once the engine was done with every flow, and counts
/// its outcomes in a table of its own (``ConformanceReport/outcomes``).
///
/// The kit blocks only its own OS threads; `run` suspends without blocking the caller's task.
///
/// By default each run happens in a child process (this executable again, selected to the same
/// kit call), so that a provider that crashes the process yields a verdict — "crashed: signal 11
/// (SIGSEGV) during the race hammer, round 3 of 8", with the checks judged before the crash — and
/// the calling process lives on. Call the kit directly from the `@Test` function; see
/// ``Isolation``.
public enum ProviderConformanceKit {
    /// How hard to push, and what to expect of the provider.
    public struct Configuration: Sendable {
        /// OS threads starting flows at once.
        public var threads = 64
        /// Flows in the main run.
        public var flows = 10_000
        /// Users with credentials; each gets one provider instance from a per-user factory.
        public var users = 100
        /// Every n-th flow has its first answer corrupted in transit (0: none).
        public var reaskEvery = 20
        /// Every n-th flow is for a user the provider has no credentials for (0: none).
        public var errorEvery = 50
        /// Every n-th flow is cancelled right after it starts (0: none).
        public var cancelEvery = 50
        /// Simulated IDP latency per request.
        public var latency: Duration = .zero
        /// A flow without a completion after this long is reported as stuck.
        public var hangTimeout: Duration = .seconds(30)
        /// For a provider that blocks: about how long one call waits. Enables the timeout check.
        public var providerWait: Duration?
        /// Race hammer rounds, each with fresh provider instances, after one warm-up round (0: no
        /// hammer).
        public var hammerRounds = 32
        /// Kit-owned OS threads per hammer round, released together.
        public var hammerThreads = 8
        /// Direct `provideCredentials` calls per thread per round.
        public var hammerCallsPerThread = 32
        /// Where the full text of ThreadSanitizer's reports blamed on the provider is written
        /// (`nil`: the temporary directory); a child process's output goes there too.
        public var raceReportDirectory: String?
        /// Instances the per-user factory makes of one user at once: the several-instances check
        /// has them answer for that user together, and the race hammer's threads call different
        /// ones within a round (1: one instance per user; the check is then not exercised). A
        /// shared provider (`sharedProvider:`) is always one instance.
        public var instances = 2
        /// Rounds of the several-instances check, each with fresh instances of one user (0: no
        /// such check).
        public var instanceRounds = 8
        /// How far the kit's clock (``User/clock``) jumps at each expiry crossing: once in every
        /// round of the race hammer and of the several-instances check, after which every thread
        /// calls at once. Long enough by default that any secret a real provider caches has
        /// expired (`.zero`: the clock never moves, and expiry is not exercised).
        public var expiryHorizon: Duration = .seconds(24 * 3600)
        /// Engine phase: provider calls are held at the kit's probe until this many wait, or for
        /// at most ``engineCallWindow``, then released together, so that calls overlap inside the
        /// provider (1: each call goes in at once).
        public var engineCallsTogether = 8
        /// Engine phase: the longest a provider call is held for others to join it.
        public var engineCallWindow: Duration = .milliseconds(20)
        /// Schedules the controlled phase explores (it stops at the first that fails): threads
        /// calling the provider one at a time between the points of the controlled primitives,
        /// in orders chosen by PCT and a random walk from ``controlledSeed`` (0: no controlled
        /// phase). See <doc:ControlledInterleavings>. The environment variable
        /// ``ProviderConformanceKit/controlledSchedulesVariable`` replaces it where set.
        public var controlledSchedules = 64
        /// Threads of each controlled schedule; thread t calls instance `t % instances` of the
        /// schedule's one user, so two threads share an instance and two do not.
        public var controlledThreads = 3
        /// Calls each thread of a controlled schedule makes.
        public var controlledCalls = 2
        /// Seeds the controlled phase: the same seed explores the same schedules and gives the
        /// same verdict. The environment variable ``ProviderConformanceKit/controlledSeedVariable``
        /// replaces it where set.
        public var controlledSeed: UInt64 = 1
        /// Where the run happens: by default in a child process, so that a provider that
        /// crashes yields a verdict (see ``Isolation``).
        public var isolation = Isolation.automatic

        /// The defaults: 10,000 flows from 64 OS threads over 100 users, 32 hammer rounds of 8 threads.
        public init() {}
    }

    /// A user as the provider factory sees it.
    public struct User: Sendable, CustomStringConvertible {
        /// The user's tenant.
        public let tenantId: String
        /// The user's id.
        public let userId: String
        /// The values by field id (`username`, `password`); empty for a user the provider is to
        /// have no credentials for.
        public let credentials: [String: String]
        /// The kit's clock, the same for every instance of one run: a provider that reads the time
        /// from it (to expire a cached secret, say) has its expiry exercised, since the kit moves
        /// it forward by ``Configuration/expiryHorizon`` before each expiry storm. It moves only
        /// then, and counts its reads. Outside the kit's runs, the system clock.
        public let clock: any IdpClock

        /// A user, for calling a provider factory or a provider in a test of your own, as the kit
        /// would.
        ///
        /// ```swift
        /// let clock = ManualClock()
        /// let alice = ProviderConformanceKit.User(tenantId: "demo", userId: "alice",
        ///                                         credentials: ["username": "alice", "password": "s3cret"], clock: clock)
        /// let provider = SessionCacheProvider([alice])
        /// clock.advance(by: .seconds(3_600))   // what the kit does before an expiry storm
        /// ```
        /// - Parameters:
        ///   - tenantId: The user's tenant.
        ///   - userId: The user's id.
        ///   - credentials: The values by field id; empty for a user the provider is to have no
        ///     credentials for.
        ///   - clock: The clock the provider is to read the time from; the system clock by default.
        public init(tenantId: String, userId: String, credentials: [String: String], clock: any IdpClock = SystemClock()) {
            self.tenantId = tenantId
            self.userId = userId
            self.credentials = credentials
            self.clock = clock
        }

        /// Never shows the values.
        public var description: String { "User(\(tenantId)/\(userId), fields: \(credentials.keys.sorted()))" }
    }

    static let tenant = "conformance"
    static let stepwiseClient = "HarnessStepwiseLogin"

    /// Runs the battery with one provider instance per user, shared by all that user's flows.
    ///
    /// ```swift
    /// let report = await ProviderConformanceKit.run(name: "MyProvider", instances: .perUser) { user in
    ///     MyProvider(user)
    /// }
    /// ```
    ///
    /// By default the run happens in a child process (``Configuration/isolation``): call this
    /// directly from the `@Test` function, whose name, file and line lead the child to this call.
    /// The closure runs on a task of the kit's; the provider it returns is then called from
    /// kit-owned OS threads and the engine's SDK threads, never from the cooperative pool.
    /// - Parameters:
    ///   - configuration: How hard to push, and what to expect of the provider.
    ///   - name: The provider's name, for the report.
    ///   - instances: ``ProviderInstances/PerUser/perUser``.
    ///   - fileID: The calling file; leave the default.
    ///   - function: The calling function; leave the default.
    ///   - line: The calling line; leave the default.
    ///   - makeProvider: Called for every instance the kit needs: once per user for the engine's
    ///     flows (also for users without credentials), and ``Configuration/instances`` times per
    ///     user for each round of direct calls; it may await (to fill an actor, say). A provider
    ///     that caches a secret reads the time from ``User/clock``.
    /// - Returns: The verdicts; for a provider that crashed the child, the checks judged before
    ///   the crash and a failed "process survived" check.
    public static func run(
        _ configuration: Configuration = Configuration(),
        name: String,
        instances: ProviderInstances.PerUser,
        fileID: String = #fileID,
        function: String = #function,
        line: Int = #line,
        makeProvider: @escaping @Sendable (User) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await enter(.runPerUser, configuration, name: name, fileID: fileID, function: function, line: line) { effective in
            await Run(configuration: effective, name: name, bind: perUser(makeProvider)).execute()
        }
    }

    /// Runs the battery with one provider instance shared by every user's flows (the Kotlin
    /// samples' `companion object`); in a child process by default.
    ///
    /// ```swift
    /// let report = await ProviderConformanceKit.run(name: "MyProvider", instances: .shared) { users in
    ///     MyProvider(users)
    /// }
    /// ```
    ///
    /// The several-instances check reads "not exercised": there is one instance.
    /// - Parameters:
    ///   - configuration: How hard to push, and what to expect of the provider.
    ///   - name: The provider's name, for the report.
    ///   - instances: ``ProviderInstances/Shared/shared``.
    ///   - fileID: The calling file; leave the default.
    ///   - function: The calling function; leave the default.
    ///   - line: The calling line; leave the default.
    ///   - sharedProvider: Called once per phase with every user (also those without
    ///     credentials); it may await.
    /// - Returns: The verdicts, as ``run(_:name:instances:fileID:function:line:makeProvider:)``
    ///   gives them.
    public static func run(
        _ configuration: Configuration = Configuration(),
        name: String,
        instances: ProviderInstances.Shared,
        fileID: String = #fileID,
        function: String = #function,
        line: Int = #line,
        sharedProvider: @escaping @Sendable ([User]) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await enter(.runShared, configuration, name: name, fileID: fileID, function: function, line: line) { effective in
            await Run(configuration: effective, name: name, sharedInstance: true, bind: shared(sharedProvider)).execute()
        }
    }

    /// Runs only the direct calls: the race hammer and the several-instances rounds, with their
    /// expiry storms and ThreadSanitizer's verdict; fresh provider instances for every round: the
    /// quick check for data races.
    ///
    /// ```swift
    /// let report = await ProviderConformanceKit.hammer(name: "MyProvider", instances: .perUser) { user in
    ///     MyProvider(user)
    /// }
    /// #expect(report.passed)   // under --sanitize=thread: no race reported, every answer right
    /// ```
    ///
    /// Each round makes fresh instances, starts `hammerThreads` kit-owned OS threads that wait at a
    /// start barrier, and lets each make `hammerCallsPerThread` direct calls (the round's shared
    /// user from every thread, the thread's own user, a user without credentials) with no lock,
    /// semaphore or print between the threads; answers go to per-thread slots and are graded after
    /// the end barrier. A round that does not end within `hangTimeout` is "stale". Each thread calls
    /// its own of the `instances` instances of every user; the several-instances rounds then have
    /// every thread ask for one user.
    ///
    /// Like ``run(_:name:instances:fileID:function:line:makeProvider:)``, it runs in a child
    /// process by default.
    /// - Parameters:
    ///   - configuration: How hard to push (`hammerRounds`, `hammerThreads`,
    ///     `hammerCallsPerThread`, `instances`, `instanceRounds`, `expiryHorizon`, `hangTimeout`,
    ///     `isolation`, and the controlled phase's settings).
    ///   - name: The provider's name, for the report.
    ///   - instances: ``ProviderInstances/PerUser/perUser``.
    ///   - fileID: The calling file; leave the default.
    ///   - function: The calling function; leave the default.
    ///   - line: The calling line; leave the default.
    ///   - makeProvider: Called for every instance of every user in every round; a provider that
    ///     caches a secret reads the time from ``User/clock``.
    /// - Returns: The direct calls' verdicts and ThreadSanitizer's.
    public static func hammer(
        _ configuration: Configuration = Configuration(),
        name: String,
        instances: ProviderInstances.PerUser,
        fileID: String = #fileID,
        function: String = #function,
        line: Int = #line,
        makeProvider: @escaping @Sendable (User) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await enter(.hammerPerUser, configuration, name: name, fileID: fileID, function: function, line: line) { effective in
            await Run(configuration: effective, name: name, battery: false, bind: perUser(makeProvider)).execute()
        }
    }

    /// Runs only the race hammer (with its expiry storms) with one instance for every user, fresh
    /// for every round; the several-instances check reads "not exercised".
    /// In a child process by default.
    ///
    /// ```swift
    /// let report = await ProviderConformanceKit.hammer(name: "MyProvider", instances: .shared) { users in
    ///     MyProvider(users)
    /// }
    /// ```
    /// - Parameters:
    ///   - configuration: How hard to push.
    ///   - name: The provider's name, for the report.
    ///   - instances: ``ProviderInstances/Shared/shared``.
    ///   - fileID: The calling file; leave the default.
    ///   - function: The calling function; leave the default.
    ///   - line: The calling line; leave the default.
    ///   - sharedProvider: Called once in every round, with every user.
    /// - Returns: The race hammer's and ThreadSanitizer's verdicts.
    public static func hammer(
        _ configuration: Configuration = Configuration(),
        name: String,
        instances: ProviderInstances.Shared,
        fileID: String = #fileID,
        function: String = #function,
        line: Int = #line,
        sharedProvider: @escaping @Sendable ([User]) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await enter(.hammerShared, configuration, name: name, fileID: fileID, function: function, line: line) { effective in
            await Run(configuration: effective, name: name, battery: false, sharedInstance: true, bind: shared(sharedProvider)).execute()
        }
    }

    /// One fresh instance per user.
    static func perUser(_ makeProvider: @escaping @Sendable (User) async -> any IdpSdkInteractionInterface) -> Run.Bind {
        { users in
            var providers: [any IdpSdkInteractionInterface] = []
            for user in users { providers.append(await makeProvider(user)) }
            return Unverified(providers)
        }
    }

    /// One fresh instance, the same for every user.
    static func shared(_ sharedProvider: @escaping @Sendable ([User]) async -> any IdpSdkInteractionInterface) -> Run.Bind {
        { users in
            let provider = await sharedProvider(users)
            return Unverified(users.map { _ in provider })
        }
    }
}
