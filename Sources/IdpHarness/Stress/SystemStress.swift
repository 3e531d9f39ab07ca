import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk

/// Stress over the whole system: the IdpSdk engine, MasterControllers (one per simulated device)
/// and the in-process IDP, driven by a scenario mix under the ``ControlledScheduler`` with faults
/// from one seed, with the system's invariants checked as it runs.
///
/// ```swift
/// var options = SystemStress.Options(seed: 7, runs: 20)
/// options.faultRates = SystemStress.Options.defaultFaultRates
/// options.makeProvider = { credentials in MyProvider(credentials) }   // your provider under test
/// let report = await SystemStress.run(options)
/// print(report)                          // flows, faults injected, invariants, or a reproducer
/// ```
///
/// Each run builds a fresh world: an IDP with a lockout policy on a `ManualClock`, one
/// `IdpSdkService` whose scheduling is taken over by the run (`ExecutionController`), and
/// `flows` participants, each an app on a device of its own that activates its user and then
/// plays steps drawn from the mix. The SDK's hand-offs, its provider calls, transport requests and
/// responses, completions, cancellations, timeouts and MC events are the seams where the
/// scheduler (PCT by default) picks who goes next; every decision is logged, so a failure prints
/// one string that replays it (``replay(_:options:times:)``).
///
/// An MC event's task is a participant of its own: it parks where the MasterController awaits
/// the IDP (each request and each response is a seam) and where it joins a refresh in flight, so
/// other events of the same MC, other devices' steps and clock moves can come between its
/// awaits. What is not controlled, and says so: a provider that blocks past the scheduler's stall
/// timeout runs on outside control (the run is then marked partially controlled in
/// ``Report/partiallyControlledRuns``).
///
/// With ``Options/strategy`` `nil` the system runs free, on its own threads: the same invariants
/// are checked, nothing replays, and a failure prints what the participants it names did
/// (``Report/Failure/eventLog``).
public enum SystemStress {
    /// One kind of step a participant plays.
    public enum Step: String, Sendable, CaseIterable, Comparable {
        /// Logs the participant's user in (an IdpSdk flow and SetAuthorisationCode).
        case login
        /// Adds and activates another user on the participant's device.
        case addUser = "add-user"
        /// Restarts the MC and logs the user in with OfflineLogin.
        case offlineLogin = "offline-login"
        /// Restarts the app: a new MasterController over the same token store, then Start.
        case restart
        /// ClearIamTokenCache with `CLEAR_ALL`, then a login.
        case logoutAll = "logout-all"
        /// ClearIamTokenCache with `CLEAR_ACCESS_AND_REFRESH`, then a login.
        case logoutAccessAndRefresh = "logout-access-and-refresh"
        /// ClearIamTokenCache with `CLEAR_OFFLINE`, then a login.
        case logoutOffline = "logout-offline"
        /// Moves the clock past the access token's expiry and asks for tokens (several at once
        /// under the `refresh.storm` fault).
        case refresh
        /// A storm of wrong passwords on a fresh user, to the lockout and past it.
        case lockout
        /// A login that its caller cancels.
        case cancel

