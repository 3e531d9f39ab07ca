import Foundation
import IdpPrimitives
import Testing

@Suite("Timers on an IdpClock")
struct ClockTimerTests {
    @Test("on a manual clock the action runs once, on the move that reaches the deadline; a cancelled one never runs")
    func manualClock() {
        let clock = ManualClock()
        let runs = LockedValue(0)
        clock.runAfter(.seconds(30)) { runs.withLock { $0 += 1 } }
        let cancelled = clock.runAfter(.seconds(30)) { runs.withLock { $0 += 100 } }
        cancelled.cancel()
        clock.advance(by: .seconds(29))
        #expect(runs.withLock { $0 } == 0)
        clock.advance(by: .seconds(1))
        #expect(runs.withLock { $0 } == 1)
        clock.advance(by: .seconds(60))
        #expect(runs.withLock { $0 } == 1)
        #expect(cancelled.isDone)
        // A delay already reached runs at once.
        clock.runAfter(.zero) { runs.withLock { $0 += 10 } }
        #expect(runs.withLock { $0 } == 11)
    }

    @Test("a duration in whole nanoseconds, and in seconds; a manual clock starts at its default start")
    func durationConversions() {
        #expect(Duration.seconds(2).nanoseconds == 2_000_000_000)
        #expect(Duration.milliseconds(1500).nanoseconds == 1_500_000_000)
        #expect(Duration.nanoseconds(7).nanoseconds == 7)
        #expect(Duration.seconds(-1).nanoseconds == -1_000_000_000)
        #expect(Duration.milliseconds(250).timeInterval == 0.25)
        #expect(ManualClock().now() == ManualClock.defaultStart)
        #expect(ManualClock.defaultStart == Date(timeIntervalSince1970: 1_767_225_600))
    }

    @Test("on the system clock and on any other clock the action runs once")
    func otherClocks() async {
        struct Offset: IdpClock {
            func now() -> Date { Date().addingTimeInterval(5) }
        }
        let runs = LockedValue(0)
        SystemClock().runAfter(.milliseconds(1)) { runs.withLock { $0 += 1 } }
        Offset().runAfter(.milliseconds(1)) { runs.withLock { $0 += 1 } }
        let deadline = ContinuousClock.now + .seconds(600)
        while runs.withLock({ $0 }) < 2, ContinuousClock.now < deadline { await Task.yield() }
        #expect(runs.withLock { $0 } == 2)
    }
}
