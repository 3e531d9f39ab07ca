import Foundation
import IdpPrimitives

/// Everything that makes a run repeat: the flows, the faults, the strategy's seed and the
/// decisions. ``description`` is the one-line string a failing run prints; ``init(parsing:)`` reads
/// it back.
package struct StressReproducer: Sendable, Equatable, CustomStringConvertible {
    /// How the scheduler chooses.
    package var strategy: ScheduleStrategy
    /// The strategy's seed.
    package var seed: UInt64
    /// The scenario's flows the run starts (indices from 0); shrinking removes some.
    package var flows: [Int]
    /// Which faults fire where.
    package var faults: FaultPlan
    /// The participant chosen at each scheduler decision, replayed before the strategy takes over;
    /// empty for a fresh run.
    package var decisions: [Int]

    /// A reproducer.
    ///
    /// - Parameters:
    ///   - strategy: How the scheduler chooses.
    ///   - seed: The strategy's seed.
    ///   - flows: The scenario's flows to start (indices from 0).
    ///   - faults: Which faults fire where.
    ///   - decisions: The scheduler decisions to replay first; empty for a fresh run.
    package init(strategy: ScheduleStrategy, seed: UInt64, flows: [Int], faults: FaultPlan, decisions: [Int]) {
        self.strategy = strategy
        self.seed = seed
        self.flows = flows
        self.faults = faults
        self.decisions = decisions
    }

    /// flows, fault sites that may fire, and decisions: what shrinking makes smaller.
    package var size: (flows: Int, faultRates: Int, decisions: Int) { (flows.count, faults.rates.count, decisions.count) }

    /// One line, `idph1|strategy=…|seed=…|flows=…|faultseed=…|rates=…|off=…|log=…`: what a failing
    /// run prints and ``init(parsing:)`` reads.
    package var description: String {
        let strategy = switch self.strategy {
        case .pct(let depth, let steps): "pct:\(depth):\(steps)"
        case .randomWalk: "walk"
        }
        let rates = faults.rates.keys.sorted().map { "\($0)=\(faults.rates[$0]!)" }.joined(separator: ";")
        let off = faults.suppressed.sorted().map(\.description).joined(separator: ";")
        return "idph1|strategy=\(strategy)|seed=\(seed)|flows=\(flows.map(String.init).joined(separator: ","))|faultseed=\(faults.seed)|rates=\(rates)|off=\(off)|log=\(decisions.map(String.init).joined(separator: ","))"
    }

    /// Reads a string made by ``description``.
    /// - Throws: ``StressError`` naming the part that is malformed.
    package init(parsing text: String) throws(StressError) {
        var fields: [String: String] = [:]
        let parts = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.first == "idph1" else { throw StressError("a reproducer starts with 'idph1|'") }
        for part in parts.dropFirst() {
            guard let equals = part.firstIndex(of: "=") else { throw StressError("reproducer part '\(part)' has no '='") }
            fields[String(part[..<equals])] = String(part[part.index(after: equals)...])
        }
        func ints(_ name: String) throws(StressError) -> [Int] {
            guard let value = fields[name] else { throw StressError("the reproducer lacks '\(name)'") }
            if value.isEmpty { return [] }
            var result: [Int] = []
            for item in value.split(separator: ",") {
                guard let number = Int(item), number >= 0 else { throw StressError("'\(name)' has '\(item)', not a count") }
                result.append(number)
            }
            return result
        }
        switch fields["strategy"]?.split(separator: ":").map(String.init) {
        case ["walk"]?: strategy = .randomWalk
        case let pct? where pct.count == 3 && pct[0] == "pct":
            guard let depth = Int(pct[1]), let steps = Int(pct[2]), depth >= 1, steps >= 1 else { throw StressError("pct needs a depth and a step count of at least 1") }
            strategy = .pct(depth: depth, steps: steps)
        default: throw StressError("strategy must be 'walk' or 'pct:<depth>:<steps>'")
        }
        guard let seed = fields["seed"].flatMap(UInt64.init), let faultSeed = fields["faultseed"].flatMap(UInt64.init) else {
            throw StressError("seed and faultseed must be unsigned integers")
        }
        self.seed = seed
        flows = try ints("flows")
        decisions = try ints("log")
        var rates: [String: Double] = [:]
        for item in (fields["rates"] ?? "").split(separator: ";") {
            let pair = item.split(separator: "=")
            guard pair.count == 2, let rate = Double(pair[1]), (0...1).contains(rate) else { throw StressError("fault rate '\(item)' is not name=probability") }
            rates[String(pair[0])] = rate
        }
        var off: Set<FaultPlan.Site> = []
        for item in (fields["off"] ?? "").split(separator: ";") {
            let at = item.split(separator: "@")
            let position = at.count == 2 ? at[1].split(separator: ".") : []
            guard position.count == 2, let flow = Int(position[0]), let step = Int(position[1]) else { throw StressError("fault site '\(item)' is not fault@flow.step") }
            off.insert(.init(fault: String(at[0]), flow: flow, step: step))
        }
        faults = FaultPlan(seed: faultSeed, rates: rates, suppressed: off)
    }
}