        /// Orders steps by their command-line names.
        ///
        /// - Parameters:
        ///   - lhs: A step.
        ///   - rhs: Another step.
        /// - Returns: Whether `lhs`'s name sorts first.
        public static func < (lhs: Step, rhs: Step) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What a run of the stress does.
    public struct Options: Sendable {
        /// Seeds the strategy of every run and the scenario's choices.
        public var seed: UInt64
        /// How many runs (at most, with ``duration``).
        public var runs: Int
        /// Stop starting runs after this long (wall time); `nil`: run all ``runs``.
        public var duration: Duration?
        /// Participants (apps on devices) per run: the flows in flight.
        public var flows: Int
        /// Users at the IDP; participant `i` plays user `i % users`, so with fewer users than
        /// flows, devices share users (and their lockout counts).
        public var users: Int
        /// Steps each participant plays after its activation.
        public var stepsPerFlow: Int
        /// The mix: each step's weight.
        public var mix: [Step: Int]
        /// Fault name → probability per site (see ``Options/defaultFaultRates`` for the names).
        public var faultRates: [Fault: Double]
        /// How the scheduler chooses; `nil` runs free (no control, no replay).
        public var strategy: ScheduleStrategy?
        /// The provider under test, built per run over the run's truth (answer the flow in
        /// `interactionData` with ``Credentials/values(for:)``, as a keychain or a UI would).
        public var makeProvider: @Sendable (Credentials) -> any IdpSdkInteractionInterface & Sendable
        /// Wrong secrets in a row that lock an account at the IDP.
        public var lockoutAfter: Int
        /// How long a participant may stay away from a seam before it is set aside (the run is
        /// then partially controlled, and its replay need not repeat). Raise it on a loaded
        /// machine when no provider blocks.
        public var stallTimeout: Duration = .milliseconds(500)
        /// How long nobody may make progress before a run is called a deadlock: generous, because
        /// an MC event's task can wait that long for a Swift concurrency thread on a busy machine.
        public var deadlockTimeout: Duration = .seconds(30)
        /// Stop at the first run that reaches this interleaving, with its reproducer in
        /// ``Report/reached`` (for a controlled run); `nil`: run on.
        public var stopAt: Interleaving?

        /// Options; every parameter has a default.
        ///
        /// - Parameters:
        ///   - seed: Seeds every run's strategy and choices; 1.
        ///   - runs: How many runs at most; 20.
        ///   - duration: Stop starting runs after this long (wall time); `nil`: run all `runs`.
        ///   - flows: Participants per run; 4.
        ///   - users: Users at the IDP; 3.
        ///   - stepsPerFlow: Steps each participant plays after its activation; 3.
        ///   - mix: Each step's weight; ``defaultMix``.
        ///   - faultRates: Fault → probability per site; none by default.
        ///   - strategy: How the scheduler chooses; PCT of depth 3 over 100 steps by default, `nil`
        ///     runs free.
        ///   - lockoutAfter: Wrong secrets in a row that lock an account; 3.
        ///   - makeProvider: Builds the provider under test over the run's truth; the truth itself
        ///     by default.
        public init(seed: UInt64 = 1, runs: Int = 20, duration: Duration? = nil, flows: Int = 4, users: Int = 3, stepsPerFlow: Int = 3,
                    mix: [Step: Int] = Options.defaultMix, faultRates: [Fault: Double] = [:],
                    strategy: ScheduleStrategy? = .pct(depth: 3, steps: 100), lockoutAfter: Int = 3,
                    makeProvider: @escaping @Sendable (Credentials) -> any IdpSdkInteractionInterface & Sendable = { $0 }) {
            self.seed = seed
            self.runs = runs
            self.duration = duration
            self.flows = flows
            self.users = users
            self.stepsPerFlow = stepsPerFlow
            self.mix = mix
            self.faultRates = faultRates
            self.strategy = strategy
            self.makeProvider = makeProvider
            self.lockoutAfter = lockoutAfter
        }

        /// Every step, login weighted most.
        public static let defaultMix: [Step: Int] = [
            .login: 4, .addUser: 1, .offlineLogin: 1, .restart: 1, .logoutAll: 1, .logoutAccessAndRefresh: 1,
            .logoutOffline: 1, .refresh: 2, .lockout: 1, .cancel: 1,
        ]

        /// Every fault the stress knows, each at a rate that strikes a few times per run.
        public static let defaultFaultRates: [Fault: Double] = [
            .transportDelay: 0.1,
            .transportDrop: 0.02,
            .transportDuplicate: 0.05,
            .transportReorder: 0.03,
            .transportConnectionLost: 0.02,
            .transport5xx: 0.02,
            .transportTimeout: 0.02,
            .providerSlow: 0.05,
            .providerHang: 0.02,
            .providerFail: 0.03,
            .clockCodeExpiry: 0.05,
            .refreshStorm: 0.5,
            .refreshLogoutRace: 0.3,
            .codeWrongVerifier: 0.2,
        ]
    }

