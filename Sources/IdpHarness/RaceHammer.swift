import Foundation
import IdpPrimitives
import IdpSdk
import Synchronization

/// The race hammer: fresh provider instances, kit-owned OS threads released together, direct
/// `provideCredentials` calls with nothing between the threads, answers checked afterwards.
///
/// In the engine's battery every call goes through the engine's pool queue and the kit's own
/// locks, which order most calls for ThreadSanitizer; a race on first use has few chances. Here
/// each of `rounds` rounds makes fresh providers (`instances` of each user), starts `threads`
/// threads that wait at a start barrier (a spinning atomic ThreadSanitizer does not see), and lets
/// each make its calls in lockstep (call k of every thread before call k + 1 of any; again a
/// relaxed atomic, invisible to ThreadSanitizer), writing each answer into its own preallocated
/// slot. Thread t calls instance `t % instances` of every user it asks for, so the threads of a
/// round reach one user through different instances. Only after the last call does a thread touch
/// anything shared: the end barrier, a lock. Then the answers are graded.
///
/// With the kit's clock, each round has an expiry crossing halfway through its lockstep calls:
/// the last thread to finish the call before it moves the clock forward by `expiryHorizon`, and
/// every thread makes its next call once the clock has moved, all together. Whether the provider
/// read the clock after the crossing decides where the answers after it are graded: by the expiry
/// check when it did, as this phase's answers when it did not (then nothing expired for it).
///
/// The same rounds serve two phases (``Plan``): the race hammer, whose threads mix users, and
/// the several-instances check, whose threads all ask for one user.
struct RaceHammer {
    struct Settings: Sendable {
        var rounds: Int
        var threads: Int
        var callsPerThread: Int
        var hangTimeout: Duration
        /// Instances of each user per round; thread t calls instance `t % instances`.
        var instances = 1
        /// How far the clock moves at each round's crossing (`.zero`: no crossing).
        var expiryHorizon: Duration = .zero
    }

    /// Whose calls a round makes.
    enum Plan: Sendable {
        /// The race hammer: the round's shared user from every thread, the thread's own user, and
        /// every fourth flow a user without credentials.
        case mixedUsers
        /// The several-instances check: every thread asks for the round's one user.
        case oneUser
    }

    /// What a round asks: per thread, its calls and what each must be answered.
    struct Call: Sendable {
        let data: IdpSdkInteractionData
        let user: Int
        /// Which of the user's instances answers it.
        let instance: Int
        /// Whether this is the flow's last call (then `flowDidEnd` follows, for an observer).
        let endsFlow: Bool
    }

    let settings: Settings
    let users: [ProviderConformanceKit.User]
    var plan = Plan.mixedUsers
    /// The phase's name in the report, in ThreadSanitizer's phases and in the crash note.
    var phase = "race hammer"
    /// The kit's clock, moved at each round's crossing; `nil`: no crossings.
    var clock: ConformanceClock?

