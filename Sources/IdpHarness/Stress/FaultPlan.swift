/// Which faults fire, decided from one seed: each decision is keyed by the fault's site, the flow
/// and the step, so it does not depend on the order the flows ran in, and adding one fault site
/// does not reshuffle the others (sub-streams, as in shuttle and Coyote).
///
/// ```swift
/// let plan = FaultPlan(seed: 42, rates: ["transport.duplicate": 0.05])
/// if context.fault("transport.duplicate", step: 3) { … }   // the same answer on every replay
/// ```
package struct FaultPlan: Sendable, Equatable, CustomStringConvertible {
    /// The seed every decision is derived from.
    package let seed: UInt64
    /// The probability of each fault at each of its sites.
    package let rates: [String: Double]
    /// Sites that never fire (what shrinking removes).
    package var suppressed: Set<Site>

    /// A plan.
    ///
    /// - Parameters:
    ///   - seed: The seed every decision is derived from.
    ///   - rates: The probability of each fault (by name) at each of its sites, from 0 to 1.
    ///   - suppressed: Sites that never fire; none by default.
    package init(seed: UInt64, rates: [String: Double], suppressed: Set<Site> = []) {
        self.seed = seed
        self.rates = rates
        self.suppressed = suppressed
    }

    /// No faults at all.
    package static let none = FaultPlan(seed: 0, rates: [:])

    /// Whether `site` fires: a pure function of the seed and the site.
    package func fires(_ site: Site) -> Bool {
        guard let rate = rates[site.fault], rate > 0, !suppressed.contains(site) else { return false }
        var hash = seed ^ 0x9e37_79b9_7f4a_7c15
        for byte in site.fault.utf8 { hash = Self.mix(hash ^ UInt64(byte)) }
        hash = Self.mix(hash ^ UInt64(truncatingIfNeeded: site.flow))
        hash = Self.mix(hash ^ UInt64(truncatingIfNeeded: site.step) &* 0x100_0000_01b3)
        return Double(hash >> 11) / Double(1 << 53) < rate
    }

    /// SplitMix64's finaliser.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// `faults(seed: …, name=rate,…, off: site,…)`, for reports.
    package var description: String {
        let rates = self.rates.keys.sorted().map { "\($0)=\(self.rates[$0]!)" }.joined(separator: ",")
        let off = suppressed.sorted().map(\.description).joined(separator: ",")
        return "faults(seed: \(seed), \(rates)\(off.isEmpty ? "" : ", off: \(off)"))"
    }
}
