import Foundation
import Synchronization

/// Runs `body(index)` on `count` new OS threads at once and returns when all have finished,
/// without blocking a Swift concurrency thread while it waits.
func onOSThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let remaining = Atomic<Int>(count)
        let finished = { @Sendable in
            if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { continuation.resume() }
        }
        for index in 0..<count {
            Thread {
                body(index)
                finished()
            }.start()
        }
    }
}

/// Runs `body` on a new OS thread and returns its result, without holding a Swift concurrency
/// thread meanwhile: a long CPU-bound test body run on the pool would keep every async test of
/// the suite waiting on a machine with few cores.
func onOSThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
