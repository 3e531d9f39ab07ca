import Foundation
@testable import IdpSdk
import IdpPrimitives
import Testing
import TestSupport

@Suite("Flow ids")
struct FlowIDTests {
    @Test("ids taken on 8 OS threads at once, over many blocks each, are all distinct, and increase on each thread")
    func distinctAndOrderedPerThread() async {
        let perThread = 3 * Int(FlowIDBlocks.blockSize) + 17
        let taken = LockedValue<[[UInt64]]>([])
        await onOSThreads(8) { _ in
            let ids = (0..<perThread).map { _ in IdpSdkFlowID.next().rawValue }
            taken.withLock { $0.append(ids) }
        }
        let all = taken.withLock { $0 }
        #expect(all.count == 8)
        #expect(Set(all.joined()).count == 8 * perThread)
        #expect(all.allSatisfy { ids in zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 } })
        #expect(all.joined().allSatisfy { $0 > 0 })
    }

    @Test("a flow is named flow-<number> in logs and reports")
    func name() {
        #expect(IdpSdkFlowID(rawValue: 3).description == "flow-3")
        let next = IdpSdkFlowID.next()
        #expect(next.description == "flow-\(next.rawValue)")
    }
}
