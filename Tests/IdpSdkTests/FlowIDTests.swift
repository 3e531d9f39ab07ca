import Foundation
@testable import IdpSdk
import IdpPrimitives
import Testing

@Suite("Flow ids")
struct FlowIDTests {
    @Test("ids taken on 8 OS threads at once, over many blocks each, are all distinct, and increase on each thread")
    func distinctAndOrderedPerThread() async {
        let perThread = 3 * Int(FlowIDBlocks.blockSize) + 17
        let taken = LockedValue<[[UInt64]]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = LockedValue(8)
            for _ in 0..<8 {
                Thread {
                    let ids = (0..<perThread).map { _ in IdpSdkFlowID.next().rawValue }
                    taken.withLock { $0.append(ids) }
                    if remaining.withLock({ $0 -= 1; return $0 }) == 0 { done.resume() }
                }.start()
            }
        }
        let all = taken.withLock { $0 }
        #expect(all.count == 8)
        #expect(Set(all.joined()).count == 8 * perThread)
        #expect(all.allSatisfy { ids in zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 } })
        #expect(all.joined().allSatisfy { $0 > 0 })
    }
}
