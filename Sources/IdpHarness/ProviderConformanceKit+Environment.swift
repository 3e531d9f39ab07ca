import Foundation

extension ProviderConformanceKit {
    /// The environment variable that, when set, replaces ``Configuration/controlledSeed`` in every
    /// run of the kit: a whole number (`IDPHARNESS_CONTROLLED_SEED=7 swift test --filter …`
    /// reruns a failure printed with seed 7).
    public static let controlledSeedVariable = "IDPHARNESS_CONTROLLED_SEED"
    /// The environment variable that, when set, replaces ``Configuration/controlledSchedules`` in
    /// every run of the kit: a whole number, 0 for no controlled phase.
    public static let controlledSchedulesVariable = "IDPHARNESS_CONTROLLED_SCHEDULES"

    /// `configuration` with the controlled phase's seed and schedule budget taken from the
    /// environment where it sets them, or why a value there cannot be read.
    static func overridden(_ configuration: Configuration,
                           by environment: [String: String] = ProcessInfo.processInfo.environment) -> Result<Configuration, KitError> {
        var effective = configuration
        if let text = environment[controlledSeedVariable] {
            guard let seed = UInt64(text.trimmingCharacters(in: .whitespaces)) else {
                return .failure(KitError("\(controlledSeedVariable)='\(text)' is not a whole number from 0 to \(UInt64.max)"))
            }
            effective.controlledSeed = seed
        }
        if let text = environment[controlledSchedulesVariable] {
            guard let schedules = Int(text.trimmingCharacters(in: .whitespaces)), schedules >= 0 else {
                return .failure(KitError("\(controlledSchedulesVariable)='\(text)' is not a whole number of schedules, 0 or more"))
            }
            effective.controlledSchedules = schedules
        }
        return .success(effective)
    }

    /// Runs `body` with the configuration the environment leaves, as `entry` of the kit (in a
    /// child process where the configuration says so); a report of one failed "configuration"
    /// check when the environment's values cannot be read.
    static func enter(_ entry: KitCall.Entry, _ configuration: Configuration, name: String, fileID: String, function: String, line: Int,
                      _ body: @escaping @Sendable (Configuration) async -> ConformanceReport) async -> ConformanceReport {
        switch overridden(configuration) {
        case .failure(let error):
            let call = KitCall(entry: entry, name: name, configuration: configuration, fileID: fileID, function: function, line: line)
            return KitIsolation.notRun(call, check: .configuration, checked: true, detail: "the environment: \(error.description)")
        case .success(let effective):
            let call = KitCall(entry: entry, name: name, configuration: effective, fileID: fileID, function: function, line: line)
            return await KitIsolation.perform(call) { await body(effective) }
        }
    }

    /// Runs only the controlled phase (no race hammer, no several-instances rounds, no engine
    /// flows), with one provider instance per user: the quick loop while you fix an ordering bug.
    ///
    /// ```swift
    /// let report = await ProviderConformanceKit.controlled(name: "MyProvider", instances: .perUser) { user in
    ///     MyProvider(user)
    /// }
    /// #expect(report.check(.controlledInterleavings)?.passed == true, "\(report)")
    /// ```
    ///
    /// Its report has the "controlled interleavings" check and ThreadSanitizer's; the seed and
    /// budget are `configuration`'s, or the environment's (``controlledSeedVariable``,
    /// ``controlledSchedulesVariable``). In a child process by default, like
    /// ``run(_:name:instances:fileID:function:line:makeProvider:)``.
    /// - Parameters:
    ///   - configuration: The controlled phase's seed, schedules, threads, calls, instances and
    ///     expiry horizon; its hammer and instance rounds are not used.
    ///   - name: The provider's name, for the report.
    ///   - instances: ``ProviderInstances/PerUser/perUser``.
    ///   - fileID: The calling file; leave the default.
    ///   - function: The calling function; leave the default.
    ///   - line: The calling line; leave the default.
    ///   - makeProvider: Called for every instance of every schedule (a fresh user each time).
    /// - Returns: The controlled phase's verdict and ThreadSanitizer's.
    public static func controlled(
        _ configuration: Configuration = Configuration(),
        name: String,
        instances: ProviderInstances.PerUser,
        fileID: String = #fileID,
        function: String = #function,
        line: Int = #line,
        makeProvider: @escaping @Sendable (User) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await hammer(phaseOnly(configuration), name: name, instances: .perUser, fileID: fileID, function: function, line: line,
                     makeProvider: makeProvider)
    }

    /// Runs only the controlled phase with one provider instance for every user, fresh for every
    /// schedule; otherwise as ``controlled(_:name:instances:fileID:function:line:makeProvider:)``.
    ///
    /// ```swift
    /// let report = await ProviderConformanceKit.controlled(name: "MyProvider", instances: .shared) { users in
    ///     MyProvider(users)
    /// }
    /// ```
    /// - Parameters:
    ///   - configuration: The controlled phase's seed, schedules, threads, calls and expiry horizon.
    ///   - name: The provider's name, for the report.
    ///   - instances: ``ProviderInstances/Shared/shared``.
    ///   - fileID: The calling file; leave the default.
    ///   - function: The calling function; leave the default.
    ///   - line: The calling line; leave the default.
    ///   - sharedProvider: Called once in every schedule, with every user of it.
    /// - Returns: The controlled phase's verdict and ThreadSanitizer's.
    public static func controlled(
        _ configuration: Configuration = Configuration(),
        name: String,
        instances: ProviderInstances.Shared,
        fileID: String = #fileID,
        function: String = #function,
        line: Int = #line,
        sharedProvider: @escaping @Sendable ([User]) async -> any IdpSdkInteractionInterface
    ) async -> ConformanceReport {
        await hammer(phaseOnly(configuration), name: name, instances: .shared, fileID: fileID, function: function, line: line,
                     sharedProvider: sharedProvider)
    }

    /// `configuration` with no hammer and no several-instances rounds: the controlled phase alone.
    private static func phaseOnly(_ configuration: Configuration) -> Configuration {
        var phaseOnly = configuration
        phaseOnly.hammerRounds = 0
        phaseOnly.instanceRounds = 0
        return phaseOnly
    }
}

/// Why the kit could not run as configured.
struct KitError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
