import Foundation
import IdpPrimitives
import Testing
import TestSupport

@Suite("LockedValue")
struct LockedValueTests {
    @Test("keeps every update from eight OS threads, and passes values and errors through")
    func concurrentUpdates() async throws {
        // Given one locked array and eight threads appending to it
        let values = LockedValue<[Int]>([])
        await onOSThreads(8) { thread in
            for i in 0..<5_000 { values.withLock { $0.append(thread * 5_000 + i) } }
        }

        // Then nothing was lost or duplicated
        let all = values.withLock { $0 }
        #expect(all.count == 40_000)
        #expect(Set(all).count == 40_000)
        // and the body's result and typed error come through
        struct Refused: Error, Equatable {}
        #expect(values.withLock { $0.count } == 40_000)
        #expect(throws: Refused()) { try values.withLock { (_) throws(Refused) in throw Refused() } }
        #expect(values.withLock { $0.count } == 40_000)
    }
}
