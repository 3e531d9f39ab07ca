import IdpSdk

extension ProviderConformanceKit {
    /// Replays the schedule of a controlled-phase reproducer (as a failed "controlled
    /// interleavings" verdict prints it) `times` times against fresh instances of your provider,
    /// one per user, in this process: each replay makes the same choices, so a failure that is
    /// your provider's fails every time, and a fix passes every time. A replay whose thread the OS
    /// showed blocked outside the kit's points (a lock an unrelated thread of the process held) is
    /// run again, up to three tries, as the phase does.
    ///
    /// ```swift
    /// @Test func tokenCacheRefreshesOnce() async throws {
    ///     let replay = try await ProviderConformanceKit.replay(
    ///         "controlled/1 threads=2 calls=1 instances=2 horizon=86400 strategy=pct:3:16 seed=42 decisions=0.1.2",
    ///         name: "TokenCache", instances: .perUser) { user in TokenCache(user) }
    ///     #expect(replay.failures == 0, "\(replay)")
    /// }
    /// ```
    ///
    /// Replay with the `instances:` the failing run had: a schedule found with one instance per
    /// user names participants a shared instance does not have.
    /// - Parameters:
    ///   - reproducer: The one-line reproducer.
    ///   - times: How many times to replay it.
    ///   - shrinking: Whether to look for a smaller schedule that still fails, after the replays.
    ///   - name: The provider's name, for the description.
    ///   - instances: ``ProviderInstances/PerUser/perUser``.
    ///   - makeProvider: Makes each instance (fresh users for every replay), as for
    ///     ``run(_:name:instances:fileID:function:line:makeProvider:)``.
    /// - Returns: What each replay did.
    /// - Throws: ``ControlledReproducerError`` when the reproducer cannot be read.
    public static func replay(_ reproducer: String, times: Int = 10, shrinking: Bool = false, name: String,
                              instances: ProviderInstances.PerUser,
                              makeProvider: @escaping @Sendable (User) async -> any IdpSdkInteractionInterface) async throws -> ControlledReplay {
        try await replay(reproducer, times: times, shrinking: shrinking, name: name, fresh: perUser(makeProvider))
    }

    /// Replays a controlled-phase reproducer against one fresh instance for every user per
    /// replay; otherwise as ``replay(_:times:shrinking:name:instances:makeProvider:)``.
    ///
    /// ```swift
    /// let replay = try await ProviderConformanceKit.replay(reproducer, name: "MyProvider", instances: .shared) { users in
    ///     MyProvider(users)
    /// }
    /// ```
    /// - Parameters:
    ///   - reproducer: The one-line reproducer.
    ///   - times: How many times to replay it.
    ///   - shrinking: Whether to look for a smaller schedule that still fails, after the replays.
    ///   - name: The provider's name, for the description.
    ///   - instances: ``ProviderInstances/Shared/shared``.
    ///   - sharedProvider: Called once per replay with that replay's fresh users.
    /// - Returns: What each replay did.
    /// - Throws: ``ControlledReproducerError`` when the reproducer cannot be read.
    public static func replay(_ reproducer: String, times: Int = 10, shrinking: Bool = false, name: String,
                              instances: ProviderInstances.Shared,
                              sharedProvider: @escaping @Sendable ([User]) async -> any IdpSdkInteractionInterface) async throws -> ControlledReplay {
        try await replay(reproducer, times: times, shrinking: shrinking, name: name, fresh: shared(sharedProvider))
    }

    private static func replay(_ reproducer: String, times: Int, shrinking: Bool, name: String, fresh: @escaping Run.Bind) async throws -> ControlledReplay {
        let scenario = try ControlledScenario(reproducer: reproducer)
        let settings = ControlledPhase.Settings(schedules: 0, threads: scenario.threads, calls: scenario.calls, instances: scenario.instances,
                                                horizon: .seconds(scenario.horizonSeconds), seed: scenario.seed)
        var runs: [ControlledReplay.Run] = []
        var lastFailed: ControlledPhase.ScheduleResult?
        for _ in 0..<max(0, times) {
            // A try the OS showed blocked outside the points (a lock an unrelated thread held) is
            // run again, failed or not, as the phase and its shrinking do: it is no verdict.
            var result = await ControlledPhase.run(scenario, fresh: fresh, settings: settings)
            for _ in 1..<ControlledPhase.tries where result.uncontrolled != nil {
                result = await ControlledPhase.run(scenario, fresh: fresh, settings: settings)
            }
            runs.append(.init(problems: result.problems, decisions: result.decisions.count, divergence: result.divergence, uncontrolled: result.uncontrolled))
            if result.failed { lastFailed = result }
        }
        var shrunk: ControlledScenario?
        if shrinking, let lastFailed {
            let phase = ControlledPhase(settings: settings, fresh: fresh, name: name)
            shrunk = await phase.shrink(lastFailed).scenario
        }
        return ControlledReplay(providerName: name, scenario: scenario, runs: runs, shrunk: shrunk)
    }
}

/// What ``ProviderConformanceKit/replay(_:times:shrinking:name:instances:makeProvider:)`` saw: each replay's
/// problems (forbidden answers, a deadlock), and the smaller failing schedule when it shrank one.
public struct ControlledReplay: Sendable, CustomStringConvertible {
    /// One replay.
    public struct Run: Sendable {
        /// What failed in it; empty when every answer was right.
        public let problems: [String]
        /// The scheduling decisions it took.
        public let decisions: Int
        /// Where the replay could not follow the reproducer (a decision named a thread that was not
        /// waiting: the provider behaved differently this time), or `nil`.
        public let divergence: String?
        /// Why a thread ran outside the kit's control, or `nil`.
        public let uncontrolled: String?

        /// Whether anything failed.
        public var failed: Bool { !problems.isEmpty }
    }

    /// The provider's name.
    public let providerName: String
    /// The schedule replayed.
    public let scenario: ControlledScenario
    /// Each replay, in order.
    public let runs: [Run]
    /// A smaller schedule that still fails, when shrinking was asked for and a replay failed.
    public let shrunk: ControlledScenario?

    /// How many replays failed.
    public var failures: Int { runs.filter(\.failed).count }

    /// "TokenCache: 10 of 10 replays failed: …", with the shrunk reproducer when there is one.
    public var description: String {
        let first = runs.first(where: \.failed).map { ": " + $0.problems.joined(separator: "; ") } ?? ""
        let diverged = runs.compactMap(\.divergence).first.map { "; a replay diverged: \($0)" } ?? ""
        let shrunkLine = shrunk.map { "; shrunk: \($0)" } ?? ""
        return "\(providerName): \(failures) of \(runs.count) replays failed\(first)\(diverged)\(shrunkLine)"
    }
}
