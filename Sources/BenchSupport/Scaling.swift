import Foundation

/// What the `scaling` section measured in one child process pinned to `cores` CPUs: the flow
/// cells, the lone login and the provider hot path, all on those cores only.
package struct ScalingRow: Codable, Sendable, Equatable {
    /// The CPUs the child was pinned to (one per physical core of the run's allowed set first).
    package var cores: Int
    /// The physical cores those CPUs are on; `nil` where the topology is unknown and in reports
    /// written without it.
    package var physicalCores: Int?
    /// Closed-loop throughput of each flow cell measured at this core count.
    package var flows: [ScalingFlow]
    /// The p50 of closed-loop logins at 1 in flight, in µs.
    package var loneLoginP50Us: Double
    /// Those logins split at their phases (``LoginPartsRecord``); `nil` in older reports.
    package var loneLoginParts: LoginPartsFigures?
    /// The p50 of logins at 1 in flight run first in the child, before the heavy flow cells, in
    /// µs (``loneLoginP50Us`` runs after them); `nil` in older reports.
    package var loneLoginBeforeP50Us: Double?
    /// Those logins split at their phases; `nil` in older reports.
    package var loneLoginBeforeParts: LoginPartsFigures?
    /// The provider hot path with `cores` threads calling at once.
    package var providers: [ScalingProvider]
    /// The most contended flow-path lock during a profiled login cell at 1,024 in flight; measured
    /// only at the run's highest core count, `nil` elsewhere.
    package var lock: ScalingLock?

    /// A scaling row.
    /// - Parameters:
    ///   - cores: The CPUs the child was pinned to.
    ///   - flows: The flow cells' throughput.
    ///   - loneLoginP50Us: The p50 of logins at 1 in flight, in µs.
    ///   - providers: The provider cells at `cores` threads.
    ///   - lock: The most contended flow-path lock, at the highest core count only.
    ///   - physicalCores: The physical cores of those CPUs, if known.
    package init(cores: Int, flows: [ScalingFlow], loneLoginP50Us: Double, providers: [ScalingProvider], lock: ScalingLock? = nil,
                 physicalCores: Int? = nil) {
        self.cores = cores
        self.physicalCores = physicalCores
        self.flows = flows
        self.loneLoginP50Us = loneLoginP50Us
        self.providers = providers
        self.lock = lock
    }

    /// The throughput of `scenario` at `inFlight`, if measured.
    /// - Parameters:
    ///   - scenario: `"login"` or `"activation"`.
    ///   - inFlight: The closed loop's level.
    /// - Returns: Flows per second, or `nil`.
    package func throughput(_ scenario: String, inFlight: Int) -> Double? {
        flows.first { $0.scenario == scenario && $0.inFlight == inFlight }?.throughputPerS
    }

    /// The aggregate ns per call of the provider cell `name`, if measured.
    /// - Parameter name: The cell's name, e.g. ``ScalingProvider/nothingShared``.
    /// - Returns: ns per call of all threads together, or `nil`.
    package func nsPerCall(_ name: String) -> Double? {
        providers.first { $0.name == name }?.nsPerCall
    }

    enum CodingKeys: String, CodingKey {
        case cores, physicalCores = "physical_cores", flows, loneLoginP50Us = "lone_login_p50_us", loneLoginParts = "lone_login_parts",
             loneLoginBeforeP50Us = "lone_login_before_p50_us", loneLoginBeforeParts = "lone_login_before_parts", providers, lock
    }
}

/// One closed-loop flow cell of a scaling row.
package struct ScalingFlow: Codable, Sendable, Equatable {
    /// `"login"` or `"activation"`.
    package var scenario: String
    /// Flows in flight.
    package var inFlight: Int
    /// Flows completed per second.
    package var throughputPerS: Double

    /// A flow cell.
    /// - Parameters:
    ///   - scenario: `"login"` or `"activation"`.
    ///   - inFlight: Flows in flight.
    ///   - throughputPerS: Flows completed per second.
    package init(scenario: String, inFlight: Int, throughputPerS: Double) {
        self.scenario = scenario
        self.inFlight = inFlight
        self.throughputPerS = throughputPerS
    }

    enum CodingKeys: String, CodingKey { case scenario, inFlight = "in_flight", throughputPerS = "throughput_per_s" }
}

