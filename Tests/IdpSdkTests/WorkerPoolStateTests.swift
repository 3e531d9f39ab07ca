@testable import IdpSdk
import IdpPrimitives
import Testing

@Suite("The worker pool's decisions, as a value")
struct WorkerPoolStateTests {
    typealias State = WorkerPool.State
    static let limits = State.Limits(concurrency: 2, maximumThreads: 3)
    static func fresh() -> State { State(gate: SpinGate(cores: 2)) }
    static func isRun(_ look: State.Look) -> Bool { if case .run = look { true } else { false } }
    static func isSleep(_ look: State.Look) -> Bool { if case .sleep = look { true } else { false } }
    static func isExit(_ look: State.Look) -> Bool { if case .exit = look { true } else { false } }
    static func isYieldOnce(_ look: State.Look) -> Bool { if case .yieldOnce = look { true } else { false } }

    @Test("submits start threads up to the concurrency, then queue; an idle thread is woken instead of starting one")
    func submits() {
        var state = Self.fresh()
        #expect(state.submit({}, limits: Self.limits) == .start(number: 1))
        #expect(state.submit({}, limits: Self.limits) == .start(number: 2))
        #expect(state.submit({}, limits: Self.limits) == .queue)
        #expect(state.jobs.count == 3 && state.threads == 2)
        // Both threads take a job, one takes the third, then one runs out and sleeps
        #expect(Self.isRun(state.lookForWork(after: .first, mayStillSpin: false, now: 0)))
        #expect(Self.isRun(state.lookForWork(after: .first, mayStillSpin: false, now: 0)))
        #expect(Self.isRun(state.lookForWork(after: .first, mayStillSpin: false, now: 0)))
        #expect(Self.isSleep(state.lookForWork(after: .first, mayStillSpin: false, now: 0)))
        #expect(state.idle == 1)
        // The next submit wakes it rather than start a thread
        #expect(state.submit({}, limits: Self.limits) == .wake)
        #expect(state.idle == 0 && state.wakeups == 1 && state.signalled == 1)
        #expect(Self.isRun(state.lookForWork(after: .woken, mayStillSpin: false, now: 0)))
        #expect(state.wakeups == 0)
    }

    @Test("a thread in blocking code frees its slot: queued work gets another thread, up to the maximum")
    func blocking() {
        var state = Self.fresh()
        _ = state.submit({}, limits: Self.limits)
        _ = state.submit({}, limits: Self.limits)
        #expect(state.submit({}, limits: Self.limits) == .queue)
        #expect(state.enterBlocking(limits: Self.limits) == .start(number: 3))
        #expect(state.enterBlocking(limits: Self.limits) == .queue)   // at the maximum
        state.leaveBlocking()
        state.leaveBlocking()
        #expect(state.blocking == 0)
    }

    @Test("a thread whose wait timed out with nothing queued exits; one woken by a signal that another took sleeps again")
    func exits() {
        var state = Self.fresh()
        _ = state.submit({}, limits: Self.limits)
        #expect(Self.isRun(state.lookForWork(after: .first, mayStillSpin: false, now: 0)))
        #expect(Self.isSleep(state.lookForWork(after: .first, mayStillSpin: false, now: 0)))
        #expect(Self.isSleep(state.lookForWork(after: .woken, mayStillSpin: false, now: 0)))   // spurious
        #expect(Self.isExit(state.lookForWork(after: .timedOut, mayStillSpin: false, now: 0)))
        #expect(state.threads == 0 && state.idle == 0)
    }

    @Test("with the queue empty, one thread at a time may spin")
    func spins() {
        var state = Self.fresh()
        _ = state.submit({}, limits: Self.limits)
        _ = state.submit({}, limits: Self.limits)
        _ = state.lookForWork(after: .first, mayStillSpin: true, now: 0)
        _ = state.lookForWork(after: .first, mayStillSpin: true, now: 0)
        guard case .spin = state.lookForWork(after: .first, mayStillSpin: true, now: 0) else { Issue.record("the first idle thread spins"); return }
        #expect(Self.isSleep(state.lookForWork(after: .first, mayStillSpin: true, now: 0)))
        #expect(state.spinning == 1)
    }

    @Test("when the gate refuses a spin, a thread out of work yields its core once, counted as the spinner: a submit meanwhile leaves it the job without a wake-up")
    func yieldsOnceWhenTheGateRefuses() {
        // Given a pool whose gate read the process as busy 1 ms ago (its next reading is due in 20)
        let ms: UInt64 = 1_000_000
        var state = State(gate: SpinGate(cores: 2))
        _ = state.allowsSpin(SpinGate.Reading(wall: 0, cpu: 0))
        let allowed = state.allowsSpin(SpinGate.Reading(wall: 30 * ms, cpu: 60 * ms))
        #expect(!allowed)
        _ = state.submit({}, limits: Self.limits)
        #expect(Self.isRun(state.lookForWork(after: .first, mayStillSpin: true, now: 31 * ms)))

        // When the thread runs out of work, it yields once instead of spinning or sleeping
        #expect(Self.isYieldOnce(state.lookForWork(after: .first, mayStillSpin: true, now: 31 * ms)))
        #expect(state.spinning == 1)
        // and a job submitted while it yields is left to it
        let action = state.submit({}, limits: Self.limits)
        #expect(action == .queue)
        #expect(state.signalled == 0)

        // Then, looking again, it takes that job; out of work once more and without a spin left, it sleeps
        state.spinEnded(spent: 0)
        #expect(Self.isRun(state.lookForWork(after: .first, mayStillSpin: false, now: 31 * ms)))
        #expect(Self.isSleep(state.lookForWork(after: .first, mayStillSpin: false, now: 31 * ms)))
        #expect(state.idle == 1)
    }
}
