@testable import IdpHarness
import Testing

/// The kit's run, phase by phase, on the plain value without threads: what each phase hands on is
/// a string, so each test reads what came out.
@Suite("The conformance kit's run phases")
struct RunStateMachineTests {
    typealias Machine = RunStateMachine<String, String, String, String>

    static func machine(hammer: Bool = true, battery: Bool = true, providerWait: Duration? = nil) -> Machine {
        Machine(plan: .init(hammer: hammer, battery: battery, providerWait: providerWait))
    }

    @Test("a full run: the race hammer, the set-up, the engine's flows, the flows under timeouts, then the verdict")
    func fullRun() {
        // Given a run with the hammer, the battery and a provider that blocks for 20 ms
        var machine = Self.machine(providerWait: .milliseconds(20))

        // When every phase ends in turn
        let start = machine.start()
        let afterHammer = machine.hammerFinished("hammer")
        let afterSetUp = machine.setUpFinished("world")
        let afterFlows = machine.flowsFinished("flows", stuck: false)
        let afterBlocking = machine.blockingFlowsFinished("blocking")

        // Then each phase hands on what it found, and the last ending carries all of it
        #expect(start == .runHammer)
        #expect(afterHammer == .setUp)
        #expect(afterSetUp == .runFlows("world"))
        #expect(afterFlows == .runBlockingFlows("world", wait: .milliseconds(20)))
        #expect(afterBlocking == .finish(.battery(hammer: "hammer", world: "world", flows: "flows", blocking: "blocking")))
    }

    @Test("without a provider wait, or after a stuck flow, the run ends after the engine's flows",
          arguments: [(Duration?.none, false), (Duration.milliseconds(20), true)])
    func noBlockingFlows(providerWait: Duration?, stuck: Bool) {
        var machine = Self.machine(providerWait: providerWait)
        _ = machine.start()
        _ = machine.hammerFinished("hammer")
        _ = machine.setUpFinished("world")
        #expect(machine.flowsFinished("flows", stuck: stuck) == .finish(.battery(hammer: "hammer", world: "world", flows: "flows", blocking: nil)))
    }

    @Test("a run of the race hammer alone ends after the hammer")
    func hammerAlone() {
        var machine = Self.machine(battery: false)
        #expect(machine.start() == .runHammer)
        #expect(machine.hammerFinished("hammer") == .finish(.withoutFlows(hammer: "hammer", failure: nil)))
    }

    @Test("with no hammer rounds the run begins with the set-up, and a run of nothing ends at once")
    func noHammer() {
        var battery = Self.machine(hammer: false)
        #expect(battery.start() == .setUp)
        var nothing = Self.machine(hammer: false, battery: false)
        #expect(nothing.start() == .finish(.withoutFlows(hammer: nil, failure: nil)))
    }

    @Test("an IDP that cannot be set up ends the run with a failed check, keeping the hammer's findings")
    func setUpFailure() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.hammerFinished("hammer")
        let action = machine.setUpFailed("tenant exists")
        #expect(action == .finish(.withoutFlows(hammer: "hammer", failure: .init(name: "setting up the IDP", passed: false, detail: "tenant exists"))))
    }

    @Test("an event that does not belong to the phase ends the run with a failed check that names both, never a crash")
    func outOfOrder() {
        // Given a run whose engine flows are running
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.hammerFinished("hammer")
        _ = machine.setUpFinished("world")

        // When the hammer's end arrives again
        let action = machine.hammerFinished("again")

        // Then the run ends, with the first hammer's findings and a failed check
        guard case .finish(.withoutFlows(let hammer, let failure?)) = action else {
            Issue.record("expected the run to end with a failure, got \(action)")
            return
        }
        #expect(hammer == "hammer")
        #expect(!failure.passed)
        #expect(failure.detail == "the race hammer's end came while the engine's flows ran; the run stopped there")
        // and any later event ends it the same way
        guard case .finish(.withoutFlows(nil, let later?)) = machine.flowsFinished("flows", stuck: false) else {
            Issue.record("expected the ended run to refuse the flows' end")
            return
        }
        #expect(later.detail == "the flows' end came after the run had ended; the run stopped there")
    }
}
