import CredentialProviders
import Foundation
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

@Suite("MultiStepProvider: sharded per-flow state")
struct ShardedFlowStateTests {
    @Test("flows on 8 OS threads at once each see their own steps and attempts; every state is released and the peak counts them all")
    func flowsOnManyThreads() async {
        let provider = MultiStepProvider { data, _ in .init(credentials: Dictionary(uniqueKeysWithValues: data.inputFieldIds.map { ($0, "x") })) }
        let probe = MultiStepProvider { _, state in .init(credentials: ["attempt": "\(state.attempt)", "step": "\(state.step)"]) }
        let threads = 8, flows = 200
        let wrong = await onOSThreads(threads) { thread -> Int in
            var wrong = 0
            for index in 0..<flows {
                let flow = UInt64(thread * flows + index + 1)
                _ = provider.provideCredentials(interaction(["username"], userId: "u", flow: flow))
                // The same fields again: attempt 2 of step 1; new fields: step 2.
                if probe.provideCredentials(interaction(["username"], userId: "u", flow: flow)).credentials != ["attempt": "1", "step": "1"] { wrong += 1 }
                if probe.provideCredentials(interaction(["username"], userId: "u", flow: flow)).credentials != ["attempt": "2", "step": "1"] { wrong += 1 }
                if probe.provideCredentials(interaction(["password"], userId: "u", flow: flow)).credentials != ["attempt": "1", "step": "2"] { wrong += 1 }
            }
            return wrong
        }
        #expect(wrong?.reduce(0, +) == 0)
        #expect(provider.trackedFlows.current == threads * flows)
        #expect(provider.trackedFlows.peak == threads * flows)
        await onOSThreads(threads) { thread in
            for index in 0..<flows {
                let flow = IdpSdkFlowID(rawValue: UInt64(thread * flows + index + 1))
                provider.flowDidEnd(flow, result: IdpSdkResult(authorizationCode: "c"))
                probe.flowDidEnd(flow, result: IdpSdkResult(authorizationCode: "c"))
            }
        }
        #expect(provider.trackedFlows.current == 0 && probe.trackedFlows.current == 0)
        #expect(provider.trackedFlows.peak == threads * flows)
    }
}

@Suite("RecordingProvider: per-thread logs merged when read")
struct RecordingLogTests {
    @Test("calls from 8 OS threads are each logged once, each thread's in its order")
    func everyCallOnce() async {
        let recording = RecordingProvider(StaticCredentials(["username": "alice"]))
        let threads = 8, calls = 500
        await onOSThreads(threads) { thread in
            for index in 0..<calls { _ = recording.provideCredentials(interaction(["username"], userId: "alice", flow: UInt64(thread * calls + index))) }
        }
        let logged = recording.calls.map(\.flowId.rawValue)
        #expect(logged.count == threads * calls)
        #expect(Set(logged).count == threads * calls)
        for thread in 0..<threads {
            let mine = logged.filter { $0 / UInt64(calls) == UInt64(thread) }
            #expect(mine == mine.sorted(), "thread \(thread)'s calls out of order")
        }
    }

    @Test("calls handed from thread to thread come back in the order they were made, and every flow end is kept")
    func handedOverInOrder() async {
        let recording = RecordingProvider(StaticCredentials(["username": "alice"]))
        let threads = 4, turns = 50
        let order = Turns()
        let timedOut = LockedValue(false)
        await onOSThreads(threads) { thread in
            for round in 0..<turns {
                guard order.wait(for: round * threads + thread) else {
                    timedOut.withLock { $0 = true }
                    return
                }
                let flow = IdpSdkFlowID(rawValue: UInt64(round * threads + thread))
                _ = recording.provideCredentials(interaction(["username"], userId: "alice", flow: flow.rawValue))
                recording.flowDidEnd(flow, result: IdpSdkResult(authorizationCode: "c"))
                order.pass()
            }
        }
        #expect(!timedOut.withLock { $0 })
        #expect(recording.calls.map(\.flowId.rawValue) == Array(0..<UInt64(threads * turns)))
        #expect(recording.endedFlows.count == threads * turns)
    }
}