    /// The calls of thread `thread` in round `round`. The race hammer: flows of the round's
    /// shared user (every thread asks for it), of this thread's own user, and every fourth flow
    /// of a user without credentials. The several-instances check: flows of the round's user
    /// only. One-step and two-step clients alternate.
    func calls(round: Int, thread: Int) -> [Call] {
        let withCredentials = users.indices.filter { !users[$0].credentials.isEmpty }
        let without = users.indices.filter { users[$0].credentials.isEmpty }
        guard !withCredentials.isEmpty else { return [] }
        let shared = withCredentials[round % withCredentials.count]
        let own = withCredentials[(round + 1 + thread) % withCredentials.count]
        let instance = thread % max(1, settings.instances)
        func fields(_ ids: [String]) -> [IdpSdkInputField] {
            ids.map { IdpSdkInputField(id: $0, label: $0.capitalized, isSecret: $0 == "password") }
        }
        let together = [fields(["username", "password"])], stepwiseFields = [fields(["username"]), fields(["password"])]
        var calls: [Call] = []
        var flow = 0
        while calls.count < settings.callsPerThread {
            let user = switch plan {
            case .oneUser: shared
            case .mixedUsers: flow % 4 == 3 && !without.isEmpty ? without[(round + thread) % without.count] : (flow % 2 == 0 ? shared : own)
            }
            let id = IdpSdkFlowID.next()
            let stepwise = (flow + thread) % 3 == 1
            let steps = stepwise ? stepwiseFields : together
            for index in 0..<steps.count {
                let data = IdpSdkInteractionData(
                    inputFields: steps[index],
                    flowId: id, step: index + 1, attempt: 1, tenantId: users[user].tenantId,
                    clientId: stepwise ? ProviderConformanceKit.stepwiseClient : "KssIdpLogin",
                    userId: users[user].userId, traceParent: nil, previousError: nil)
                calls.append(Call(data: data, user: user, instance: instance, endsFlow: index == steps.count - 1))
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

/// One round's shared state: the provider instances (`providers[instance][user]`), the calls,
/// one answer slot per call, and the round's expiry crossing.
///
/// `@unchecked Sendable`, and sound for the kit's part: `providers` and `calls` are set before the
/// threads start (thread creation orders them) and only read after; each thread writes only the
/// slots `slots[thread]` of its own calls; the coordinator reads the slots only after the end
/// barrier (a `LockedValue` every thread takes after its last write), and abandons them unread if
/// the round hangs. The providers are shared across the threads unverified on purpose: whether
/// that is safe is what the kit tests.
final class HammerRound: @unchecked Sendable {
    /// Where the round's clock moves: before lockstep call `beforeCall` of every thread.
    struct Crossing: Sendable {
        let clock: ConformanceClock
        let horizon: Duration
        /// The lockstep call every thread makes just after the crossing (at least 1).
        let beforeCall: Int
        /// The clock's elapsed nanoseconds once it has crossed.
        let target: Int64
    }

    let providers: [[any IdpSdkInteractionInterface]]
    let calls: [[RaceHammer.Call]]
    let slots: [UnsafeMutablePointer<IdpSdkProvideCredentialsResult?>]
    let crossing: Crossing?
    let ready = Atomic<Int>(0)
    /// Signalled once per thread when every thread has started.
    let start = DispatchSemaphore(value: 0)
    let awake = Atomic<Int>(0)
    let called = Atomic<Int>(0)
    /// Set when the coordinator gives up on a hung round: the other threads stop waiting.
    let abandoned = Atomic<Bool>(false)
    /// Set by the thread that moved the clock, with the clock's reads just before it moved.
    private let crossed = Atomic<Bool>(false)
    private let readsAtCrossing = Atomic<Int>(0)
    /// The calls every thread makes in lockstep: as many as the thread with the fewest has.
    let lockstepCalls: Int
    let finished = LockedValue<Int>(0)
    let allFinished = DispatchSemaphore(value: 0)
    let ended: IdpSdkResult

    init(providers: [[any IdpSdkInteractionInterface]], calls: [[RaceHammer.Call]], crossing: Crossing?) {
        self.providers = providers
        self.calls = calls
        slots = calls.map { calls in
            let slot = UnsafeMutablePointer<IdpSdkProvideCredentialsResult?>.allocate(capacity: max(1, calls.count))
            slot.initialize(repeating: nil, count: max(1, calls.count))
            return slot
        }
        ended = IdpSdkResult(authorizationCode: "race-hammer")
        let lockstep = calls.map(\.count).min() ?? 0
        lockstepCalls = lockstep
        self.crossing = crossing.flatMap { (1..<max(1, lockstep)).contains($0.beforeCall) ? $0 : nil }
    }

    deinit {
        for (index, slot) in slots.enumerated() {
            slot.deinitialize(count: max(1, calls[index].count))
            slot.deallocate()
        }
    }

    /// Whether the clock crossed, and the provider read it after the crossing: its expiry was
    /// exercised, and the answers after the crossing are the expiry check's.
    var crossingWasRead: Bool {
        guard let crossing, crossed.load(ordering: .relaxed) else { return false }
        return crossing.clock.reads > readsAtCrossing.load(ordering: .relaxed)
    }

    /// Whether the clock crossed in this round.
    var didCross: Bool { crossed.load(ordering: .relaxed) }

    /// One hammer thread's work, from the start barrier to the end barrier.
    func hammer(thread: Int) {
        let mine = calls[thread]
        let slot = slots[thread]
        let observers = providers.map { $0.map { $0 as? any IdpSdkFlowObserving } }
        // Threads start one by one: each sleeps until all have started, then they spin only
        // until all are awake, and go together.
        ready.add(1, ordering: .relaxed)
        start.wait()
        awake.add(1, ordering: .relaxed)
        var waitForAll = PatientSpin()
        while awake.load(ordering: .relaxed) < calls.count, !abandoned.load(ordering: .relaxed) { waitForAll.pause() }
        // From here to the end barrier: provider calls and this thread's own slots, nothing else
        // (the crossing's clock is two relaxed atomics).
        for index in mine.indices {
            if let crossing, index == crossing.beforeCall {
                // Every thread's first call after the crossing waits until the clock has moved, on
                // the clock's own atomic, so its reads from here on see the new time.
                var wait = PatientSpin()
                while crossing.clock.elapsedNanoseconds < crossing.target, !abandoned.load(ordering: .relaxed) { wait.pause() }
            }
            let call = mine[index]
            slot[index] = providers[call.instance][call.user].provideCredentials(call.data)
            if call.endsFlow, let observer = observers[call.instance][call.user] { observer.flowDidEnd(call.data.flowId, result: ended) }
            // Lockstep: no thread starts call k + 1 before every thread has made call k. A relaxed
            // atomic, which orders nothing for ThreadSanitizer; it keeps a thread the scheduler
            // favours from running all its calls before the others start (on a loaded machine),
            // when whatever it synchronized with on the way (a runtime lock) could order its
            // accesses before theirs and hide the race.
            if index < lockstepCalls {
                let arrived = called.add(1, ordering: .relaxed).newValue
                if let crossing, index + 1 == crossing.beforeCall, arrived == (index + 1) * calls.count {
                    // The last thread to make the call before the crossing moves the clock.
                    readsAtCrossing.store(crossing.clock.reads, ordering: .relaxed)
                    crossing.clock.advance(by: crossing.horizon)
                    crossed.store(true, ordering: .relaxed)
                }
                var wait = PatientSpin()
                while called.load(ordering: .relaxed) < (index + 1) * calls.count, !abandoned.load(ordering: .relaxed) { wait.pause() }
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
        var waitForStarts = PatientSpin()
        while ready.load(ordering: .relaxed) < calls.count { waitForStarts.pause() }
        for _ in calls.indices { start.signal() }
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
    /// One answer's place in the tables: the instance that gave it, how it was graded, and
    /// whether it came after a crossing the provider read the clock for (then it is the expiry
    /// check's).
    struct AnswerKey: Hashable, Sendable {
        let instance: Int
        let outcome: HammerOutcome
        let afterCrossing: Bool
    }

    /// One round's expiry crossing, and whether the provider read the kit's clock after it.
    struct Crossing: Sendable, Equatable {
        let round: Int
        let read: Bool
    }

    /// What the rounds of one phase found.
    struct Findings: Sendable {
        /// The phase's name ("race hammer", "several instances").
        var phase = "race hammer"
        /// Every answer, by instance, grade and time.
        var answers: [AnswerKey: Int] = [:]
        /// A few forbidden answers before the crossings (or after crossings the provider did not
        /// read the clock for), described (never with values).
        var examples: [String] = []
        /// A few forbidden answers after crossings the provider read the clock for.
        var examplesAfterCrossing: [String] = []
        var roundsRun = 0
        var threads = 0
        /// Instances of each user per round.
        var instances = 1
        /// The users the rounds asked for (the several-instances check: one per round).
        var usersAsked: Set<String> = []
        /// Whether the rounds stopped early because ThreadSanitizer had reported.
        var stoppedAfterRace = false
        var staleRound: Int?
        /// Whether the stale round hung after a crossing the provider read the clock for.
        var staleAfterCrossing = false
        /// The rounds' crossings of the kit's clock.
        var crossings: [Crossing] = []
        var reports: ThreadSanitizerPhase

        /// The answers before the crossings (and after crossings the provider did not read the
        /// clock for), by outcome: this phase's own.
        var outcomes: [HammerOutcome: Int] { counts(afterCrossing: false) }

        /// The answers after crossings the provider read the clock for, by outcome.
        var outcomesAfterCrossing: [HammerOutcome: Int] { counts(afterCrossing: true) }

        private func counts(afterCrossing: Bool) -> [HammerOutcome: Int] {
            answers.filter { $0.key.afterCrossing == afterCrossing }.reduce(into: [:]) { $0[$1.key.outcome, default: 0] += $1.value }
        }
    }

    /// Runs a warm-up round, then `settings.rounds` rounds, each with fresh providers from
    /// `fresh(users)` (called `instances` times). The calling task suspends; the rounds run on
    /// kit-owned OS threads.
    func run(fresh: Run.Bind, name: String) async -> Findings {
        let recorder = ThreadSanitizerPhase.Recorder(name: phase)
        var findings = Findings(phase: phase, reports: ThreadSanitizerPhase(name: recorder.name, reports: [], lost: 0, rounds: 0, roundsWithReports: 0))
        var roundsWithReports = 0
        let threads = max(2, settings.threads)
        let instances = max(1, settings.instances)
        findings.threads = threads
        findings.instances = instances
        if phase != "race hammer" { KitProgress.note(.phase("the \(phase) check")) }
        for round in -1..<max(1, settings.rounds) {
            var providers: [[any IdpSdkInteractionInterface]] = []
            for _ in 0..<instances { providers.append(await fresh(users).value) }
            let calls = (0..<threads).map { self.calls(round: round + 1, thread: $0) }
            let lockstep = calls.map(\.count).min() ?? 0
            let crossing = clock.flatMap { clock in
                settings.expiryHorizon > .zero ? HammerRound.Crossing(
                    clock: clock, horizon: settings.expiryHorizon, beforeCall: lockstep / 2,
                    target: clock.elapsedNanoseconds + settings.expiryHorizon.nanoseconds) : nil
            }
            let hammerRound = HammerRound(providers: providers, calls: calls, crossing: crossing)
            for thread in calls { for call in thread { findings.usersAsked.insert(users[call.user].userId) } }
            ThreadSanitizerReports.noteForCrash(phase == "race hammer"
                ? "the conformance kit's race hammer ran \(name), round \(round + 1) of \(settings.rounds) (0: warm-up)"
                : "the conformance kit's \(phase) check ran \(name), round \(round + 1) of \(settings.rounds) (0: warm-up)")
            KitProgress.hammerRound(round + 1, of: settings.rounds)
            let timeout = settings.hangTimeout
            let done = await OSThreads.run { hammerRound.run(timeout: timeout) }
            ThreadSanitizerReports.noteForCrash(nil)
            if recorder.collect() > 0 { roundsWithReports += 1 }
            let exercised = hammerRound.crossingWasRead
            if hammerRound.didCross { findings.crossings.append(.init(round: round + 1, read: exercised)) }
            // A race found decides the verdict; more rounds would only risk the crash a racy
            // dictionary ends in.
            let decided = recorder.hasFindings
            guard done else {
                findings.staleRound = round + 1
                findings.staleAfterCrossing = exercised
                for call in calls.joined() {
                    findings.answers[AnswerKey(instance: call.instance, outcome: .noAnswer, afterCrossing: exercised), default: 0] += 1
                }
                break
            }
            if round >= 0 { findings.roundsRun += 1 }
            let beforeCall = hammerRound.crossing?.beforeCall ?? Int.max
            for thread in calls.indices {
                let answers = hammerRound.answers(thread: thread)
                for index in 0..<min(calls[thread].count, answers.count) {
                    let call = calls[thread][index], answer = answers[index]
                    let outcome = grade(call, answer)
                    let afterCrossing = exercised && index >= beforeCall
                    findings.answers[AnswerKey(instance: call.instance, outcome: outcome, afterCrossing: afterCrossing), default: 0] += 1
                    guard outcome.grade != .acceptable else { continue }
                    let example = describe(round: round + 1, thread: thread, index: index, calls: calls, lockstep: lockstep,
                                           answer: answer, outcome: outcome, afterCrossing: afterCrossing)
                    if afterCrossing {
                        if findings.examplesAfterCrossing.count < 5 { findings.examplesAfterCrossing.append(example) }
                    } else if findings.examples.count < 5 {
                        findings.examples.append(example)
                    }
                }
            }
            if decided {
                findings.stoppedAfterRace = round + 1 < settings.rounds
                break
            }
        }
        findings.reports = recorder.finish(rounds: findings.roundsRun + 1, roundsWithReports: roundsWithReports)
        return findings
    }

    /// A forbidden answer in words (never its values): the round, and, when other instances of the
    /// same user were called at the same lockstep call, the instances that answered at once and
    /// what this one returned.
    func describe(round: Int, thread: Int, index: Int, calls: [[Call]], lockstep: Int, answer: IdpSdkProvideCredentialsResult?,
                  outcome: HammerOutcome, afterCrossing: Bool) -> String {
        let call = calls[thread][index]
        let user = users[call.user].userId
        let when = "round \(round)" + (afterCrossing ? ", after the crossing" : "")
        let returned = outcome.rawValue + (answer?.error.map { " (\($0))" } ?? "")
        if index < lockstep {
            let together = Set(calls.map { $0[index] }.filter { $0.user == call.user }.map(\.instance))
            if together.count > 1 {
                return "\(when), call \(index + 1) of every thread: instances \(Self.list(together.sorted())) of \(user) answered at once; "
                    + "instance \(call.instance) (thread \(thread)) returned: \(returned)"
            }
        }
        let instance = settings.instances > 1 ? " (instance \(call.instance))" : ""
        return "\(when), thread \(thread)\(instance), \(call.data.flowId) step \(call.data.step) for \(user): \(returned)"
    }

    /// "0 and 1", "0, 1 and 2".
    static func list(_ numbers: [Int]) -> String {
        guard let last = numbers.last, numbers.count > 1 else { return numbers.map(String.init).joined() }
        return numbers.dropLast().map(String.init).joined(separator: ", ") + " and \(last)"
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
