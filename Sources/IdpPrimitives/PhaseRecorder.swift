import Dispatch
import Synchronization

/// The points of one login at which a ``PhaseRecorder`` notes the time: the caller's steps (the
/// MC's events around `getAuthorizationCode`), the engine's, and the MC's token request. In the
/// order a login with one form step passes them.
package enum LoginPhase: Int, CaseIterable, Sendable {
    /// The caller is about to post `KSMGetAstClientDataEvent`.
    case started
    /// The MC's AST client data is back with the caller.
    case astClientDataReturned
    /// `getAuthorizationCode` has begun: the engine is about to check the arguments.
    case flowEntered
    /// The flow's first request (authorize) is about to go to the transport.
    case authorizeSent
    /// The transport has the IDP's answer to the first request (still on the thread it arrived on).
    case authorizeAnswered
    /// An SDK thread has begun to read that answer.
    case answerPickedUp
    /// The answer is read: a form, and the provider is about to be asked.
    case formRead
    /// The provider has returned its answer.
    case providerReturned
    /// The credentials are checked and their submission is about to go to the transport.
    case submissionSent
    /// The transport has the IDP's answer to the submission.
    case submissionAnswered
    /// The answer is read (the code) and the completion is about to run.
    case completing
    /// `getAuthorizationCode`'s result is back with the caller.
    case codeReturned
    /// The MC's token request is about to go to the transport.
    case tokenRequestSent
    /// The transport has the token endpoint's answer.
    case tokenAnswered
    /// `KSMSetAuthorisationCodeEvent`'s result is back with the caller.
    case tokensStored
}

/// Notes when one login passes each ``LoginPhase``: the clock read, per phase, the first time the
/// login passes it. idp-bench splits a lone login's time into its parts with it.
///
/// A recorder belongs to one login. The caller binds it to its task with
/// ``withRecording(_:operation:)``; the engine looks for it when a flow starts, and the MC when it
/// sends its token request, through ``current``. Until a process first binds a recorder,
/// ``current`` is one relaxed load of a word nothing writes, and no task-local is read; from then
/// on each look also reads the task-local, and a login whose task binds no recorder notes nothing.
package final class PhaseRecorder: Sendable {
    // Sound as `Sendable`: the pointer is set once in `init` and freed in `deinit`; every access
    // in between goes through an `Atomic`.
    nonisolated(unsafe) private let times: UnsafeMutablePointer<Atomic<UInt64>>
    private static let count = LoginPhase.allCases.count
    /// Where the caller's task ran when its code came back (``noteCallerPlace()``): the thread's
    /// ``ThreadStripe`` number and the CPU, each -1 until noted (the CPU also where unknown).
    private let callerThread = Atomic<Int>(-1)
    private let callerCPU = Atomic<Int>(-1)
    private static let armed = Atomic<Bool>(false)
    @TaskLocal private static var bound: PhaseRecorder?

    /// A recorder with no phase noted.
    package init() {
        times = .allocate(capacity: Self.count)
        for phase in 0..<Self.count { (times + phase).initialize(to: Atomic(0)) }
    }

    deinit {
        times.deinitialize(count: Self.count)
        times.deallocate()
    }

    /// The recorder the current task binds, if recording is armed.
    package static var current: PhaseRecorder? {
        armed.load(ordering: .relaxed) ? bound : nil
    }

    /// Runs `operation` with `recorder` bound to the task; from then on flows and MCs look for the
    /// recorder their task binds.
    package static func withRecording<Result>(_ recorder: PhaseRecorder, operation: () async throws -> Result) async rethrows -> Result {
        armed.store(true, ordering: .relaxed)
        return try await $bound.withValue(recorder, operation: operation)
    }

    /// Notes now as the time of `phase`, unless it was noted already.
    package func note(_ phase: LoginPhase) {
        note(phase, at: DispatchTime.now().uptimeNanoseconds)
    }

    /// Notes `time` (uptime in nanoseconds, above 0) as the time of `phase`, unless it was noted already.
    package func note(_ phase: LoginPhase, at time: UInt64) {
        _ = (times + phase.rawValue).pointee.compareExchange(expected: 0, desired: max(1, time), ordering: .relaxed)
    }

    /// Notes the OS thread (its ``ThreadStripe`` number) and the CPU (``Processors/currentCPU()``)
    /// the calling task runs on: called by the caller's task as `getAuthorizationCode`'s result
    /// reaches it, it says where the hand-back woke.
    package func noteCallerPlace() {
        callerThread.store(ThreadStripe.current, ordering: .relaxed)
        callerCPU.store(Processors.currentCPU() ?? -1, ordering: .relaxed)
    }

    /// Where ``noteCallerPlace()`` found the caller's task: its thread's ``ThreadStripe`` number
    /// and its CPU (`nil` where unknown); `nil` if it was not noted.
    package var callerPlace: (thread: Int, cpu: Int?)? {
        let thread = callerThread.load(ordering: .relaxed)
        guard thread >= 0 else { return nil }
        let cpu = callerCPU.load(ordering: .relaxed)
        return (thread, cpu >= 0 ? cpu : nil)
    }

    /// The uptime in nanoseconds at which `phase` was noted; `nil` if it was not.
    package func time(of phase: LoginPhase) -> UInt64? {
        let time = (times + phase.rawValue).pointee.load(ordering: .relaxed)
        return time == 0 ? nil : time
    }
}