/// One provider cell of a scaling row: as many threads as cores.
package struct ScalingProvider: Codable, Sendable, Equatable {
    /// The name of the floor that calls a provider returning each thread's own prepared answer.
    package static let nothingShared = "floor: nothing shared"
    /// The name of the recommended provider's cell.
    package static let credentialStore = "CredentialStore"

    /// The cell's name: a floor (`floor: …`), a provider, or a peer pattern.
    package var name: String
    /// Wall-clock nanoseconds per call of all threads together.
    package var nsPerCall: Double

    /// A provider cell.
    /// - Parameters:
    ///   - name: The cell's name.
    ///   - nsPerCall: Aggregate ns per call.
    package init(name: String, nsPerCall: Double) {
        self.name = name
        self.nsPerCall = nsPerCall
    }

    enum CodingKeys: String, CodingKey { case name, nsPerCall = "ns_per_call" }
}

/// The flow-path lock found held most often during a profiled login cell.
package struct ScalingLock: Codable, Sendable, Equatable {
    /// The lock's label.
    package var label: String
    /// Its share of acquisitions that found it held, 0…1.
    package var contendedShare: Double
    /// How often it was taken.
    package var acquisitions: UInt64

    /// A lock figure.
    /// - Parameters:
    ///   - label: The lock's label.
    ///   - contendedShare: The share of acquisitions that found it held.
    ///   - acquisitions: How often it was taken.
    package init(label: String, contendedShare: Double, acquisitions: UInt64) {
        self.label = label
        self.contendedShare = contendedShare
        self.acquisitions = acquisitions
    }

    enum CodingKeys: String, CodingKey { case label, contendedShare = "contended_share", acquisitions }
}

/// Speed-up and efficiency against the 1-core row.
package enum ScalingMath {
    /// Throughput at a core count over throughput at 1 core; `nil` when either is missing or zero.
    /// - Parameters:
    ///   - throughput: The figure at the core count.
    ///   - base: The figure at 1 core.
    /// - Returns: `throughput ÷ base`.
    package static func speedUp(_ throughput: Double?, over base: Double?) -> Double? {
        guard let throughput, let base, base > 0, throughput > 0 else { return nil }
        return throughput / base
    }

    /// The speed-up divided by the cores: 1 is perfect scaling.
    /// - Parameters:
    ///   - speedUp: The speed-up over 1 core.
    ///   - cores: The cores it was measured on.
    /// - Returns: `speedUp ÷ cores`.
    package static func efficiency(_ speedUp: Double, cores: Int) -> Double {
        speedUp / Double(max(1, cores))
    }

    /// A cost per call's speed-up: the 1-thread ns per call over the figure at more threads.
    /// - Parameters:
    ///   - nsPerCall: The aggregate ns per call at the core count.
    ///   - base: The ns per call at 1 core.
    /// - Returns: `base ÷ nsPerCall`, or `nil` when either is missing or zero.
    package static func costSpeedUp(_ nsPerCall: Double?, over base: Double?) -> Double? {
        guard let nsPerCall, let base, nsPerCall > 0, base > 0 else { return nil }
        return base / nsPerCall
    }
}

/// The core counts the scaling section pins its children to: 1, 2, 4, 8 … up to `allowed`, and
/// `allowed` itself when it is not a power of two.
/// - Parameter allowed: The CPUs the run may use.
/// - Returns: The core counts, ascending; empty when `allowed` < 1.
package func scalingCoreCounts(allowed: Int) -> [Int] {
    var counts: [Int] = []
    var count = 1
    while count <= allowed {
        counts.append(count)
        count *= 2
    }
    if allowed > 0 && counts.last != allowed { counts.append(allowed) }
    return counts
}

/// The flow cells every scaling row measures, in the order the tables show them.
package let scalingFlowCells: [(scenario: String, inFlight: Int)] = [("login", 1_024), ("login", 4_096), ("activation", 1_024)]

/// A scaling target that the run's core counts could not judge, and why.
package struct UnevaluatedTarget: Sendable, Equatable {
    /// The target's name, as it reads when evaluated.
    package var name: String
    /// Why it was left out, e.g. "needs ≥ 8 cores; this machine has 2".
    package var reason: String
}

