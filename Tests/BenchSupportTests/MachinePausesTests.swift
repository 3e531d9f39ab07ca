@testable import BenchSupport
import Foundation
import IdpPrimitives
import Testing

/// The machine-pause probe: what a spinning thread saw of its machine.
@Suite("MachinePauseProbe")
struct MachinePausesTests {
    /// Spins the calling thread until `nanoseconds` have passed on the monotonic clock.
    static func spin(nanoseconds: UInt64) {
        let start = DispatchTime.now().uptimeNanoseconds
        while DispatchTime.now().uptimeNanoseconds &- start < nanoseconds {}
    }

    @Test("a 400 µs spin between two reads of the clock is an on-core pause over the limit, unless the thread was switched out meanwhile",
          .enabled(if: CoreWatch.isAvailable))
    func plantedOnCorePauseShows() async throws {
        // A spin may be preempted on a busy machine: the probe then counts a switch instead. Up to
        // 50 probes, until one keeps its core through the spin.
        var seen: MachinePauses?
        for _ in 0..<50 {
            let pauses = try #require(await MachinePauseProbe.measure(threads: 1, seconds: 0.005) { Self.spin(nanoseconds: 400_000) })
            if pauses.longestOnCoreUs >= 400 { seen = pauses; break }
        }
        let pauses = try #require(seen, "no probe saw its planted 400 µs pause on core")
        #expect(pauses.onCoreOverLimit >= 1)
        #expect(pauses.threads == 1 && pauses.seconds == 0.005)
    }

    @Test("a sleep between two reads of the clock counts as a switch, not as an on-core pause", .enabled(if: CoreWatch.isAvailable))
    func plantedSleepIsASwitch() async throws {
        let pauses = try #require(await MachinePauseProbe.measure(threads: 1, seconds: 0.02) { usleep(5_000) })
        #expect(pauses.switchedOut >= 1)
        #expect(pauses.longestOnCoreUs < 5_000)
    }

    @Test("no threads, or no core watch, measures nothing")
    func nothingToMeasure() async {
        #expect(await MachinePauseProbe.measure(threads: 0, seconds: 0.01) == nil)
        if !CoreWatch.isAvailable { #expect(await MachinePauseProbe.measure(threads: 1, seconds: 0.01) == nil) }
    }

    @Test("the pauses are written, read, shown under the contention table, and set beside a missed max target")
    func shownAndJudged() throws {
        var report = HoldTimeTargetTests.report([OnCoreHoldTargetTests.lock("IdpServer.sessions", max: 1_529, onCore: 1_529, leftCore: 40)])
        report.preemption = PreemptionRecord(rows: report.contention, involuntarySwitches: 10_000, cpuMs: 4_000)
        report.machinePauses = MachinePauses(threads: 2, seconds: 1, longestOnCoreUs: 4_877, onCoreOverLimit: 6, switchedOut: 56)
        let json = report.json()
        for key in ["\"machine_pauses\"", "\"longest_on_core_us\" : 4877", "\"on_core_over_limit\" : 6", "\"switched_out\" : 56"] {
            #expect(json.contains(key), "missing \(key)")
        }
        #expect(try BenchReport.decode(from: Data(json.utf8)) == report)
        #expect(render(report, as: .text).contains("2 threads (one per core) each spun 1.0 s reading the clock: the machine paused them on their cores for up to 4,877 µs (6 pauses of 100 µs or more), and switched them out 56 times"))
        let target = try #require(evaluateTargets(report, latency: .zero).first { $0.name == OnCoreHoldTargetTests.name })
        #expect(!target.met)
        // 6 pauses in 2 thread-seconds, 10 ms of flow-path holds: 0.03 expected.
        #expect(target.detail.contains("alone, the machine paused a spinning thread on its core for up to 4,877 µs (6 pauses of 100 µs or more in 2 × 1.0 s: at that rate about 0.03 would fall inside the run's flow-path holds, which had 1 of 100 µs or more on core)"), "\(target.detail)")

        let old = sampleReport()
        #expect(!old.json().contains("machine_pauses"))
        #expect(try BenchReport.decode(from: Data(old.json().utf8)).machinePauses == nil)
    }
}
