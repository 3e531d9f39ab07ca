import Foundation
@testable import IdpHarness
import IdpPrimitives
import Synchronization
import Testing
import TestSupport

/// The free run's watchdog: a run is stuck only when the OS shows nothing of the process running
/// while every flow waits; a slow thread that runs is waited for; the last-resort guard ends a run
/// undecided, never stuck. Each run happens in a child process of its own: in this one, the tests
/// beside it keep threads running.
@Suite("Free-running stress: the watchdog judges a stuck run by the OS, never by time", .serialized)
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

    /// Runs `scenario` free in a child process (this test binary again, one test selected), so
    /// that the OS's view of "the process" is the run's own threads, not those of the tests that
    /// run beside it; returns the child's result.
    static func inChild(_ scenario: String) async throws -> (violations: [String], undecided: String?) {
        let (status, output) = await NegativeControlTests.runChild(filter: "watchdogChild", environment: ["IDPHARNESS_WATCHDOG_CHILD": scenario])
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("WATCHDOG|") }, "status \(status): \(output.suffix(2_000))")
        let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        try #require(fields.count == 3, "\(line)")
        return (fields[1].isEmpty ? [] : fields[1].components(separatedBy: " // "), fields[2].isEmpty ? nil : fields[2])
    }

    @Test("(the child process of the watchdog tests)", .enabled(if: ProcessInfo.processInfo.environment["IDPHARNESS_WATCHDOG_CHILD"] != nil))
    func watchdogChild() async {
        let stop = Atomic<Bool>(false)
        let result: StressRunner.FreeRunResult
        switch ProcessInfo.processInfo.environment["IDPHARNESS_WATCHDOG_CHILD"] ?? "" {
        case "nobody":
            result = await StressRunner.runFree(Self.scenario(flows: 2) { _ in })
        case "slow":
            result = await StressRunner.runFree(Self.scenario(flows: 2, deliver: Self.afterSpinning(.milliseconds(200))))
        case "slow-planted":
            result = await PlantedBugSwitch.$inTask.withValue(PlantedBugSwitch(.harnessFreeRunTakesRunnableForBlocked)) {
                await StressRunner.runFree(Self.scenario(flows: 2, deliver: Self.afterSpinning(.milliseconds(200))))
            }
        default:
            result = await StressRunner.runFree(Self.scenario(flows: 2, guardLimit: .milliseconds(300)) { _ in
                Thread { while !stop.load(ordering: .relaxed) {} }.start()
            })
            stop.store(true, ordering: .relaxed)
        }
        print("WATCHDOG|\(result.violations.joined(separator: " // "))|\(result.undecided ?? "")")
    }

    @Test("flows waiting for deliveries nobody makes are a stuck run, told by the OS long before the guard")
    func nobodyDelivers() async throws {
        let result = try await Self.inChild("nobody")
        #expect(result.undecided == nil)
        #expect(result.violations.contains { $0.hasPrefix("no stuck flow: every unfinished flow waited") }, "\(result.violations)")
    }

    @Test("a thread that computes for a while before it delivers is waited for; planted, the watchdog takes it for blocked and calls the run stuck")
    func slowRunnableThreadWaitedFor() async throws {
        let result = try await Self.inChild("slow")
        #expect(result.violations.isEmpty && result.undecided == nil, "\(result.violations) \(result.undecided ?? "")")
        let planted = try await Self.inChild("slow-planted")
        #expect(planted.violations.contains { $0.hasPrefix("no stuck flow: every unfinished flow waited") }, "\(planted.violations)")
    }

    @Test("a thread that keeps running without ever delivering ends the run at the guard, undecided: no verdict on the flows")
    func guardEndsUndecided() async throws {
        let result = try await Self.inChild("spinning")
        #expect(result.undecided?.hasPrefix("the kit could not decide: nothing moved for") == true, "\(result.undecided ?? "nil")")
        #expect(result.violations.isEmpty, "\(result.violations)")
    }
}