/// The scaling targets the run measured, evaluated; see ``unevaluatedScalingTargets(_:)`` for
/// those it could not judge.
/// - Parameter rows: The scaling section's rows.
/// - Returns: One row per target whose figures were measured.
package func evaluateScalingTargets(_ rows: [ScalingRow]) -> [TargetRow] {
    guard let highest = rows.max(by: { $0.cores < $1.cores }) else { return [] }
    func row(_ cores: Int) -> ScalingRow? { rows.first { $0.cores == cores } }
    var targets: [TargetRow] = []
    if highest.cores >= 16, let sixteen = row(16), let two = row(2) {
        for cell in scalingFlowCells {
            guard let at16 = sixteen.throughput(cell.scenario, inFlight: cell.inFlight),
                  let ratio = ScalingMath.speedUp(at16, over: two.throughput(cell.scenario, inFlight: cell.inFlight)) else { continue }
            targets.append(TargetRow(name: "\(cell.scenario) throughput at \(cell.inFlight) in flight, 16 cores / 2", value: ratio, limit: 7, met: ratio >= 7,
                                     detail: "\(formatRatio(at16)) vs \(formatRatio(two.throughput(cell.scenario, inFlight: cell.inFlight) ?? 0)) flows/s, at least"))
        }
    }
    if highest.cores >= 8 && highest.cores < 16, let eight = row(8), let one = row(1) {
        for cell in scalingFlowCells {
            guard let speedUp = ScalingMath.speedUp(eight.throughput(cell.scenario, inFlight: cell.inFlight),
                                                    over: one.throughput(cell.scenario, inFlight: cell.inFlight)) else { continue }
            let efficiency = ScalingMath.efficiency(speedUp, cores: 8)
            targets.append(TargetRow(name: "\(cell.scenario) efficiency at \(cell.inFlight) in flight, 8 cores", value: efficiency, limit: 0.85,
                                     met: efficiency >= 0.85, detail: "speed-up ×\(formatRatio(speedUp)) over 1 core, ÷ 8, at least"))
        }
    }
    if highest.cores >= 8, let lock = highest.lock {
        targets.append(TargetRow(name: "flow-path lock held at \(highest.cores) cores", value: lock.contendedShare * 100, limit: 2,
                                 met: lock.contendedShare <= 0.02,
                                 detail: "% of acquisitions found held, at most; \(lock.label), logins at 1024 in flight"))
    }
    if highest.cores >= 16, let sixteen = row(16), let one = row(1) {
        if let at16 = sixteen.nsPerCall(ScalingProvider.credentialStore), let at1 = one.nsPerCall(ScalingProvider.credentialStore), at1 > 0 {
            targets.append(TargetRow(name: "CredentialStore ns/call at 16 threads / 1 thread", value: at16 / at1, limit: 0.1, met: at16 / at1 <= 0.1,
                                     detail: "aggregate \(formatRatio(at16)) vs \(formatRatio(at1)) ns, at most"))
        }
        if let speedUp = ScalingMath.costSpeedUp(sixteen.nsPerCall(ScalingProvider.nothingShared), over: one.nsPerCall(ScalingProvider.nothingShared)) {
            targets.append(TargetRow(name: "floor: nothing shared, speed-up at 16 threads", value: speedUp, limit: 12, met: speedUp >= 12,
                                     detail: "aggregate ns/call at 1 thread ÷ at 16, at least"))
        }
    }
    if highest.cores >= 4, let two = row(2), two.loneLoginP50Us > 0 {
        let ratio = highest.loneLoginP50Us / two.loneLoginP50Us
        var detail = "\(formatRatio(highest.loneLoginP50Us)) vs \(formatRatio(two.loneLoginP50Us)) µs, at most, after the heavy cells"
        if let before = highest.loneLoginBeforeP50Us, let twoBefore = two.loneLoginBeforeP50Us {
            detail += "; before them \(formatRatio(before)) vs \(formatRatio(twoBefore)) µs"
        }
        if let handOff = highest.loneLoginParts?.us(of: "hand-off"), let twoHandOff = two.loneLoginParts?.us(of: "hand-off") {
            detail += "; hand-offs after them \(formatRatio(handOff)) vs \(formatRatio(twoHandOff)) µs"
        }
        if let places = highest.loneLoginParts?.callerPlaces { detail += ", the code back on \(places) at \(highest.cores) cores" }
        targets.append(TargetRow(name: "lone login p50 at \(highest.cores) cores / 2 cores", value: ratio, limit: 1.2, met: ratio <= 1.2, detail: detail))
    }
    return targets
}

