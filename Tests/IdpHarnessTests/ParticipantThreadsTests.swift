import Foundation
@testable import IdpHarness
import IdpPrimitives
import Testing
import TestSupport

/// The controlled phase's participant threads: the pool's decisions as a value, then real threads.
@Suite("ParticipantThreads: every body gets a thread of its own at once, and threads are kept")
struct ParticipantThreadsTests {
    typealias State = ParticipantThreads.State

    static func job(_ name: String) -> ParticipantThreads.Job { .init(name: name, body: {}) }

    @Test("a body with no idle thread starts one; with idle threads it reserves one each, never two bodies for one thread")
    func reservations() throws {
        var state = State()
        let startsFirst = state.submit(Self.job("a"))
        #expect(startsFirst)
        #expect(state.threads == 1 && state.jobs.isEmpty)
        // The thread finishes its body and waits; two more bodies come.
        state.finished()
        let startsForB = state.submit(Self.job("b"))
        #expect(!startsForB, "the idle thread is reserved")
        let startsForC = state.submit(Self.job("c"))
        #expect(startsForC, "no idle thread is left: a second thread is started")
        #expect(state.threads == 2 && state.idle == 0 && state.wakeups == 1 && state.jobs.map(\.name) == ["b"])
        // The reserved thread wakes and takes its body; a wait that ran out takes nothing.
        let taken = state.woke()
        #expect(taken?.name == "b")
        let nothing = state.woke()
        #expect(nothing == nil)
        let reservedLeaves = state.leaves()
        #expect(!reservedLeaves, "no unreserved thread waits")
        state.finished()
        let idleLeaves = state.leaves()
        #expect(idleLeaves)
        #expect(state.threads == 1 && state.idle == 0 && state.wakeups == 0)
    }

    @Test("a thread that wakes before the reserved one takes the body, and the reserved one waits on: one body per thread")
    func earlyWaker() throws {
        var state = State()
        _ = state.submit(Self.job("a"))
        _ = state.submit(Self.job("b"))
        state.finished()
        state.finished()
        let startsForC = state.submit(Self.job("c"))
        #expect(!startsForC)
        // Either waiting thread may take it; after that, the other finds nothing and stays.
        let taken = state.woke()
        #expect(taken?.name == "c")
        let nothing = state.woke()
        #expect(nothing == nil)
        #expect(state.idle + state.wakeups == 1, "one thread waits")
        let idleLeaves = state.leaves()
        #expect(idleLeaves)
        #expect(state.threads == 1)
    }

    @Test("on real threads: bodies that wait for each other all run at once, and the next schedule's bodies reuse the threads")
    func threadsAreKept() async throws {
        let pool = ParticipantThreads(keepAlive: .seconds(600))
        for round in 0..<3 {
            // Three bodies that each wait until all three have started: they need three threads.
            let arrived = Counter()
            let finished = Counter()
            for index in 0..<3 {
                pool.run("round \(round) body \(index)") {
                    arrived.add()
                    let deadline = ContinuousClock.now + .seconds(120)
                    while arrived.value < 3, ContinuousClock.now < deadline { usleep(100) }
                    if arrived.value == 3 { finished.add() }
                }
            }
            #expect(await eventuallyOnOSThread { finished.value == 3 }, "round \(round): the three bodies ran together")
            #expect(await eventuallyOnOSThread { pool.statistics.waiting == 3 })
        }
        let statistics = pool.statistics
        #expect(statistics.threads == 3 && statistics.started == 3, "\(statistics)")
    }

    @Test("an idle thread holds nothing of the bodies it ran, its first (the one it started with) and a later one")
    func idleThreadsLetBodiesGo() async throws {
        let pool = ParticipantThreads(keepAlive: .seconds(600))
        let ran = Counter()
        for round in 0..<2 {
            let weak = Self.runWatched(on: pool, "round \(round)", ran: ran)
            // Ran, then idle again: a body given to an idle thread counts as waiting until taken.
            #expect(await eventuallyOnOSThread { ran.value == round + 1 && pool.statistics.waiting == 1 }, "round \(round): the thread ran the body and went idle")
            #expect(weak.value == nil, "round \(round): the idle thread still holds its body's capture")
        }
        #expect(pool.statistics.started == 1, "the second body reused the thread")
    }

    /// Runs a body that captures an object only the body holds; returns the object, weakly.
    static func runWatched(on pool: ParticipantThreads, _ name: String, ran: Counter) -> WeakBox {
        let watched = Watched()
        pool.run(name) {
            watched.touch()
            ran.add()
        }
        return WeakBox(watched)
    }

    @Test("an idle thread ends after the keep-alive")
    func idleThreadsEnd() async throws {
        let pool = ParticipantThreads(keepAlive: .milliseconds(10))
        let finished = Counter()
        pool.run("one") { finished.add() }
        #expect(await eventuallyOnOSThread { finished.value == 1 })
        #expect(await eventuallyOnOSThread { pool.statistics.threads == 0 })
    }
}

/// An object a body captures, watched weakly from the test.
final class Watched: Sendable {
    func touch() {}
}

/// Holds an object weakly. Sound as `@unchecked Sendable`: `value` is written once, in `init`, on
/// the test's thread, and the weak reference's own loads are atomic.
final class WeakBox: @unchecked Sendable {
    weak var value: AnyObject?
    init(_ value: AnyObject) { self.value = value }
}

/// A count the bodies above share.
final class Counter: Sendable {
    private let count = LockedValue(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
