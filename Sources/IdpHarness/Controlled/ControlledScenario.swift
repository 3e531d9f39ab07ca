import Foundation
import IdpPrimitives

/// One schedule of the kit's controlled phase, as its reproducer names it: how many threads call
/// the provider, how often each, over how many instances of one user, whether the kit's clock
/// crosses an expiry horizon meanwhile, and how the scheduler chooses (a strategy, its seed, and
/// decisions to follow first).
///
/// Its reproducer is one line:
///
/// ```
/// controlled/1 threads=3 calls=2 instances=2 horizon=86400 strategy=pct:3:24 seed=8411 decisions=0.2.2.1
/// ```
///
/// A schedule whose threads run one-step and two-step flows side by side adds `clients=mixed`.
public struct ControlledScenario: Sendable, Equatable, CustomStringConvertible {
    /// Threads calling the provider, each one participant of the schedule.
    public var threads: Int
    /// Calls each thread makes, one flow each.
    public var calls: Int
    /// Instances of the user; thread t calls instance `t % instances`.
    public var instances: Int
    /// How far the kit's clock jumps, in seconds, at a point the schedule chooses (a participant
    /// of its own); 0: it never moves.
    public var horizonSeconds: Int64
    /// How the scheduler chooses once ``decisions`` are used up.
    public var strategy: ScheduleStrategy
    /// Which clients the threads' flows are of.
    public var clients: ControlledClients = .oneStep
    /// Seeds the strategy's choices.
    public var seed: UInt64
    /// The participant chosen at each decision, followed first (threads are 0 …, then the clock's
    /// participant; the jobs and timers that join during the schedule are numbered after them, in
    /// the order they join).
    public var decisions: [Int]

    /// The participants of the schedule: the threads, and the clock's crossing if it moves.
    var participants: Int { threads + (horizonSeconds > 0 ? 1 : 0) }

    /// The participant number of the clock's crossing, if the clock moves.
    var clockParticipant: Int? { horizonSeconds > 0 ? threads : nil }

    /// The one-line reproducer.
    public var description: String {
        let strategy = switch strategy {
        case .pct(let depth, let steps): "pct:\(depth):\(steps)"
        case .randomWalk: "walk"
        }
        return "controlled/1 threads=\(threads) calls=\(calls) instances=\(instances) horizon=\(horizonSeconds) strategy=\(strategy) seed=\(seed) "
            + (clients == .mixed ? "clients=mixed " : "")
            + "decisions=\(decisions.isEmpty ? "-" : decisions.map(String.init).joined(separator: "."))"
    }

    /// A scenario.
    public init(threads: Int, calls: Int, instances: Int, horizonSeconds: Int64, strategy: ScheduleStrategy, seed: UInt64,
                clients: ControlledClients = .oneStep, decisions: [Int] = []) {
        self.clients = clients
        self.threads = threads
        self.calls = calls
        self.instances = instances
        self.horizonSeconds = horizonSeconds
        self.strategy = strategy
        self.seed = seed
        self.decisions = decisions
    }

    /// Reads a reproducer as ``description`` prints it.
    /// - Throws: ``ControlledReproducerError`` naming what is wrong with it.
    public init(reproducer: String) throws(ControlledReproducerError) {
        let words = reproducer.split(whereSeparator: \.isWhitespace).map(String.init)
        guard words.first == "controlled/1" else { throw .malformed("it does not start with 'controlled/1': \(reproducer.prefix(40))") }
        var fields: [String: String] = [:]
        for word in words.dropFirst() {
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw .malformed("'\(word)' is not name=value") }
            fields[parts[0]] = parts[1]
        }
        func number<T: FixedWidthInteger>(_ name: String, _ type: T.Type, at least: T) throws(ControlledReproducerError) -> T {
            guard let text = fields[name] else { throw .malformed("it has no \(name)=") }
            guard let value = T(text), value >= least else { throw .malformed("\(name)=\(text) is not a whole number of at least \(least)") }
            return value
        }
        threads = try number("threads", Int.self, at: 1)
        calls = try number("calls", Int.self, at: 1)
        instances = try number("instances", Int.self, at: 1)
        horizonSeconds = try number("horizon", Int64.self, at: 0)
        seed = try number("seed", UInt64.self, at: 0)
        guard let strategyText = fields["strategy"] else { throw .malformed("it has no strategy=") }
        let strategyParts = strategyText.split(separator: ":").map(String.init)
        if strategyParts == ["walk"] {
            strategy = .randomWalk
        } else if strategyParts.count == 3, strategyParts[0] == "pct", let depth = Int(strategyParts[1]), let steps = Int(strategyParts[2]), depth >= 1, steps >= 1 {
            strategy = .pct(depth: depth, steps: steps)
        } else {
            throw .malformed("strategy=\(strategyText) is neither walk nor pct:DEPTH:STEPS")
        }
        switch fields["clients"] {
        case nil, "one": clients = .oneStep
        case "mixed": clients = .mixed
        case let other?: throw .malformed("clients=\(other) is neither one nor mixed")
        }
        guard let decisionText = fields["decisions"] else { throw .malformed("it has no decisions=") }
        if decisionText == "-" {
            decisions = []
        } else {
            var decisions: [Int] = []
            for part in decisionText.split(separator: ".", omittingEmptySubsequences: false) {
                guard let decision = Int(part), decision >= 0 else { throw .malformed("decisions=… has '\(part)', not a participant number") }
                decisions.append(decision)
            }
            self.decisions = decisions
        }
    }
}

/// Which clients the flows of a controlled schedule are of.
public enum ControlledClients: Sendable, Equatable {
    /// Every thread runs one-step flows of the `KssIdpLogin` client: username and password asked
    /// together.
    case oneStep
    /// Thread t runs two-step flows of another client when t / ``ControlledScenario/instances``
    /// (rounded down) is odd, one-step flows otherwise: the username asked first and the password
    /// in a second step of the same flow, as the race hammer's stepwise flows. Threads that share
    /// an instance (t mod `instances`) run both kinds, so a provider that takes a path, or its
    /// locks, by client or by step meets both at once.
    case mixed
}

/// A reproducer the kit cannot read.
public enum ControlledReproducerError: Error, Equatable, CustomStringConvertible {
    /// What is wrong with it.
    case malformed(String)

    /// "not a controlled-phase reproducer: …", with what is wrong.
    public var description: String {
        switch self {
        case .malformed(let reason): "not a controlled-phase reproducer: \(reason)"
        }
    }
}
