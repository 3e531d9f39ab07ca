import Foundation
@testable import IdpHarness
import IdpPrimitives
import Synchronization
import Testing
import TestSupport

/// The free run's watchdog: a run is stuck only when the OS shows nothing of the process running
/// while every flow waits; a slow thread that runs is waited for; the last-resort guard ends a run
/// undecided, never stuck.
@Suite("Free-running stress: the watchdog judges a stuck run by the OS, never by time")
struct FreeRunWatchdogTests {
    /// What the flows of one run received (`nil`: a wait the watchdog ended).
    final class Deliveries: Sendable {
        let received = LockedValue<[Int?]>([])
    }

    /// Flows that each wait for one delivery, which `deliver` arranges (or never makes). The check
    /// reports a flow whose wait ended without it under the scenario's deadlock verdict.
    static func scenario(flows: Int, guardLimit: Duration = .seconds(60),
                         deliver: @escaping @Sendable (@escaping @Sendable (Int) -> Void) -> Void) -> StressScenario<Deliveries> {
        StressScenario(name: "deliveries", flows: flows, makeWorld: { Deliveries() }, flow: { world, context in
            let value: Int? = context.wait("delivery") { done in deliver(done) }
            world.received.withLock { $0.append(value) }
        }, check: { world in
            let missing = world.received.withLock { $0.filter { $0 == nil }.count }
            return missing == 0 ? [] : ["no stuck flow: \(missing) flows ended without their delivery"]
        }, guardLimit: guardLimit, deadlockVerdict: "no stuck flow")
    }

    /// Spins on its own thread for `cpu` of its own CPU time (however long that takes on a loaded
    /// machine), then delivers.
    static func afterSpinning(_ cpu: Duration) -> @Sendable (@escaping @Sendable (Int) -> Void) -> Void {
        { done in
            Thread {
                let start = threadCPUTime()
                while threadCPUTime() - start < cpu {}
                done(1)
            }.start()
        }
    }

    static func threadCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    @Test("flows waiting for deliveries nobody makes are a stuck run, told by the OS long before the guard")
    func nobodyDelivers() async {
        let result = await StressRunner.runFree(Self.scenario(flows: 2) { _ in })
        #expect(result.undecided == nil)
        #expect(result.violations.contains { $0.hasPrefix("no stuck flow: every unfinished flow waited") }, "\(result.violations)")
    }

    @Test("a thread that computes for a while before it delivers is waited for; planted, the watchdog takes it for blocked and calls the run stuck")
    func slowRunnableThreadWaitedFor() async {
        let result = await StressRunner.runFree(Self.scenario(flows: 2, deliver: Self.afterSpinning(.milliseconds(400))))
        #expect(result.violations.isEmpty && result.undecided == nil, "\(result.violations) \(result.undecided ?? "")")
        let planted = await StressRunner.runFree(Self.scenario(flows: 2, deliver: Self.afterSpinning(.milliseconds(400))),
                                                 watchdogPlant: .takesRunnableForBlocked)
        #expect(planted.violations.contains { $0.hasPrefix("no stuck flow: every unfinished flow waited") }, "\(planted.violations)")
    }

    @Test("a thread that keeps running without ever delivering ends the run at the guard, undecided: no verdict on the flows")
    func guardEndsUndecided() async {
        let stop = Atomic<Bool>(false)
        let result = await StressRunner.runFree(Self.scenario(flows: 2, guardLimit: .milliseconds(300)) { _ in
            Thread {
                while !stop.load(ordering: .relaxed) {}
            }.start()
        })
        stop.store(true, ordering: .relaxed)
        #expect(result.undecided?.hasPrefix("the kit could not decide: nothing moved for") == true, "\(result.undecided ?? "nil")")
        #expect(result.violations.isEmpty, "\(result.violations)")
    }
}
