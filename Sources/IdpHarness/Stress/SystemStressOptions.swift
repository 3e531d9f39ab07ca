import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// What a run of the stress does.
    public struct Options: Sendable {
        /// Seeds the strategy of every run and the scenario's choices.
        public var seed: UInt64
        /// How many runs (at most, with ``duration``): this shard's runs, with ``shard``.
        public var runs: Int
        /// Which part of the campaign's runs to make (``Shard``); the whole campaign by default.
        public var shard = Shard.whole
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
        /// How long nothing may move in a run, controlled or free, before it ends undecided: the
        /// last-resort guard, never a verdict. No clock decides otherwise: a participant is set
        /// aside (the run is then partially controlled) only when the OS shows it blocked outside a
        /// seam, and a stuck run is one in which nobody can go on and the quiet world can do
        /// nothing (free-running: with no thread of the process running).
        public var guardLimit: Duration = .seconds(60)
        /// Stop at the first run that reaches this interleaving, with its reproducer in
        /// ``Report/reached`` (for a controlled run); `nil`: run on.
        public var stopAt: Interleaving?
        /// Whether a controlled failure is replayed twice and shrunk before the stress stops;
        /// `false` stops at the failing run with its reproducer as it ran. `true` by default.
        public var shrink = true
        /// Told the seeds of each run's world as it is built (its schedule's and its faults'):
        /// a record of what the stress explored kept apart from its report, for tests.
        package var onWorld: (@Sendable (_ seed: UInt64, _ faultSeed: UInt64) -> Void)?
        #if DEBUG
        /// A bug planted in the product under stress (engine, MasterControllers and IDP), for the
        /// stress's mutation tests; debug builds only.
        package var plantedBug: PlantedBug?
        /// A bug planted in the stress itself: it never judges this invariant (as a check skipped
        /// by a wrong filter would), which the "not exercised" verdict must catch; debug builds
        /// only.
        package var unjudged: Invariant?
        #endif

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

        /// What decides a campaign's runs, as text: the seed, the strategy, the scenario's size,
        /// the mix, the faults' rates and the lockout limit (not the provider, which a report
        /// cannot name). Shards of one campaign have the same.
        public var campaign: String {
            let mix = self.mix.keys.sorted().map { "\($0.rawValue)=\(self.mix[$0]!)" }.joined(separator: ",")
            let faults = faultRates.keys.sorted().map { "\($0.rawValue)=\(faultRates[$0]!)" }.joined(separator: ",")
            return "seed=\(seed);strategy=\(strategy.map { "\($0)" } ?? "free");flows=\(flows);users=\(users);steps=\(stepsPerFlow);lockoutAfter=\(lockoutAfter);mix=\(mix);faults=\(faults)"
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
            .transportRetryInFlight: 0.03,
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
            .codeReplay: 0.1,
        ]
    }
}
