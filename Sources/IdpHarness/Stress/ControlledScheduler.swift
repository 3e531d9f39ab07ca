import Dispatch
import Foundation
import IdpPrimitives

/// Runs participants (real OS threads) one at a time between seams, choosing who goes next by a
/// ``ScheduleStrategy`` or by a recorded decision log, and records every decision so that a run
/// can be replayed.
///
/// A participant calls ``seam(_:_:)`` at each point where another participant may run instead, and
/// ``finish(_:)`` when done. The first decision waits until every participant has reached its first
/// seam, so the set to choose from is the same in every run. The running participant passes the
/// turn on at its next seam (baton passing: no scheduler thread sits in the middle).
///
/// A participant that does not reach a seam within `stallTimeout` (blocked in code the scheduler
/// does not control) is set aside and the run is marked ``Outcome/partiallyControlled``; another
/// participant gets the turn. When no participant is waiting and some have not finished for
/// `deadlockTimeout`, the run ends as ``Outcome/deadlocked``, with the decisions that led there.
///
/// Threading: ``seam(_:_:)`` blocks its OS thread; call it only from participant threads, never from
/// a Swift concurrency thread. ``outcome()`` suspends without blocking.
public final class ControlledScheduler: Sendable {
    /// What a run did.
    public struct Outcome: Sendable, Equatable {
        /// The participant chosen at each decision: the run's schedule.
        public var decisions: [Int]
        /// Whether a participant ran outside the scheduler's control for a while.
        public var partiallyControlled: Bool
        /// Whether every unfinished participant was blocked outside a seam.
        public var deadlocked: Bool
        /// Where a replayed decision named a participant that was not waiting (nondeterminism in
        /// the code under test), or `nil`.
        public var divergence: String?
        /// Each participant's last seam (or "finished").
        public var lastSeams: [String]
    }

    private enum Status: Sendable, Equatable {
        case notArrived
        case waiting(String)
        case running(String)
        case overdue(String)
        case finished

        var isWaiting: Bool { if case .waiting = self { true } else { false } }
        var seam: String {
            switch self {
            case .notArrived: "not started"
            case .waiting(let seam), .running(let seam): seam
            case .overdue(let seam): "\(seam) (blocked outside a seam)"
            case .finished: "finished"
            }
        }
    }

    private struct State {
        var statuses: [Status]
        var strategy: StrategyState
        let replay: [Int]
        var decisions: [Int] = []
        var running: Int?
        var started = false
        var lastProgress = ContinuousClock.now
        /// When a participant last reached a seam or finished.
        var lastTurn = ContinuousClock.now
        var partiallyControlled = false
        var deadlocked = false
        var divergence: String?
        var done = false
        var waiters: [CheckedContinuation<Outcome, Never>] = []

        var outcome: Outcome {
            Outcome(decisions: decisions, partiallyControlled: partiallyControlled, deadlocked: deadlocked,
                    divergence: divergence, lastSeams: statuses.map(\.seam))
        }

        mutating func takeWaiters() -> [CheckedContinuation<Outcome, Never>] {
            defer { waiters = [] }
            return waiters
        }

        /// Gives the turn to a waiting participant (replayed or by the strategy); `nil` if none waits.
        mutating func choose(previous: Int?) -> Int? {
            let enabled = statuses.indices.filter { statuses[$0].isWaiting }
            guard !enabled.isEmpty else {
                if statuses.allSatisfy({ $0 == .finished }) { done = true }
                return nil
            }
            var chosen: Int
            if decisions.count < replay.count {
                chosen = replay[decisions.count]
                if !enabled.contains(chosen) {
                    if divergence == nil {
                        divergence = "decision \(decisions.count + 1) of the replay names participant \(chosen), which was not waiting (waiting: \(enabled))"
                    }
                    chosen = strategy.pick(from: enabled, step: decisions.count + 1, previous: previous)
                }
            } else {
                chosen = strategy.pick(from: enabled, step: decisions.count + 1, previous: previous)
            }
            decisions.append(chosen)
            running = chosen
            statuses[chosen] = .running(statuses[chosen].seam)
            return chosen
        }
    }

    private let state: LockedValue<State>
    private let turns: [DispatchSemaphore]
    private let stallTimeout: Duration
    private let deadlockTimeout: Duration