    /// What the stress found.
    public struct Report: Sendable, CustomStringConvertible {
        /// Runs made.
        public var runs = 0
        /// `getAuthorizationCode` flows started and MC events sent, over all runs.
        public var flows = 0
        /// MC events sent, over all runs.
        public var mcEvents = 0
        /// Faults that fired, by name.
        public var faultsInjected: [String: Int] = [:]
        /// Invariant checks made, by invariant.
        public var checks: [Invariant: Int] = [:]
        /// How often the runs reached each interleaving the invariants accept but a reader should
        /// know was explored.
        public var interleavings: [Interleaving: Int] = [:]
        /// With ``Options/stopAt``: the run that reached it and the reproducer that replays it.
        public var reached: (run: Int, interleaving: Interleaving, reproducer: String)?
        /// Scheduler decisions over all runs.
        public var decisions = 0
        /// Runs in which a participant ran outside the scheduler's control for a while; their
        /// replays need not repeat.
        public var partiallyControlledRuns = 0
        /// Why the first partially controlled run lost control (a hung provider set aside, say).
        public var partialControlExample: String?
        /// The first failing run's violations, its reproducer, the shrunk reproducer and how many
        /// replays failed the same way (`nil` when every invariant held).
        public var failure: Failure?
        /// Wall time of the whole stress, in seconds.
        public var seconds = 0.0

        /// The first failing run: what it broke and how to replay it.
        public struct Failure: Sendable {
            /// The run that failed, from 1.
            public var run: Int
            /// The invariants it broke, with what was seen.
            public var violations: [String]
            /// The string ``SystemStress/replay(_:options:times:)`` replays; a placeholder for a
            /// free run.
            public var reproducer: String
            /// The shrunk reproducer; `-` for a free run.
            public var shrunk: String
            /// Participants and scheduler decisions of the original reproducer.
            public var sizeBefore: (flows: Int, decisions: Int)
            /// Participants and scheduler decisions of the shrunk reproducer.
            public var sizeAfter: (flows: Int, decisions: Int)
            /// Of the confirming replays, how many failed the same way.
            public var replaysFailingTheSameWay: Int
            /// How many confirming replays were made (none for a free run).
            public var replays: Int
            /// Set when the replays did not agree: nondeterminism in the code under test; `nil`
            /// otherwise.
            public var nondeterminism: String?
            /// What the participants the violations name did, oldest first (their steps, MC
            /// events and results, flows, clock moves): a free run's account of a failure it
            /// cannot replay.
            public var eventLog: [String] = []
        }

        /// A few lines: counts, faults, invariants, interleavings, and the failure or that every
        /// invariant held.
        public var description: String {
            var lines = ["system stress: \(runs) runs, \(flows) flows, \(mcEvents) MC events, \(decisions) scheduler decisions, \(String(format: "%.1f", seconds)) s"]
            let faults = faultsInjected.keys.sorted().map { "\($0) \(faultsInjected[$0]!)" }
            lines.append("faults injected: \(faults.isEmpty ? "none" : faults.joined(separator: ", "))")
            lines.append("invariants checked: " + checks.keys.sorted().map { "\($0.rawValue) ×\(checks[$0]!)" }.joined(separator: ", "))
            if !interleavings.isEmpty {
                lines.append("interleavings reached: " + interleavings.keys.sorted().map { "\($0.rawValue) ×\(interleavings[$0]!)" }.joined(separator: ", "))
            }
            if let reached { lines.append("reached '\(reached.interleaving.rawValue)' in run \(reached.run); replay it with: \(reached.reproducer)") }
            if partiallyControlledRuns > 0 {
                lines.append("partially controlled runs: \(partiallyControlledRuns) (the first: \(partialControlExample ?? "?")); their interleavings are not all the scheduler's, and a replay of one need not repeat")
            }
            if let failure {
                lines.append("FAILED in run \(failure.run): \(failure.violations.joined(separator: "; "))")
                lines.append("  reproducer: \(failure.reproducer)")
                lines.append("  shrunk (flows \(failure.sizeBefore.flows)→\(failure.sizeAfter.flows), decisions \(failure.sizeBefore.decisions)→\(failure.sizeAfter.decisions)): \(failure.shrunk)")
                lines.append("  replays failing the same way: \(failure.replaysFailingTheSameWay) of \(failure.replays)")
                if let nondeterminism = failure.nondeterminism { lines.append("  nondeterminism: \(nondeterminism)") }
                if !failure.eventLog.isEmpty {
                    lines.append("  what happened (oldest first):")
                    lines += failure.eventLog.map { "    \($0)" }
                }
            } else {
                lines.append("every invariant held; nothing lost")
            }
            return lines.joined(separator: "\n")
        }
    }

