import IdpPrimitives

/// How the stress's controlled scheduler picks which waiting participant runs next.
public enum ScheduleStrategy: Sendable, Equatable, CustomStringConvertible {
    /// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): random distinct
    /// priorities, the highest-priority waiting participant runs, and at `depth − 1` random
    /// change points (among the first `steps` decisions) the running participant drops below all
    /// others. A bug of depth d among n participants and k steps is found with probability at
    /// least 1 / (n · k^(d−1)) per run.
    case pct(depth: Int, steps: Int)
    /// A uniformly random waiting participant at every decision.
    case randomWalk

    /// `pct(depth: d, steps: k)` or `randomWalk`.
    public var description: String {
        switch self {
        case .pct(let depth, let steps): "pct(depth: \(depth), steps: \(steps))"
        case .randomWalk: "randomWalk"
        }
    }
}

/// The strategy's per-run state: a pure value, seeded; ``pick(from:step:running:)`` is one decision.
struct StrategyState: Sendable {
    private var random: SeededRandom
    private let strategy: ScheduleStrategy
    /// Priority per logical thread (chain): a participant and the jobs it posted share one.
    private var priorities: [Double]
    /// The chain of each participant.
    private var chains: [Int]
    /// Each participant's rank within its chain, drawn when it joins: work handed to another
    /// thread runs beside the code that handed it over, so either may go first.
    private var ranks: [Double]
    private let changePoints: [Int: Int]
    /// The participants the run started with (the scenario's flows); the rest joined.
    private let initialParticipants: Int

    init(_ strategy: ScheduleStrategy, participants: Int, seed: UInt64) {
        self.strategy = strategy
        initialParticipants = participants
        random = SeededRandom(seed: seed)
        switch strategy {
        case .pct(let depth, let steps):
            let lowest = max(1, depth)
            // Distinct initial priorities depth … depth + n − 1, in a random order.
            var order = Array(0..<participants)
            order.shuffle(using: &random)
            var priorities = Array(repeating: 0.0, count: participants)
            for rank in 0..<order.count { priorities[order[rank]] = Double(lowest + rank) }
            self.priorities = priorities
            chains = Array(0..<participants)
            ranks = Array(repeating: 0.5, count: participants)
            // depth − 1 distinct change points in 1 … steps; at the i-th the running participant
            // gets priority i (below every initial one).
            var points: [Int: Int] = [:]
            let candidates = Array(1...max(1, steps)).shuffled(using: &random)
            for index in 0..<min(candidates.count, max(0, depth - 1)) { points[candidates[index]] = depth - 1 - index }
            changePoints = points
        case .randomWalk:
            priorities = []
            chains = []
            ranks = []
            changePoints = [:]
        }
    }

    /// A participant that joined during the run: work the code under test handed to another
    /// thread. Under PCT, work handed over by other work continues the logical thread that posted
    /// it (`parent`), so it takes that participant's priority, as a PCT thread keeps its priority
    /// across its steps, with a random rank within it: the poster may go on first or the job may.
    /// Work a scenario's flow starts (a `getAuthorizationCode` call's first request, an MC
    /// event's task) is a logical thread of its own, as a thread the flow forks: it gets a random
    /// priority among the initial ones, so that a change point can lower one of several flows a
    /// device runs at once (a storm's) below the others. Posted from outside the run, it gets a
    /// random priority too. Every draw comes from the seeded stream, so it repeats with the seed.
    mutating func addParticipant(parent: Int?) {
        guard case .pct(let depth, _) = strategy else { return }
        if let parent, parent < chains.count, parent >= initialParticipants {
            chains.append(chains[parent])
            ranks.append(Double(random.next() % 1_000_000) / 1_000_000)
            return
        }
        ranks.append(0.5)
        let lowest = Double(max(1, depth))
        chains.append(priorities.count)
        priorities.append(lowest + Double(random.next() % 1_000_000) / 1_000_000 * Double(max(1, priorities.count)))
    }

    /// Chooses among `enabled` (participant indices waiting at a seam) at decision `step` (from
    /// 1; `nil`: a decision where no change point falls); `previous` is the participant that ran
    /// up to this decision, if any.
    mutating func pick(from enabled: [Int], step: Int?, previous: Int?) -> Int {
        switch strategy {
        case .randomWalk:
            return enabled[Int(random.next() % UInt64(enabled.count))]
        case .pct:
            // A change point lowers the logical thread that ran up to it, jobs it posts later included.
            if let step, let lowered = changePoints[step], let previous { priorities[chains[previous]] = Double(lowered) }
            // Within one chain (a participant and its jobs), the higher rank goes first, then the
            // earliest posted.
            var best = enabled[0]
            var index = 1
            while index < enabled.count {
                let candidate = enabled[index]
                let (bestPriority, candidatePriority) = (priorities[chains[best]], priorities[chains[candidate]])
                if candidatePriority > bestPriority
                    || (candidatePriority == bestPriority && (ranks[candidate] > ranks[best] || (ranks[candidate] == ranks[best] && candidate < best))) {
                    best = candidate
                }
                index += 1
            }
            return best
        }
    }
}
