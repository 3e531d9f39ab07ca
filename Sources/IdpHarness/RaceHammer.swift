import Foundation
import IdpPrimitives
import IdpSdk
import Synchronization

/// The race hammer: fresh provider instances, kit-owned OS threads released together, direct
/// `provideCredentials` calls with nothing between the threads, answers checked afterwards.
///
/// In the engine's battery every call goes through the engine's pool queue and the kit's own
/// locks, which order most calls for ThreadSanitizer; a race on first use has few chances. Here
/// each of `rounds` rounds makes a fresh provider, starts `threads` threads that wait at a start
/// barrier (a spinning atomic ThreadSanitizer does not see), and lets each make its calls in
/// lockstep (call k of every thread before call k + 1 of any; again a relaxed atomic, invisible to
/// ThreadSanitizer), writing each answer into its own preallocated slot. Only after the last call does
/// a thread touch anything shared: the end barrier, a lock. Then the answers are graded.
struct RaceHammer {
    struct Settings: Sendable {
        var rounds: Int
        var threads: Int
        var callsPerThread: Int
        var hangTimeout: Duration
    }

    /// What a round asks: per thread, its calls and what each must be answered.
    struct Call: Sendable {
        let data: IdpSdkInteractionData
        let user: Int
        /// Whether this is the flow's last call (then `flowDidEnd` follows, for an observer).
        let endsFlow: Bool
    }

    let settings: Settings
    let users: [ProviderConformanceKit.User]

    /// The calls of thread `thread` in round `round`: flows of the round's shared user (every
    /// thread asks for it), of this thread's own user, and every fourth flow of a user without
    /// credentials; one-step and two-step clients alternate.
    func calls(round: Int, thread: Int) -> [Call] {
        let withCredentials = users.indices.filter { !users[$0].credentials.isEmpty }
        let without = users.indices.filter { users[$0].credentials.isEmpty }
        guard !withCredentials.isEmpty else { return [] }
        let shared = withCredentials[round % withCredentials.count]
        let own = withCredentials[(round + 1 + thread) % withCredentials.count]
        var calls: [Call] = []
        var flow = 0
        while calls.count < settings.callsPerThread {
            let user = flow % 4 == 3 && !without.isEmpty ? without[(round + thread) % without.count] : (flow % 2 == 0 ? shared : own)
            let id = IdpSdkFlowID(rawValue: 1 << 62 | UInt64(round & 0xFFFF) << 40 | UInt64(thread & 0xFFF) << 28 | UInt64(flow))
            let stepwise = (flow + thread) % 3 == 1
            let steps: [[String]] = stepwise ? [["username"], ["password"]] : [["username", "password"]]
            for (index, fields) in steps.enumerated() {
                let data = IdpSdkInteractionData(
                    inputFields: fields.map { IdpSdkInputField(id: $0, label: $0.capitalized, isSecret: $0 == "password") },
                    flowId: id, step: index + 1, attempt: 1, tenantId: users[user].tenantId,
                    clientId: stepwise ? ProviderConformanceKit.stepwiseClient : "KssIdpLogin",
                    userId: users[user].userId, traceParent: nil, previousError: nil)
                calls.append(Call(data: data, user: user, endsFlow: index == steps.count - 1))
            }
            flow += 1
        }
        return calls
    }

    /// Grades one answer.
    func grade(_ call: Call, _ answer: IdpSdkProvideCredentialsResult?) -> HammerOutcome {
        guard let answer else { return .noAnswer }
        let user = users[call.user]
        if user.credentials.isEmpty {
            return answer.error != nil ? .errorForUserWithout : .answeredUserWithout
        }
        guard let credentials = answer.credentials else { return .errorForUserWith }
        let asked = call.data.inputFieldIds
        if asked.allSatisfy({ credentials[$0] == user.credentials[$0] }) { return .ownValues }
        let other = users.contains { other in
            other.userId != user.userId && !other.credentials.isEmpty && asked.contains { credentials[$0] == other.credentials[$0] }
        }
        return other ? .anotherUsersValues : .wrongValues
    }
}

/// How one hammered call ended.
enum HammerOutcome: String, CheckOutcome {
    case ownValues = "answered its own user's values"
    case errorForUserWithout = "error for a user without credentials"
    case anotherUsersValues = "answered another user's values (cross-talk)"
    case wrongValues = "answered values of no user, or missed a field"
    case errorForUserWith = "error for a user with credentials"
    case answeredUserWithout = "answered for a user without credentials"
    case noAnswer = "no answer: the round did not end within the hang timeout"

