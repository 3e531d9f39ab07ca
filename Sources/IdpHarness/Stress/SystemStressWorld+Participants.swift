import IdpPrimitives
import IdpWireFormats

extension SystemStress.World {
    /// A simulated app on its own device.
    struct Participant: Sendable {
        let index: Int
        let user: String
        let trace: TraceParent
        let steps: [SystemStress.Step]
    }

    /// Participant `index` plays user `index % users`.
    static func user(of index: Int, _ options: SystemStress.Options) -> String { "user-\(index % max(1, options.users))" }

    /// The participants of a run with seed `seed`: each one's script and trace come from the
    /// seed and its own index only, so each run plays another scenario, a replay plays the
    /// same, and dropping a participant (shrinking) leaves the others' the same.
    static func participants(_ options: SystemStress.Options, seed: UInt64) -> (participants: [Participant], problems: [String]) {
        let weighted = options.mix.keys.sorted().flatMap { Array(repeating: $0, count: max(0, options.mix[$0] ?? 0)) }
        var problems: [String] = []
        let participants = (0..<max(1, options.flows)).map { index in
            var own = SeededRandom(seed: seed ^ 0x5157_7e55 &+ UInt64(index) &* 0x9e37_79b9_7f4a_7c15)
            let steps = (0..<options.stepsPerFlow).map { _ in weighted.isEmpty ? SystemStress.Step.login : weighted[Int(own.next() % UInt64(weighted.count))] }
            func hex(_ value: UInt64) -> String {
                let digits = String(value, radix: 16)
                return String(repeating: "0", count: 16 - digits.count) + digits
            }
            // 32 and 16 hex digits, neither all zero (the index part is at least 1, the parent
            // id odd): a valid traceparent, so the fallback never serves.
            let trace: TraceParent
            do {
                trace = try TraceParent(traceId: hex(own.next()) + hex(UInt64(index) + 1), parentId: hex(own.next() | 1), sampled: true)
            } catch {
                problems.append("participant \(index)'s trace: \(error)")
                trace = TraceParent.random()
            }
            return Participant(index: index, user: user(of: index, options), trace: trace, steps: steps)
        }
        return (participants, problems)
    }

    /// Plays the life of participant `context.flow` (modulo their number): activates its
    /// device, then plays its steps in order, and checks that its logouts stayed.
    func play(_ context: StressContext) {
        let all = participants
        guard !all.isEmpty else { return }
        let me = all[context.flow % all.count]
        let device = SystemStress.Device(world: self, participant: me, context: context)
        // Faults may spoil an activation; the app tries again, as a user would.
        guard (0..<3).contains(where: { _ in device.activate(user: me.user, existing: nil) }) else { return }
        for (number, step) in me.steps.enumerated() {
            context.seam("step \(number + 1): \(step.rawValue)")
            log(me, "step \(number + 1): \(step.rawValue)")
            device.play(step, number: number + 1)
        }
        device.checkLogoutsStayed()
    }
}
