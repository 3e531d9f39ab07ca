import Foundation

/// Everything one `idp-bench` run measured; its JSON form is schema `"idp-bench/1"` (keys in
/// snake_case, documented in the BenchSupport article "idp-bench").
public struct BenchReport: Codable, Sendable, Equatable {
    /// The schema this version writes and reads.
    public static let currentSchema = "idp-bench/1"

    /// The report's schema, ``currentSchema``.
    public var schema = BenchReport.currentSchema
    /// The machine the run measured.
    package var machine: Machine
    /// How the run was set up.
    package var settings: Settings
    /// The provider hot path: one row per strategy and thread count.
    package var providers: [ProviderRow]
    /// The floors, and the IDP section's operations: one row per name and thread count.
    package var floors: [FloorRow]
    /// The end-to-end cells: one row per scenario, loop and level.
    package var flows: [FlowRow]
    /// The labelled locks on the hot path during closed-loop logins: contention and hold times.
    package var contention: [ContentionRow]
    /// Resident memory and threads with many flows parked; `nil` when the section did not run.
    package var memory: MemoryRow?
    /// The targets, evaluated from this run's figures.
    package var targets: [TargetRow]
    /// The `scaling` section: one row per core count the cells ran pinned to; empty when the
    /// section did not run and in older reports.
    package var scaling: [ScalingRow]
    /// A lone login's p50 split into the IDP's work, the hand-back and the engine's share; `nil`
    /// when the flows section did not measure it and in older reports.
    package var loneLoginSplit: LoneLoginSplit?
    /// What the kernel did to the process's threads during the contention run, beside the
    /// profiler's long holds; `nil` when the section did not run and in older reports.
    package var preemption: PreemptionRecord?
    /// How long the machine itself paused threads that had nothing to do but spin, measured right
    /// after the contention run; `nil` when not measured and in older reports.
    package var machinePauses: MachinePauses?
    /// How many times the product noted heavy work (hashing, randomness, rendering, large
    /// allocations) during the contention run, by kind, under a lock or not: each lock's share
    /// is its row's ``ContentionRow/heavyWork``. `nil` when the section did not run and in older
    /// reports.
    package var heavyWorkNoted: [String: UInt64]?

    /// A report of a run.
    /// - Parameters:
    ///   - machine: The machine the run measured.
    ///   - settings: How the run was set up.
    ///   - providers: The provider hot path's rows.
    ///   - floors: The floors' rows.
    ///   - flows: The end-to-end cells.
    ///   - contention: The contention rows.
    ///   - memory: The memory section's row.
    ///   - targets: The evaluated targets.
    ///   - scaling: The scaling section's rows.
    ///   - loneLoginSplit: The lone login's p50 in measured parts.
    ///   - preemption: The kernel's preemptions during the contention run.
    ///   - machinePauses: The machine's own pauses of spinning threads.
    ///   - heavyWorkNoted: The heavy work noted during the contention run, by kind.
    package init(machine: Machine, settings: Settings, providers: [ProviderRow] = [], floors: [FloorRow] = [], flows: [FlowRow] = [],
                contention: [ContentionRow] = [], memory: MemoryRow? = nil, targets: [TargetRow] = [], scaling: [ScalingRow] = [],
                loneLoginSplit: LoneLoginSplit? = nil, preemption: PreemptionRecord? = nil, machinePauses: MachinePauses? = nil,
                heavyWorkNoted: [String: UInt64]? = nil) {
        self.machine = machine
        self.settings = settings
        self.providers = providers
        self.floors = floors
        self.flows = flows
        self.contention = contention
        self.memory = memory
        self.targets = targets
        self.scaling = scaling
        self.loneLoginSplit = loneLoginSplit
        self.preemption = preemption
        self.machinePauses = machinePauses
        self.heavyWorkNoted = heavyWorkNoted
    }

    enum CodingKeys: String, CodingKey {
        case schema, machine, settings, providers, floors, flows, contention, memory, targets, scaling, loneLoginSplit = "lone_login_split"
        case preemption = "contention_preemption", machinePauses = "machine_pauses", heavyWorkNoted = "contention_heavy_work_noted"
    }

    /// Reads a report; `scaling`, `lone_login_split`, `contention_preemption`, `machine_pauses`
    /// and `contention_heavy_work_noted`, absent from older reports, default to none.
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` when a key present in every report is missing or mistyped.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        schema = try container.decode(String.self, forKey: .schema)
        machine = try container.decode(Machine.self, forKey: .machine)
        settings = try container.decode(Settings.self, forKey: .settings)
        providers = try container.decode([ProviderRow].self, forKey: .providers)
        floors = try container.decode([FloorRow].self, forKey: .floors)
        flows = try container.decode([FlowRow].self, forKey: .flows)
        contention = try container.decode([ContentionRow].self, forKey: .contention)
        memory = try container.decodeIfPresent(MemoryRow.self, forKey: .memory)
        targets = try container.decode([TargetRow].self, forKey: .targets)
        scaling = try container.decodeIfPresent([ScalingRow].self, forKey: .scaling) ?? []
        loneLoginSplit = try container.decodeIfPresent(LoneLoginSplit.self, forKey: .loneLoginSplit)
        preemption = try container.decodeIfPresent(PreemptionRecord.self, forKey: .preemption)
        machinePauses = try container.decodeIfPresent(MachinePauses.self, forKey: .machinePauses)
        heavyWorkNoted = try container.decodeIfPresent([String: UInt64].self, forKey: .heavyWorkNoted)
    }
}