    static let acceptable: Set<HammerOutcome> = [.ownValues, .errorForUserWithout]
    static let stale: Set<HammerOutcome> = [.noAnswer]
}

/// One round's shared state: the provider instances (one per user), the calls, and one answer
/// slot per call.
///
/// `@unchecked Sendable`, and sound for the kit's part: `providers` and `calls` are set before the
/// threads start (thread creation orders them) and only read after; each thread writes only the
/// slots `slots[thread]` of its own calls; the coordinator reads the slots only after the end
/// barrier (a `LockedValue` every thread takes after its last write), and abandons them unread if
/// the round hangs. The providers are shared across the threads unverified on purpose: whether
/// that is safe is what the kit tests.
final class HammerRound: @unchecked Sendable {
    let providers: [any IdpSdkInteractionInterface]
    let calls: [[RaceHammer.Call]]
    let slots: [UnsafeMutablePointer<IdpSdkProvideCredentialsResult?>]
    let ready = Atomic<Int>(0)
    let go = Atomic<Bool>(false)
    let called = Atomic<Int>(0)
    /// Set when the coordinator gives up on a hung round: the other threads stop waiting.
    let abandoned = Atomic<Bool>(false)
    /// The calls every thread makes in lockstep: as many as the thread with the fewest has.
    let lockstepCalls: Int
    let finished = LockedValue<Int>(0)
    let allFinished = DispatchSemaphore(value: 0)
    let ended: IdpSdkResult

    init(providers: [any IdpSdkInteractionInterface], calls: [[RaceHammer.Call]]) {
        self.providers = providers
        self.calls = calls
        slots = calls.map { calls in
            let slot = UnsafeMutablePointer<IdpSdkProvideCredentialsResult?>.allocate(capacity: max(1, calls.count))
            slot.initialize(repeating: nil, count: max(1, calls.count))
            return slot
        }
        ended = IdpSdkResult(authorizationCode: "race-hammer")
        lockstepCalls = calls.map(\.count).min() ?? 0
    }

    deinit {
        for (index, slot) in slots.enumerated() {
            slot.deinitialize(count: max(1, calls[index].count))
            slot.deallocate()
        }
    }

    /// One hammer thread's work, from the start barrier to the end barrier.
    func hammer(thread: Int) {
        let mine = calls[thread]
        let slot = slots[thread]
        let observers = providers.map { $0 as? any IdpSdkFlowObserving }
        ready.add(1, ordering: .relaxed)
        while !go.load(ordering: .relaxed), !abandoned.load(ordering: .relaxed) { sched_yield() }
        // From here to the end barrier: provider calls and this thread's own slots, nothing else.
        for index in mine.indices {
            let call = mine[index]
            slot[index] = providers[call.user].provideCredentials(call.data)
            if call.endsFlow, let observer = observers[call.user] { observer.flowDidEnd(call.data.flowId, result: ended) }
            // Lockstep: no thread starts call k + 1 before every thread has made call k. A relaxed
            // atomic, which orders nothing for ThreadSanitizer; it keeps a thread the scheduler
            // favours from running all its calls before the others start (on a loaded machine),
            // when whatever it synchronized with on the way (a runtime lock) could order its
            // accesses before theirs and hide the race.
            if index < lockstepCalls {
                called.add(1, ordering: .relaxed)
                while called.load(ordering: .relaxed) < (index + 1) * calls.count, !abandoned.load(ordering: .relaxed) { sched_yield() }
            }
        }
        let count = calls.count
        if finished.withLock({ $0 += 1; return $0 }) == count { allFinished.signal() }
    }

    /// Starts the threads, releases them together, and waits (on the calling OS thread) for the
    /// end barrier or `timeout`. Returns whether every thread finished.
    func run(timeout: Duration) -> Bool {
        for thread in calls.indices {
            let worker = Thread { [self] in hammer(thread: thread) }
            worker.stackSize = 1 << 20
            worker.start()
        }
        while ready.load(ordering: .relaxed) < calls.count { sched_yield() }
        go.store(true, ordering: .relaxed)
        guard allFinished.wait(timeout: .now(plus: timeout)) == .success else {
            abandoned.store(true, ordering: .relaxed)
            return false
        }
        return true
    }

    /// The answers, after ``run(timeout:)`` returned `true`.
    func answers(thread: Int) -> [IdpSdkProvideCredentialsResult?] {
        Array(UnsafeBufferPointer(start: slots[thread], count: calls[thread].count))
    }
}