    /// Interleavings that the invariants accept and that a run may or may not reach; each is
    /// counted in ``Report/interleavings`` so a report says which were explored, and
    /// ``Options/stopAt`` finds a run that reaches one.
    public enum Interleaving: String, Sendable, CaseIterable, Comparable {
        /// Another device's step moved the shared clock past a lock's end while a wrong-password
        /// storm ran, so more guesses were evaluated, up to another lock.
        case lockLiftedDuringStorm = "lock lifted by a clock jump during a storm"
        /// ExchangeIamToken names no user: it answered for another user that was logged in on
        /// the same MasterController since (an added user's activation logs that user in).
        case exchangeForAnotherUser = "ExchangeIamToken answered for the MC's other logged-in user"
        /// The clock moved past a refreshed token's expiry while a refresh storm ran, so the
        /// storm caused a second refresh grant, one per expiry.
        case expiryDuringRefreshStorm = "a clock jump made a second expiry during a refresh storm"
        /// A flow ended (with a code, the IDP's refusal or its provider's error) before its
        /// caller's cancel took effect.
        case cancelAfterEnd = "a cancel came after the flow had ended"

        /// Orders interleavings by their descriptions.
        ///
        /// - Parameters:
        ///   - lhs: An interleaving.
        ///   - rhs: Another interleaving.
        /// - Returns: Whether `lhs`'s description sorts first.
        public static func < (lhs: Interleaving, rhs: Interleaving) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The short names the command line takes.
        public var name: String {
            switch self {
            case .lockLiftedDuringStorm: "lock-lifted"
            case .exchangeForAnotherUser: "exchange-other-user"
            case .expiryDuringRefreshStorm: "second-expiry"
            case .cancelAfterEnd: "cancel-after-end"
            }
        }

        /// The interleaving with short name `name`, or `nil`.
        public init?(name: String) {
            guard let found = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = found
        }
    }

    /// Explores `options.runs` runs (or until `options.duration`); on the first failure, replays
    /// it twice, shrinks it and stops.
    public static func run(_ options: Options) async -> Report {
        let scenario = scenario(options)
        var report = Report()
        let start = ContinuousClock.now
        var random = SeededRandom(seed: options.seed)
        for run in 1...max(1, options.runs) {
            // Each run its own faults (sites keyed by flow and step under the run's fault seed).
            let faults = FaultPlan(seed: random.next(), rates: Dictionary(uniqueKeysWithValues: options.faultRates.map { ($0.key.rawValue, $0.value) }))
            if let duration = options.duration, ContinuousClock.now - start > duration { break }
            report.runs = run
            let result: StressRunResult
            let world: World
            if let strategy = options.strategy {
                let reproducer = StressReproducer(strategy: strategy, seed: random.next(), flows: Array(0..<options.flows), faults: faults, decisions: [])
                (result, world) = await runOnce(scenario, reproducer)
            } else {
                (result, world) = await runFree(scenario, faults: faults)
            }
            world.tally(into: &report)
            report.decisions += result.outcome?.decisions.count ?? 0
            if result.outcome?.partiallyControlled == true {
                report.partiallyControlledRuns += 1
                if report.partialControlExample == nil { report.partialControlExample = result.outcome?.partialControlReason }
            }
            for site in result.fired { report.faultsInjected[site.fault, default: 0] += 1 }
            if let wanted = options.stopAt, world.interleavingsSeen[wanted] != nil, options.strategy != nil {
                report.reached = (run, wanted, result.reproducer.description)
                break
            }
            if !result.violations.isEmpty {
                if options.strategy != nil {
                    let explored = await StressRunner.confirmAndShrink(scenario, result, failingRun: run, runs: run, replays: 2)
                    report.failure = Report.Failure(
                        run: run, violations: result.violations, reproducer: result.reproducer.description, shrunk: (explored.shrunk ?? result.reproducer).description,
                        sizeBefore: (result.reproducer.flows.count, result.reproducer.decisions.count),
                        sizeAfter: ((explored.shrunk ?? result.reproducer).flows.count, (explored.shrunk ?? result.reproducer).decisions.count),
                        replaysFailingTheSameWay: explored.replaysFailingTheSameWay, replays: explored.replays, nondeterminism: explored.nondeterminism)
                } else {
                    report.failure = Report.Failure(run: run, violations: result.violations, reproducer: "(free-running: no reproducer)", shrunk: "-",
                                                    sizeBefore: (options.flows, 0), sizeAfter: (options.flows, 0), replaysFailingTheSameWay: 0, replays: 0,
                                                    eventLog: world.eventLog(around: result.violations))
                }
                break
            }
        }
        report.seconds = (ContinuousClock.now - start).timeInterval
        return report
    }