/// The scaling targets this run's core counts could not judge, each with the reason; empty when
/// the scaling section did not run.
/// - Parameter rows: The scaling section's rows.
/// - Returns: The targets left out, in the order ``evaluateScalingTargets(_:)`` writes them.
package func unevaluatedScalingTargets(_ rows: [ScalingRow]) -> [UnevaluatedTarget] {
    guard let highest = rows.map(\.cores).max() else { return [] }
    let has = "this machine has \(highest)"
    var left: [UnevaluatedTarget] = []
    if highest < 16 {
        left.append(UnevaluatedTarget(name: "login and activation throughput, 16 cores / 2 ≥ 7", reason: "needs ≥ 16 cores; \(has)"))
    }
    if highest < 8 {
        left.append(UnevaluatedTarget(name: "efficiency at 8 cores ≥ 0.85", reason: "needs ≥ 8 cores; \(has)"))
        left.append(UnevaluatedTarget(name: "no flow-path lock held in more than 2% of acquisitions", reason: "needs ≥ 8 cores; \(has)"))
    } else if highest >= 16 {
        left.append(UnevaluatedTarget(name: "efficiency at 8 cores ≥ 0.85", reason: "judged on machines with 8 to 15 cores; the 16-core targets apply here"))
    }
    if highest < 16 {
        left.append(UnevaluatedTarget(name: "CredentialStore ns/call at 16 threads ≤ 1/10 of 1 thread", reason: "needs ≥ 16 cores; \(has)"))
        left.append(UnevaluatedTarget(name: "floor: nothing shared ≥ 12× faster at 16 threads", reason: "needs ≥ 16 cores; \(has)"))
    }
    if highest < 4 {
        left.append(UnevaluatedTarget(name: "lone login p50 at the highest core count ≤ 1.2× 2 cores", reason: "needs ≥ 4 cores; \(has)"))
    }
    return left
}

/// A lone login's p50 split into measured parts: the IDP's own work on the login's requests
/// (handled by the `IdpServer` directly, in the same run), the one wake-up of the caller's task
/// on the Swift pool (the hand-back), and the engine's share, which is the rest.
package struct LoneLoginSplit: Codable, Sendable, Equatable {
    /// The login's p50 at 1 in flight, in µs.
    package var p50Us: Double
    /// The IDP handling the login's requests directly (authorize, credentials, token), in µs.
    package var idpUs: Double
    /// The hand-back to the caller's task, p50, in µs.
    package var handBackUs: Double

    /// The rest of the p50: the engine, the MasterController and the transport, in µs.
    package var engineUs: Double
    /// The 1-in-flight login cell's logins, split at their phases; `nil` in older reports.
    package var parts: LoginPartsFigures?

    /// A split of measured parts.
    /// - Parameters:
    ///   - p50Us: The login's p50, in µs.
    ///   - idpUs: The IDP's own work, in µs.
    ///   - handBackUs: The hand-back, in µs.
    package init(p50Us: Double, idpUs: Double, handBackUs: Double) {
        self.p50Us = p50Us
        self.idpUs = idpUs
        self.handBackUs = handBackUs
        engineUs = p50Us - idpUs - handBackUs
    }

    /// The split of the closed-loop login cell at 1 in flight, when that cell measured both its
    /// IDP work and its hand-back.
    /// - Parameter flows: The run's flow rows.
    /// - Returns: The split, or `nil`.
    package init?(flows: [FlowRow]) {
        guard let lone = flows.first(where: { $0.scenario == "login" && $0.mode == "closed" && $0.inFlight == 1 }),
              let idp = lone.idpUs, let handBack = lone.handBackUs else { return nil }
        self.init(p50Us: lone.latencyUs.p50, idpUs: idp, handBackUs: handBack)
        parts = lone.loginParts
    }

    enum CodingKeys: String, CodingKey { case p50Us = "p50_us", idpUs = "idp_us", handBackUs = "hand_back_us", engineUs = "engine_us", parts }
}