extension RaceHammer {
    /// What the hammer found over all its rounds.
    struct Findings: Sendable {
        var outcomes: [HammerOutcome: Int] = [:]
        /// A few forbidden answers, described (never with values).
        var examples: [String] = []
        var roundsRun = 0
        var threads = 0
        /// Whether the rounds stopped early because ThreadSanitizer had reported.
        var stoppedAfterRace = false
        var staleRound: Int?
        var reports: ThreadSanitizerPhase
    }

    /// Runs a warm-up round, then `settings.rounds` rounds, each with fresh providers from
    /// `fresh(users)`. The calling task suspends; the rounds run on kit-owned OS threads.
    func run(fresh: Run.Bind, name: String) async -> Findings {
        let phase = ThreadSanitizerPhase.Recorder(name: "race hammer")
        var findings = Findings(reports: ThreadSanitizerPhase(name: phase.name, reports: [], lost: 0, rounds: 0, roundsWithReports: 0))
        var roundsWithReports = 0
        let threads = max(2, settings.threads)
        findings.threads = threads
        for round in -1..<max(1, settings.rounds) {
            let providers = await fresh(users).value
            let calls = (0..<threads).map { self.calls(round: round + 1, thread: $0) }
            let hammerRound = HammerRound(providers: providers, calls: calls)
            ThreadSanitizerReports.noteForCrash("the conformance kit's race hammer ran \(name), round \(round + 1) of \(settings.rounds) (0: warm-up)")
            KitProgress.hammerRound(round + 1, of: settings.rounds)
            let timeout = settings.hangTimeout
            let done = await OSThreads.run { hammerRound.run(timeout: timeout) }
            ThreadSanitizerReports.noteForCrash(nil)
            if phase.collect() > 0 { roundsWithReports += 1 }
            // A race found decides the verdict; more rounds would only risk the crash a racy
            // dictionary ends in.
            let decided = phase.hasFindings
            guard done else {
                findings.staleRound = round + 1
                findings.outcomes[.noAnswer, default: 0] += calls.reduce(0) { $0 + $1.count }
                break
            }
            if round >= 0 { findings.roundsRun += 1 }
            for thread in calls.indices {
                for (call, answer) in zip(calls[thread], hammerRound.answers(thread: thread)) {
                    let outcome = grade(call, answer)
                    findings.outcomes[outcome, default: 0] += 1
                    if outcome.grade != .acceptable, findings.examples.count < 5 {
                        findings.examples.append("round \(round + 1), thread \(thread), \(call.data.flowId) step \(call.data.step) for \(users[call.user].userId): \(outcome.rawValue)")
                    }
                }
            }
            if decided {
                findings.stoppedAfterRace = round + 1 < settings.rounds
                break
            }
        }
        findings.reports = phase.finish(rounds: findings.roundsRun + 1, roundsWithReports: roundsWithReports)
        return findings
    }

}

/// ThreadSanitizer's reports during one phase of the kit, counted before and after it.
struct ThreadSanitizerPhase: Sendable {
    let name: String
    let reports: [ThreadSanitizerReport]
    /// Reports the hook's ring no longer held when the phase ended.
    let lost: Int
    let rounds: Int
    let roundsWithReports: Int

    /// Reports that are races or other findings of the provider.
    var findings: [ThreadSanitizerReport] { reports.filter { !$0.isMutexHandOff } }
    /// Reports of accesses that `Mutex` ordered, which ThreadSanitizer could not see.
    var mutexHandOffs: [ThreadSanitizerReport] { reports.filter(\.isMutexHandOff) }

    /// Collects the reports from its creation on, round by round (so the hook's ring of the last
    /// 128 reports overflows only within one round).
    final class Recorder {
        let name: String
        private var next = ThreadSanitizerReports.count
        private var reports: [ThreadSanitizerReport] = []
        private var lost = 0

        init(name: String) { self.name = name }

        /// Reads the reports since the last call; returns how many there were.
        @discardableResult
        func collect() -> Int {
            let (found, missed) = ThreadSanitizerReports.reports(since: next)
            next += UInt64(found.count + missed)
            reports += found
            lost += missed
            return found.count + missed
        }

        /// Whether a report so far is a finding (not a `Mutex` hand-off), or was lost unread.
        var hasFindings: Bool { lost > 0 || reports.contains { !$0.isMutexHandOff } }

        func finish(rounds: Int, roundsWithReports: Int) -> ThreadSanitizerPhase {
            collect()
            return ThreadSanitizerPhase(name: name, reports: reports, lost: lost, rounds: rounds, roundsWithReports: roundsWithReports)
        }
    }
}
