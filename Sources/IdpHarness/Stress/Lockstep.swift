import IdpPrimitives

/// The two copies of a request `transport.retryInFlight` sends at once, going through the IDP
/// side by side: at each of the IDP's seams a copy waits until the other has reached the same
/// seam or finished. So each of the IDP's lock sections of one copy runs between the same two
/// seams as the other's: both read the code or the token before either decides, and the order of
/// their decisions is the scheduler's (controlled) or the OS's (free-running). A copy that runs
/// ahead parks under control (``ControlledScheduler/park(_:_:)``, its twin unparks it) and waits
/// on a condition free-running.
final class Lockstep: Sendable {
    /// Which copy: the original (0) or the copy (1).
    typealias Side = Int

    /// Under control, the two copies' participants (original, copy); `nil` free-running.
    private let participants: [Int]?
    private let scheduler: ControlledScheduler?
    private let state = ConditionLockedValue(LockstepState())

    /// Two copies under control, run by participants `original` and `copy` of `scheduler`.
    init(original: Int, copy: Int, on scheduler: ControlledScheduler) {
        participants = [original, copy]
        self.scheduler = scheduler
    }

    /// Two copies on free-running threads.
    init() {
        participants = nil
        scheduler = nil
    }

    /// Copy `side` reached one of the IDP's seams: returns once its twin is there too (or done).
    func arrive(_ side: Side) {
        let (wait, wake) = state.withLock { $0.arrive(side) }
        if let scheduler, let participants {
            if wake { scheduler.unpark(participants[1 - side]) }
            if wait { scheduler.park(participants[side], "transport.retry.lockstep") }
            return
        }
        if wake { state.broadcast() }
        if wait { state.wait { state, _ in state.mayGoOn(side) ? .done(()) : .wait(timeout: nil) } }
    }

    /// Copy `side` is done with the IDP: its twin no longer waits for it.
    func finish(_ side: Side) {
        let wake = state.withLock { $0.finish(side) }
        guard wake else { return }
        if let scheduler, let participants {
            scheduler.unpark(participants[1 - side])
        } else {
            state.broadcast()
        }
    }

    /// The copy the calling thread runs in a free run, if it runs one.
    static let onThisThread = ThreadSpecific<FreeSide>()

    /// A free-running thread's copy: its pair and its side.
    final class FreeSide: Sendable {
        let pair: Lockstep
        let side: Side

        init(_ pair: Lockstep, _ side: Side) {
            self.pair = pair
            self.side = side
        }
    }
}

/// How far each copy went: the seams it reached and whether it is done. Pure; ``Lockstep`` keeps
/// it under its lock and acts on what it decides after.
struct LockstepState {
    private var seams = [0, 0]
    private var finished = [false, false]

    /// Copy `side` reached its next seam: whether it must wait for its twin (which is behind), and
    /// whether its twin, waiting at this seam, may go on now.
    mutating func arrive(_ side: Int) -> (wait: Bool, wake: Bool) {
        seams[side] += 1
        let other = 1 - side
        guard !finished[other] else { return (false, false) }
        if seams[other] < seams[side] { return (true, false) }
        return (false, seams[other] == seams[side])
    }

    /// Copy `side` is done: whether its twin waits for it.
    mutating func finish(_ side: Int) -> Bool {
        finished[side] = true
        let other = 1 - side
        return !finished[other] && seams[other] > seams[side]
    }

    /// Whether copy `side`, waiting, may go on: its twin caught up or is done.
    func mayGoOn(_ side: Int) -> Bool {
        let other = 1 - side
        return finished[other] || seams[other] >= seams[side]
    }
}