    /// Replays a reproducer printed by a failing run `times` times; the violations of each replay.
    public static func replay(_ reproducer: String, options: Options, times: Int = 10) async throws(StressError) -> [[String]] {
        try await replayRuns(reproducer, options: options, times: times).map(\.violations)
    }

    /// One replay of a reproducer: what it broke and which interleavings it reached.
    public struct Replay: Sendable {
        /// The invariants this replay broke; empty when all held.
        public var violations: [String]
        /// How often this replay reached each interleaving.
        public var interleavings: [Interleaving: Int]
    }

    /// Replays a reproducer (of a failure, or of ``Report/reached``) `times` times.
    /// - Throws: ``StressError`` when `reproducer` cannot be parsed.
    public static func replayRuns(_ reproducer: String, options: Options, times: Int = 10) async throws(StressError) -> [Replay] {
        let parsed = try StressReproducer(parsing: reproducer)
        let scenario = scenario(options)
        var results: [Replay] = []
        for _ in 0..<max(1, times) {
            let (result, world) = await runOnce(scenario, parsed)
            results.append(Replay(violations: result.violations, interleavings: world.interleavingsSeen))
        }
        return results
    }

    /// The scenario as the generic ``StressRunner`` sees it (its world is built per run).
    public static func scenario(_ options: Options) -> StressScenario<World> {
        StressScenario(name: "system: \(options.flows) flows, \(options.users) users, \(options.stepsPerFlow) steps each", flows: options.flows,
                       makeWorld: { World(options: options) },
                       flow: { world, context in world.play(context) },
                       check: { world in world.finalCheck() },
                       attach: { world, run in world.attach(run) },
                       quiesce: { world in world.quiesce() },
                       stallTimeout: options.stallTimeout, deadlockTimeout: options.deadlockTimeout)
    }

    private static func runOnce(_ scenario: StressScenario<World>, _ reproducer: StressReproducer) async -> (StressRunResult, World) {
        let (keeping, kept) = keepingWorld(scenario)
        let result = await StressRunner.run(keeping, reproducer)
        return (result, kept.withLock { $0! })
    }

    private static func runFree(_ scenario: StressScenario<World>, faults: FaultPlan) async -> (StressRunResult, World) {
        let (keeping, kept) = keepingWorld(scenario)
        let violations = await StressRunner.runFree(keeping, faults: faults)
        let world = kept.withLock { $0! }
        let reproducer = StressReproducer(strategy: .randomWalk, seed: 0, flows: Array(0..<scenario.flows), faults: faults, decisions: [])
        return (StressRunResult(violations: violations, outcome: nil, fired: world.firedSites, reproducer: reproducer), world)
    }

    /// The same scenario, keeping the world its run makes (for the report's tallies).
    private static func keepingWorld(_ scenario: StressScenario<World>) -> (StressScenario<World>, LockedValue<World?>) {
        let kept = LockedValue<World?>(nil)
        let keeping = StressScenario(name: scenario.name, flows: scenario.flows, makeWorld: {
            let world = scenario.makeWorld()
            kept.withLock { $0 = world }
            return world
        }, flow: scenario.flow, check: scenario.check, attach: scenario.attach, quiesce: scenario.quiesce, stallTimeout: scenario.stallTimeout,
                                     deadlockTimeout: scenario.deadlockTimeout)
        return (keeping, kept)
    }
}
