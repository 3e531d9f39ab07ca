import Foundation
#if canImport(Glibc)
import Glibc
#endif
import IdpPrimitives
import Testing
import TestSupport

@Suite("Processors: the CPUs this process may run on")
struct ProcessorsTests {
    @Test("the count is at least 1 and at most the machine's active processors")
    func bounded() {
        #expect(Processors.available >= 1)
        #expect(Processors.available <= ProcessInfo.processInfo.activeProcessorCount)
        #expect(Processors.allowedNow() >= 1)
    }

    #if os(Linux)
    private typealias SetAffinity = @convention(c) (pid_t, Int, UnsafePointer<cpu_set_t>) -> Int32

    @Test("a thread pinned to one CPU counts one, however many the machine has")
    func followsTheAffinityMask() async throws {
        let symbol = try #require(dlsym(nil, "sched_setaffinity"))
        let setAffinity = unsafeBitCast(symbol, to: SetAffinity.self)
        // On a thread of its own, so the mask leaves with it.
        let (status, counted) = await OSThreads.run { () -> (Int32, Int) in
            var mask = cpu_set_t()
            withUnsafeMutableBytes(of: &mask) { $0[0] = 1 }
            let status = setAffinity(0, MemoryLayout<cpu_set_t>.size, &mask)
            return (status, Processors.allowedNow())
        }
        #expect(status == 0)
        #expect(counted == 1)
    }
    #endif
}
