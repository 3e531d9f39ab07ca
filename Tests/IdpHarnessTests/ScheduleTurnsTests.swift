import Foundation
@testable import IdpHarness
import IdpPrimitives
import Testing
import TestSupport

/// The controlled phase's turns (one schedule at a time in a process) and the hammer's patient
/// waits.
@Suite("ScheduleTurns and PatientSpin: one schedule at a time, turns passed on from any thread")
struct ScheduleTurnsTests {
    @Test func oneHolderAtATimeAndEveryAskerServedWhenTurnsEndOnOtherThreads() async {
        let turns = ScheduleTurns()
        // Holders now, the most at once, and the turns ended: an independent record.
        let record = LockedValue((holders: 0, mostAtOnce: 0, served: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    await turns.begin()
                    record.withLock { record in
                        record.holders += 1
                        record.mostAtOnce = max(record.mostAtOnce, record.holders)
                    }
                    // The turn ends on an OS thread, as a schedule's last participant ends it.
                    let thread = Thread {
                        record.withLock { record in
                            record.holders -= 1
                            record.served += 1
                        }
                        turns.end()
                    }
                    thread.start()
                }
            }
        }
        #expect(await eventually { record.withLock { $0.served } == 40 })
        #expect(record.withLock { $0.mostAtOnce } == 1)
        // Free again: the next asker gets the turn at once.
        await turns.begin()
        turns.end()
    }

    @Test func aWaitThatOutlastsItsPatienceNaps() {
        var impatient = PatientSpin(patience: .zero, napMicroseconds: 1)
        for _ in 0..<256 { impatient.pause() }
        #expect(!impatient.isNapping, "the clock is read again on the 256th look")
        impatient.pause()
        #expect(impatient.isNapping)

        var patient = PatientSpin(patience: .seconds(3600))
        for _ in 0..<2_000 { patient.pause() }
        #expect(!patient.isNapping)
    }
}