    /// - Parameters:
    ///   - participants: How many participants will call ``seam(_:_:)``, numbered from 0.
    ///   - strategy: How to choose; `seed` makes the choice repeatable.
    ///   - replay: A recorded schedule to follow first; after it, the strategy decides.
    ///   - stallTimeout: How long the running participant may stay away from a seam before it is
    ///     set aside.
    ///   - deadlockTimeout: How long nobody may reach a seam or finish, with nobody waiting, before
    ///     the run is a deadlock (a participant set aside may only be slow).
    public init(participants: Int, strategy: ScheduleStrategy, seed: UInt64, replay: [Int] = [],
                stallTimeout: Duration = .milliseconds(250), deadlockTimeout: Duration = .seconds(5)) {
        precondition(participants > 0, "a controlled run needs at least one participant")
        state = LockedValue(State(statuses: Array(repeating: .notArrived, count: participants),
                                  strategy: StrategyState(strategy, participants: participants, seed: seed), replay: replay))
        turns = (0..<participants).map { _ in DispatchSemaphore(value: 0) }
        self.stallTimeout = stallTimeout
        self.deadlockTimeout = max(deadlockTimeout, stallTimeout)
        let watchdog = Thread { [self] in watch() }
        watchdog.name = "IdpHarness-scheduler-watchdog"
        watchdog.start()
    }

    /// Participant `participant` is at seam `name`: waits until it is chosen to go on.
    public func seam(_ participant: Int, _ name: String) {
        let next = state.withLock { state -> Int? in
            state.lastProgress = .now
            state.lastTurn = .now
            let wasRunning = state.running == participant
            state.statuses[participant] = .waiting(name)
            guard state.started else {
                guard state.statuses.allSatisfy({ $0 != .notArrived }) else { return nil }
                state.started = true
                return state.choose(previous: nil)
            }
            if wasRunning { state.running = nil }
            return state.running == nil ? state.choose(previous: wasRunning ? participant : nil) : nil
        }
        if let next { turns[next].signal() }
        turns[participant].wait()
        // Taking the lock once more orders everything the previous participant did before passing
        // the turn (it held this lock to pass it) before what this one does next, in a way
        // ThreadSanitizer sees: code between seams needs no locks of its own to be race-free here.
        state.withLock { _ in }
    }

    /// Participant `participant` is done; the turn passes on.
    public func finish(_ participant: Int) {
        let (next, ended) = state.withLock { state -> (Int?, [CheckedContinuation<Outcome, Never>]) in
            state.lastProgress = .now
            state.lastTurn = .now
            let wasRunning = state.running == participant
            state.statuses[participant] = .finished
            if !state.started, state.statuses.allSatisfy({ $0 != .notArrived }) { state.started = true }
            var next: Int?
            if wasRunning { state.running = nil }
            if state.started, state.running == nil { next = state.choose(previous: wasRunning ? participant : nil) }
            if state.statuses.allSatisfy({ $0 == .finished }) { state.done = true }
            return (next, state.done ? state.takeWaiters() : [])
        }
        if let next { turns[next].signal() }
        resume(ended)
    }

    /// The outcome, once every participant finished or the run deadlocked.
    public func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Outcome? in
                if state.done { return state.outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func resume(_ waiters: [CheckedContinuation<Outcome, Never>]) {
        guard !waiters.isEmpty else { return }
        let outcome = state.withLock { $0.outcome }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// Sets aside a participant that stays away from its seam, and calls a deadlock when nobody
    /// can go on.
    private func watch() {
        let period = max(stallTimeout / 5, .milliseconds(1))
        while true {
            Thread.sleep(forTimeInterval: period.timeInterval)
            let (next, ended, stop) = state.withLock { state -> (Int?, [CheckedContinuation<Outcome, Never>], Bool) in
                if state.done { return (nil, state.takeWaiters(), true) }
                guard ContinuousClock.now - state.lastProgress > stallTimeout else { return (nil, [], false) }
                state.lastProgress = .now
                if !state.started {
                    // A participant is blocked before its first seam: start with those that came.
                    state.started = true
                    state.partiallyControlled = true
                    for index in state.statuses.indices where state.statuses[index] == .notArrived { state.statuses[index] = .overdue("not started") }
                    return (state.choose(previous: nil), [], false)
                }
                if let running = state.running {
                    state.statuses[running] = .overdue(state.statuses[running].seam)
                    state.partiallyControlled = true
                    state.running = nil
                    return (state.choose(previous: running), [], false)
                }
                if let next = state.choose(previous: nil) { return (next, [], false) }
                guard !state.done else { return (nil, state.takeWaiters(), true) }
                guard ContinuousClock.now - state.lastTurn > deadlockTimeout else { return (nil, [], false) }
                state.deadlocked = true
                state.done = true
                return (nil, state.takeWaiters(), true)
            }
            if let next { turns[next].signal() }
            resume(ended)
            if stop { return }
        }
    }
}

