/// The phases of one run of the conformance kit as a plain value: which phase comes next, and
/// what each phase hands on. One mutating method per event, each returning what the run does
/// next.
///
/// Generic only so that its tests can use plain values; the kit uses `Run.DirectCalls` (what the
/// race hammer and the several-instances rounds found), `Run.World`, `Run.Flows` and
/// `BlockingEvidence`.
///
/// `Run` holds it in a local variable of the one task that runs the kit and sends every event
/// from that task, one after another, so it needs no lock: `Run` performs each action (each
/// suspends that task while kit-owned OS threads do the work) and sends the event its end makes.
///
/// The rules it keeps:
/// - the direct-call phases (the race hammer, then the several-instances rounds, as one phase
///   here) run first, when they run at all; a run of the hammer alone ends after them;
/// - an IDP that cannot be set up ends the run with a failed check, before any flow;
/// - the flows under timeouts run only for a provider that blocks (a `providerWait`), and not
///   after a stuck flow stopped the engine's flows;
/// - an event that does not belong to the current phase ends the run with a failed check,
///   never a crash.
struct RunStateMachine<Hammer, World, Flows, Blocking> {
    /// What the run's configuration asks for.
    struct Plan: Equatable, Sendable {
        /// Whether the direct-call phases run (the race hammer, the several-instances rounds).
        var hammer: Bool
        /// Whether the engine's flows run after the hammer.
        var battery: Bool
        /// About how long one provider call waits, for a provider that blocks: the flows under
        /// timeouts run only with it.
        var providerWait: Duration?
    }

    /// Each state holds what the phases before it handed on.
    enum State {
        /// Nothing has run.
        case ready
        /// The direct-call phases run: the race hammer, then the several-instances rounds.
        case hammering
        /// The IDP, its users and the providers are being set up.
        case settingUp(hammer: Hammer?)
        /// The engine's flows run, and the run waits until the engine is done with each.
        case runningFlows(hammer: Hammer?, world: World)
        /// The flows under timeouts run.
        case runningBlockingFlows(hammer: Hammer?, world: World, flows: Flows)
        /// The run has ended; nothing more happens.
        case finished
    }

    /// What the run does next.
    enum Action {
        /// Run the direct-call phases (the race hammer, then the several-instances rounds), then
        /// send ``hammerFinished(_:)``.
        case runHammer
        /// Set up the IDP and the providers, then send ``setUpFinished(_:)`` or
        /// ``setUpFailed(_:)``.
        case setUp
        /// Run the engine's flows in this world, then send ``flowsFinished(_:stuck:)``.
        case runFlows(World)
        /// Run the flows under timeouts below and above `wait`, then send
        /// ``blockingFlowsFinished(_:)``.
        case runBlockingFlows(World, wait: Duration)
        /// Judge what the run saw and report it.
        case finish(Ending)
    }

    /// How the run ended, with what it collected.
    enum Ending {
        /// Without engine flows: a run of the race hammer alone, or one stopped before its flows
        /// (`failure` says why, as a failed check).
        case withoutFlows(hammer: Hammer?, failure: ConformanceReport.Check?)
        /// After the engine's flows, and the flows under timeouts if they ran.
        case battery(hammer: Hammer?, world: World, flows: Flows, blocking: Blocking?)
    }

    private let plan: Plan
    private(set) var state = State.ready

    init(plan: Plan) {
        self.plan = plan
    }

    /// The run begins.
    mutating func start() -> Action {
        guard case .ready = state else { return outOfOrder("start") }
        if plan.hammer {
            state = .hammering
            return .runHammer
        }
        return afterHammer(nil)
    }

    /// The direct-call phases have run.
    mutating func hammerFinished(_ hammer: Hammer) -> Action {
        guard case .hammering = state else { return outOfOrder("the race hammer's end") }
        return afterHammer(hammer)
    }

    /// The IDP, its users and the providers are ready.
    mutating func setUpFinished(_ world: World) -> Action {
        guard case .settingUp(let hammer) = state else { return outOfOrder("the set-up's end") }
        state = .runningFlows(hammer: hammer, world: world)
        return .runFlows(world)
    }

    /// The IDP could not be set up: `reason` says why.
    mutating func setUpFailed(_ reason: String) -> Action {
        guard case .settingUp(let hammer) = state else { return outOfOrder("a failed set-up") }
        state = .finished
        return .finish(.withoutFlows(hammer: hammer, failure: .init(name: ConformanceReport.CheckName.settingUpTheIDP.rawValue, passed: false, detail: reason)))
    }

    /// The engine's flows have run and the engine is done with each; `stuck`: the watchdog
    /// found a flow stuck and the flows stopped early.
    mutating func flowsFinished(_ flows: Flows, stuck: Bool) -> Action {
        guard case .runningFlows(let hammer, let world) = state else { return outOfOrder("the flows' end") }
        if let wait = plan.providerWait, !stuck {
            state = .runningBlockingFlows(hammer: hammer, world: world, flows: flows)
            return .runBlockingFlows(world, wait: wait)
        }
        state = .finished
        return .finish(.battery(hammer: hammer, world: world, flows: flows, blocking: nil))
    }

    /// The flows under timeouts have run.
    mutating func blockingFlowsFinished(_ blocking: Blocking) -> Action {
        guard case .runningBlockingFlows(let hammer, let world, let flows) = state else { return outOfOrder("the timeout flows' end") }
        state = .finished
        return .finish(.battery(hammer: hammer, world: world, flows: flows, blocking: blocking))
    }

    private mutating func afterHammer(_ hammer: Hammer?) -> Action {
        guard plan.battery else {
            state = .finished
            return .finish(.withoutFlows(hammer: hammer, failure: nil))
        }
        state = .settingUp(hammer: hammer)
        return .setUp
    }

    /// Ends the run, keeping the hammer's findings if there are any, with a check that names the
    /// event and the phase it did not belong to.
    private mutating func outOfOrder(_ event: String) -> Action {
        let hammer: Hammer? = switch state {
        case .settingUp(let hammer), .runningFlows(let hammer, _), .runningBlockingFlows(let hammer, _, _): hammer
        case .ready, .hammering, .finished: nil
        }
        let phase = switch state {
        case .ready: "before the run began"
        case .hammering: "while the race hammer ran"
        case .settingUp: "while the IDP was set up"
        case .runningFlows: "while the engine's flows ran"
        case .runningBlockingFlows: "while the flows under timeouts ran"
        case .finished: "after the run had ended"
        }
        state = .finished
        return .finish(.withoutFlows(hammer: hammer, failure: .init(name: ConformanceReport.CheckName.kitRun.rawValue, passed: false,
                                                                    detail: "\(event) came \(phase); the run stopped there")))
    }
}

extension RunStateMachine: Sendable where Hammer: Sendable, World: Sendable, Flows: Sendable {}
extension RunStateMachine.State: Sendable where Hammer: Sendable, World: Sendable, Flows: Sendable {}
extension RunStateMachine.Action: Sendable where Hammer: Sendable, World: Sendable, Flows: Sendable, Blocking: Sendable {}
extension RunStateMachine.Ending: Sendable where Hammer: Sendable, World: Sendable, Flows: Sendable, Blocking: Sendable {}
extension RunStateMachine.Action: Equatable where Hammer: Equatable, World: Equatable, Flows: Equatable, Blocking: Equatable {}
extension RunStateMachine.Ending: Equatable where Hammer: Equatable, World: Equatable, Flows: Equatable, Blocking: Equatable {}
