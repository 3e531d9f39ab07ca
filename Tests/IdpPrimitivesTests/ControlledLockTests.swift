import Foundation
import IdpPrimitives
import Testing
import TestSupport

@Suite("ControlledLock outside a controlled run: a plain lock with NSLock's shape")
struct ControlledLockTests {
    /// A counter only the lock guards.
    final class Counter: @unchecked Sendable {
        // Sound: `value` is read and written only while `lock` is held.
        let lock = ControlledLock(name: "counter")
        var value = 0
    }

    @Test("four OS threads adding under it lose no increment")
    func mutualExclusion() async throws {
        let counter = Counter()
        let finished = await onOSThreads(4) { _ -> Bool in
            for _ in 0..<20_000 { counter.lock.withLock { counter.value += 1 } }
            return true
        }
        #expect(finished == [true, true, true, true])
        #expect(counter.lock.withLock { counter.value } == 80_000)
    }

    @Test("try takes a free lock and refuses a held one, from another thread too")
    func tryLock() async throws {
        let lock = ControlledLock()
        #expect(lock.try())
        let fromAnother = await onOSThreads(1) { _ in lock.try() }
        #expect(fromAnother == [false])
        lock.unlock()
        let afterRelease = await onOSThreads(1) { _ -> Bool in
            defer { lock.unlock() }
            return lock.try()
        }
        #expect(afterRelease == [true])
    }

    @Test("it is an NSLocking: code written against NSLocking takes it in place of an NSLock")
    func nsLocking() {
        let lock: any NSLocking = ControlledLock(name: "as NSLocking")
        lock.lock()
        lock.unlock()
        #expect((lock as? ControlledLock)?.name == "as NSLocking")
    }
}
