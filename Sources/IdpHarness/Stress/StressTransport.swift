import Foundation
import Synchronization
import IdpPrimitives
import IdpWireFormats

/// The ``ExecutionController`` of a controlled run: the SDK's hand-offs become participants of the
/// run's ``ControlledScheduler`` and its pauses become seams of the participant that runs.
final class StressController: ExecutionController {
    let scheduler: ControlledScheduler
    /// The copies of requests sent twice at once, whose seams go in lockstep.
    let twins = Twins()

    init(_ scheduler: ControlledScheduler) { self.scheduler = scheduler }

    func post(_ seam: Seam, _ job: @escaping @Sendable () -> Void) {
        scheduler.spawn(seam.description, job)
    }

    func pause(at seam: Seam) {
        // Never block a Swift concurrency thread; a thread outside the run is not held either.
        guard !withUnsafeCurrentTask(body: { $0 != nil }), let participant = scheduler.current else { return }
        twins.arrive(participant)
        scheduler.seam(participant, seam.description)
    }

    func postAsync(_ seam: Seam, _ body: @escaping @Sendable () async -> Void) {
        scheduler.spawnAsync(seam.description, parent: scheduler.currentAsync ?? scheduler.current, body)
    }

    func resumeHandOver(at seam: Seam) -> (@Sendable (@escaping @Sendable () -> Void) -> Void)? {
        guard let participant = scheduler.currentAsync, scheduler.isRunning(participant) else { return nil }
        let scheduler = self.scheduler
        return { resume in scheduler.unparkAsync(participant, resume) }
    }

    func checkpoint(at seam: Seam) async {
        guard let participant = scheduler.currentAsync, scheduler.isRunning(participant) else { return }
        let scheduler = self.scheduler
        await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
            scheduler.yieldAsync(participant, seam.description) { resumed.resume() }
        }
    }

    func suspending(at seam: Seam) {
        // Parked only now, with the resume arranged: a participant parked before it could be
        // woken looks blocked to the scheduler while it still runs.
        guard let participant = scheduler.currentAsync else { return }
        scheduler.parkAsync(participant, seam.description)
    }
}

/// The network of a stress run: in front of the IDP's transport, it makes each request and each
/// response a seam of the run (a participant of its own, so another flow may go first) and
/// injects the transport faults of the run's ``FaultPlan``:
///
/// - `transport.delay`: the response takes one more hop (others may overtake it);
/// - `transport.drop`: the response is lost; the transport reports its own timeout late (at the
///   next quiet moment of the run, or behind the trace's next request), so a flow whose watchdog
///   fires first times out instead;
/// - `transport.duplicate`: the response arrives twice;
/// - `transport.reorder`: the response is held until the flow's next request has been sent, or
///   delivered on the next quiet moment;
/// - `transport.connectionLost`, `transport.timeout`: the request fails with that error;
/// - `transport.5xx`: the IDP answers 503;
/// - `transport.retryInFlight`: a token request (code or refresh grant) or a step's form post
///   reaches the IDP twice at once, the copy racing the original (under control each is a
///   participant of its own, free-running each a thread of its own released together); the
///   caller gets the copy's answer once both are in, and the run judges the pair (``TwinJudge``).
///
/// Free-running (no scheduler), the same faults strike: a delayed response comes a moment later on
/// another thread, a lost or reordered one is held as under control, a duplicated one arrives
/// twice; the free run's watchdog sends held responses on when the run is quiet.
///
/// A request of an async participant (an MC event's task, and the tasks it starts) is a job of
/// that participant's logical thread, and its task parks until the response is delivered (a
/// delayed or reordered response waits for the next request of its trace or the next quiet
/// moment). A request from outside the run's participants goes through at once, and only the
/// faults that answer at once (connection lost, timeout, 5xx) apply to it.
final class StressTransport: Transport {
    typealias Completion = @Sendable (Result<HTTPResponse, TransportError>) -> Void
    /// Judges a request sent twice at once: called as the two copies go out (so it can read the
    /// world before), it returns what judges their two answers, called once with both.
    typealias TwinJudge = @Sendable (_ grant: TokenGrant?, _ trace: String)
        -> @Sendable (_ original: Result<HTTPResponse, TransportError>, _ copy: Result<HTTPResponse, TransportError>) -> Void

    private let inner: any Transport
    private let scheduler: ControlledScheduler?
    private let faults: StressFaults
    private let monitor: FreeRunMonitor?
    private let judgeTwins: TwinJudge
    /// Under control, where the run's controller finds the copies of a request sent twice at once.
    private let twins: Twins?
    /// Requests per trace, the step number of a fault site.
    private let steps = LockedValue<[String: Int]>([:])
    /// Responses held back by `transport.reorder`, per trace.
    private let held = LockedValue<[String: [@Sendable () -> Void]]>([:])
    /// The last authorization-code redemption each trace sent (what `code.replay` replays).
    private let redemptions = LockedValue<[String: HTTPRequest]>([:])
    /// Per trace, token requests whose answer `transport.drop` lost after the IDP had acted on
    /// them: a rotated token the MC never learnt of.
    private let lostTokenAnswers = LockedValue<[String: Int]>([:])
    /// Per trace, token requests `transport.retryInFlight` sent twice at once: the answer the MC
    /// got may hold tokens the other copy's reuse revoked, or a refusal while the other copy
    /// rotated a token the MC never learnt of.
    private let tokenRequestsSentTwice = LockedValue<[String: Int]>([:])

    /// How many token requests of `trace` lost their answer after the IDP had acted on them.
    func lostTokenAnswers(trace: String) -> Int { lostTokenAnswers.withLock { $0[trace] ?? 0 } }

    /// How many token requests of `trace` were sent twice at once.
    func tokenRequestsSentTwice(trace: String) -> Int { tokenRequestsSentTwice.withLock { $0[trace] ?? 0 } }

    /// Per trace, the bodies (their hashes) of the MC's token requests that lost their
    /// connection (the MC sends such a request once more), and how often a request whose body had
    /// lost it before lost it again: the MC may then have given the request up, reported
    /// NOT_REACHABLE and restarted itself, logging every user out. A body is never cleared by a
    /// request that went through: concurrent events send token requests with one body (a storm's
    /// token exchanges), so a request that went through may be another event's, and the resend
    /// still to come.
    private let connectionRetries = LockedValue<[String: (lost: Set<Int>, gaveUp: Int)]>([:])

    /// How often the MC on `trace` may have given up a request after losing its connection twice
    /// (and so restarted itself): counted whenever a token request's body lost its connection a
    /// second time.
    func mcGaveUp(trace: String) -> Int { connectionRetries.withLock { $0[trace]?.gaveUp ?? 0 } }

    init(inner: any Transport, scheduler: ControlledScheduler?, twins: Twins? = nil, faults: StressFaults, monitor: FreeRunMonitor?,
         judgeTwins: @escaping TwinJudge) {
        self.inner = inner
        self.scheduler = scheduler
        self.twins = twins
        self.faults = faults
        self.monitor = monitor
        self.judgeTwins = judgeTwins
    }

    /// The last authorization-code redemption trace `trace` sent, taken: what an attacker who
    /// captured it would replay.
    func takeLastCodeRedemption(trace: String) -> HTTPRequest? {
        redemptions.withLock { $0.removeValue(forKey: trace) }
    }

    func send(_ request: HTTPRequest, completion: @escaping Completion) {
        let trace = TraceParent.seamTrace(request.headers["traceparent"]) ?? "none"
        let step = steps.withLock { steps -> Int in
            steps[trace, default: 0] += 1
            return steps[trace]!
        }
        let isTokenRequest = request.method == "POST" && request.target.hasSuffix("/protocol/openid-connect/token")
        let grant = isTokenRequest ? TokenGrant(body: request.body) : nil
        if grant == .code { redemptions.withLock { $0[trace] = request } }
        // Responses of this trace held back for reordering go now, behind this request.
        let overtaken = held.withLock { $0.removeValue(forKey: trace) } ?? []
        func fault(_ fault: SystemStress.Fault) -> Bool {
            let fires = faults.fires(fault, trace: trace, step: step)
            if fires, fault == .transportDrop, isTokenRequest { lostTokenAnswers.withLock { $0[trace, default: 0] += 1 } }
            return fires
        }
        let connectionLost = fault(.transportConnectionLost)
        if isTokenRequest, connectionLost {
            // Hashed before the lock; two bodies with one hash only excuse more.
            let body = request.body.hashValue
            connectionRetries.withLock { retries in
                var entry = retries[trace] ?? ([], 0)
                if !entry.lost.insert(body).inserted { entry.gaveUp += 1 }
                retries[trace] = entry
            }
        }
        if let immediate = immediateFailure(fault, connectionLost: connectionLost) {
            deliver(immediate, trace: trace, completion: completion, controlled: false)
            overtaken.forEach { $0() }
            return
        }
        // Decided only for a request that reaches the IDP, and only where the run controls it
        // or runs free (a request from outside the participants goes through once).
        let twice = { [self] in sentTwice(request, grant: grant, trace: trace, fault: fault) }
        if let scheduler, let asyncParticipant = scheduler.currentAsync, scheduler.isRunning(asyncParticipant) {
            // The MC's actor, as an async participant: the request is a job of its logical
            // thread, and its task parks (suspends) until the response is delivered to it.
            let delivery = LockedValue(AsyncDelivery())
            sendControlled(request, grant: grant, trace: trace, on: scheduler, parent: asyncParticipant, holdsDelayed: true, twice: twice(), fault: fault) { response in
                scheduler.spawn(Seam("transport.response", trace: trace).description, parent: asyncParticipant) {
                    switch delivery.withLock({ $0.arrive(response) }) {
                    case .first:
                        // Delivered when the task's turn comes; a duplicate that came meanwhile
                        // reaches the transport's caller after it, to be dropped there.
                        scheduler.unparkAsync(asyncParticipant) {
                            completion(response)
                            for duplicate in delivery.withLock({ $0.firstDelivered() }) { completion(duplicate) }
                        }
                    case .afterFirst:
                        completion(response)   // a duplicate: the transport's caller must drop it
                    case .held:
                        break
                    }
                }
            }
            // The held responses go behind this request while the MC's task still has the turn:
            // once it parks, another participant runs, and what this task hands over then would
            // join the run at a moment the schedule does not choose.
            overtaken.forEach { $0() }
            scheduler.parkAsync(asyncParticipant, Seam("transport.awaiting", trace: trace).description)
            return
        }
        guard let scheduler else {
            sendFree(request, grant: grant, trace: trace, step: step, twice: twice(), fault: fault, completion: completion)
            overtaken.forEach { $0() }
            return
        }
        guard scheduler.current != nil, !withUnsafeCurrentTask(body: { $0 != nil }) else {
            inner.send(request, completion: completion)
            overtaken.forEach { $0() }
            return
        }
        sendControlled(request, grant: grant, trace: trace, on: scheduler, parent: nil, holdsDelayed: false, twice: twice(), fault: fault) { [self] response in
            deliver(response, trace: trace, completion: completion, controlled: true)
        }
        overtaken.forEach { $0() }
    }

    /// Sends `request` as a job of the run, handed over by `parent` (`nil`: the calling
    /// participant), with the faults that need control (a response lost, doubled, delayed or
    /// held back), decided here only for requests the run controls. `deliverOne` hands one
    /// response over. A delayed response takes one more hop, or with `holdsDelayed` is held back
    /// like a reordered one.
    private func sendControlled(_ request: HTTPRequest, grant: TokenGrant?, trace: String, on scheduler: ControlledScheduler, parent: Int?,
                                holdsDelayed: Bool, twice: Bool, fault: (SystemStress.Fault) -> Bool, deliverOne: @escaping Completion) {
        let drop = fault(.transportDrop), duplicate = fault(.transportDuplicate)
        let delay = fault(.transportDelay), reorder = fault(.transportReorder)
        scheduler.spawn(Seam("transport.request", trace: trace).description, parent: parent) { [self] in
            send(request, grant: grant, trace: trace, twice: twice) { [self] response in
                let response = drop ? StressTransport.lost : response
                let respond: @Sendable () -> Void = {
                    if delay && !holdsDelayed {
                        scheduler.spawn(Seam("transport.delayed", trace: trace).description, parent: parent ?? scheduler.current ?? scheduler.currentAsync) {
                            deliverOne(response)
                        }
                    } else {
                        deliverOne(response)
                    }
                    if duplicate { deliverOne(response) }
                }
                if reorder || drop || (delay && holdsDelayed) {
                    held.withLock { $0[trace, default: []].append(respond) }
                } else {
                    respond()
                }
            }
        }
    }

    /// Sends `request` in a free run, with the faults that need no control: a lost or reordered
    /// response is held (until the trace's next request or the run's next quiet moment), a
    /// delayed one comes a moment later on another thread, a duplicated one twice.
    private func sendFree(_ request: HTTPRequest, grant: TokenGrant?, trace: String, step: Int, twice: Bool, fault: (SystemStress.Fault) -> Bool,
                          completion: @escaping Completion) {
        let drop = fault(.transportDrop), duplicate = fault(.transportDuplicate)
        let delay = fault(.transportDelay), reorder = fault(.transportReorder)
        let monitor = self.monitor
        monitor?.beginWork()
        send(request, grant: grant, trace: trace, twice: twice) { [self] response in
            let response = drop ? StressTransport.lost : response
            // The request is under way until its response is delivered.
            let respond: @Sendable () -> Void = {
                completion(response)
                if duplicate { completion(response) }
                monitor?.endWork()
            }
            if reorder || drop {
                // Free-running, waiting for a quiet moment would wait for every other device, so
                // after a millisecond the trace's held answers go anyway.
                held.withLock { $0[trace, default: []].append(respond) }
                DispatchQueue.global().asyncAfter(deadline: .now(plus: .milliseconds(1))) { [self] in
                    held.withLock { $0.removeValue(forKey: trace) }?.forEach { $0() }
                }
            } else if delay {
                // 100-500 µs: long enough for the trace's other flows and other devices to go first.
                DispatchQueue.global().asyncAfter(deadline: .now(plus: .microseconds(100 + 100 * Int64(step % 5))), execute: respond)
            } else {
                respond()
            }
        }
    }

    /// Sends `request` to the IDP once, or with `twice` twice at once: under control the copy is
    /// a participant of its own beside the calling one, free-running each copy has a thread of its
    /// own, and either way the two go through the IDP in ``Lockstep``. `completion` gets the
    /// copy's answer once both are in, after the run judged the pair.
    private func send(_ request: HTTPRequest, grant: TokenGrant?, trace: String, twice: Bool, completion: @escaping Completion) {
        guard twice else {
            inner.send(request, completion: completion)
            return
        }
        let judge = judgeTwins(grant, trace)
        let answers = LockedValue(TwinAnswers())
        let inner = self.inner, twins = self.twins
        // One copy: through the IDP, then out of the lockstep (`leave`) before its answer goes on,
        // so what the answer sets off on this thread or participant is no copy's.
        let run: @Sendable (Lockstep, Lockstep.Side, _ leave: @escaping @Sendable () -> Void) -> Void = { pair, side, leave in
            inner.send(request) { response in
                pair.finish(side)
                leave()
                guard let both = answers.withLock({ $0.arrive(response, isCopy: side == 1) }) else { return }
                judge(both.original, both.copy)
                completion(both.copy)
            }
        }
        if let scheduler, let twins, let original = scheduler.current {
            let made = LockedValue<Lockstep?>(nil)
            // The copy waits at its first seam until the calling participant lets another go.
            let copy = scheduler.spawnParticipant(Seam("transport.retry", trace: trace).description) { copy in
                run(made.withLock { $0! }, 1) { twins.remove(copy) }
            }
            let pair = Lockstep(original: original, copy: copy, on: scheduler)
            made.withLock { $0 = pair }
            twins.add(pair, original: original, copy: copy)
            run(pair, 0) { twins.remove(original) }
        } else {
            let pair = Lockstep()
            let leave: @Sendable () -> Void = { Lockstep.onThisThread.clear() }
            TwinStart.onThreads({ Lockstep.onThisThread.set(Lockstep.FreeSide(pair, 0)); run(pair, 0, leave) },
                                { Lockstep.onThisThread.set(Lockstep.FreeSide(pair, 1)); run(pair, 1, leave) })
        }
    }

    /// Whether `transport.retryInFlight` strikes `request` (on `trace`), a token request for
    /// `grant` or another: only a code or refresh grant, or a step's form post (an exchange for
    /// another audience, a GET and the rest go once). Counted for a grant
    /// (``tokenRequestsSentTwice(trace:)``).
    private func sentTwice(_ request: HTTPRequest, grant: TokenGrant?, trace: String, fault: (SystemStress.Fault) -> Bool) -> Bool {
        let isStepPost = request.method == "POST" && request.target.contains("/login-actions/authenticate")
        guard grant != nil || isStepPost, fault(.transportRetryInFlight) else { return false }
        if grant != nil { tokenRequestsSentTwice.withLock { $0[trace, default: 0] += 1 } }
        return true
    }

    /// What a lost response turns into, as a real HTTP client's own timeout would report it.
    static let lost: Result<HTTPResponse, TransportError> = .failure(TransportError(.timedOut, "injected: the response was lost; the request timed out"))

    /// Delivers every response still held back; returns whether there was one (a quiet moment of
    /// the run: nobody else would send it on).
    func releaseHeld() -> Bool {
        let all = held.withLock { held in defer { held = [:] }; return held.keys.sorted().flatMap { held[$0]! } }
        all.forEach { $0() }
        return !all.isEmpty
    }

    private func immediateFailure(_ fault: (SystemStress.Fault) -> Bool, connectionLost: Bool) -> Result<HTTPResponse, TransportError>? {
        if connectionLost { return .failure(TransportError(.connectionLost, "injected: the connection was lost")) }
        if fault(.transportTimeout) { return .failure(TransportError(.timedOut, "injected: the request timed out")) }
        if fault(.transport5xx) {
            return .success(HTTPResponse(status: 503, body: Array("{\"error\":\"temporarily_unavailable\",\"error_description\":\"injected 503\"}".utf8)))
        }
        return nil
    }

    private func deliver(_ response: Result<HTTPResponse, TransportError>, trace: String, completion: @escaping Completion, controlled: Bool) {
        guard controlled, let scheduler else {
            completion(response)
            return
        }
        // Handed over by whoever sends it on: a participant's thread, or an MC event's task that
        // releases a response held for its trace.
        scheduler.spawn(Seam("transport.response", trace: trace).description, parent: scheduler.current ?? scheduler.currentAsync) { completion(response) }
    }
}

/// Under control, the copies of the requests sent twice at once, by participant.
final class Twins: Sendable {
    private let byParticipant = LockedValue<[Int: (pair: Lockstep, side: Lockstep.Side)]>([:])

    func add(_ pair: Lockstep, original: Int, copy: Int) {
        byParticipant.withLock { twins in
            twins[original] = (pair, 0)
            twins[copy] = (pair, 1)
        }
    }

    func remove(_ participant: Int) { byParticipant.withLock { _ = $0.removeValue(forKey: participant) } }

    /// `participant` is at a seam: if it runs a copy, waits for its twin (``Lockstep/arrive(_:)``).
    func arrive(_ participant: Int) {
        guard let twin = byParticipant.withLock({ $0[participant] }) else { return }
        twin.pair.arrive(twin.side)
    }
}

/// The IDP's controller in a free run: at the IDP's seams, a copy of a request sent twice at
/// once waits for its twin (``Lockstep``); every other thread goes straight on.
final class FreeRunSeams: ExecutionController {
    func post(_ seam: Seam, _ job: @escaping @Sendable () -> Void) { job() }

    func pause(at seam: Seam) {
        guard !withUnsafeCurrentTask(body: { $0 != nil }), let side = Lockstep.onThisThread.value else { return }
        side.pair.arrive(side.side)
    }

}

/// The run's faults, keyed by trace (which flow of the scenario) and step.
struct StressFaults: Sendable {
    let plan: FaultPlan
    /// The scenario flow of each trace id.
    let flowOfTrace: @Sendable (String) -> Int?
    let fired: LockedValue<[FaultPlan.Site]>

    func fires(_ fault: SystemStress.Fault, trace: String, step: Int) -> Bool {
        guard let flow = flowOfTrace(trace) else { return false }
        let site = FaultPlan.Site(fault: fault.rawValue, flow: flow, step: step)
        guard plan.fires(site) else { return false }
        fired.withLock { $0.append(site) }
        return true
    }
}

/// What a token request asks for, where the stress follows it: an authorization code's
/// redemption or a refresh; read once per request from its form.
enum TokenGrant: Sendable {
    case code, refresh

    /// The grant the token request form `body` asks for; `nil` for another (an exchange).
    init?(body: [UInt8]) {
        let form = String(decoding: body, as: UTF8.self)
        if form.contains("grant_type=authorization_code") {
            self = .code
        } else if form.contains("grant_type=refresh_token") {
            self = .refresh
        } else {
            return nil
        }
    }
}

/// The two answers of a request sent twice at once, as they come in.
struct TwinAnswers {
    private var original: Result<HTTPResponse, TransportError>?
    private var copy: Result<HTTPResponse, TransportError>?

    /// One answer came; both once the second is in, `nil` before.
    mutating func arrive(_ response: Result<HTTPResponse, TransportError>, isCopy: Bool)
        -> (original: Result<HTTPResponse, TransportError>, copy: Result<HTTPResponse, TransportError>)? {
        if isCopy { copy = response } else { original = response }
        guard let original, let copy else { return nil }
        return (original, copy)
    }
}

/// A free run's two sends of one request: each on an OS thread of its own, the two released
/// together, so they reach the IDP at once rather than a thread's start apart.
final class TwinStart: Sendable {
    /// Threads arrived at the start.
    private let arrived = Atomic<Int>(0)

    /// Runs `original` and `copy` on two threads released together.
    static func onThreads(_ original: @escaping @Sendable () -> Void, _ copy: @escaping @Sendable () -> Void) {
        let start = TwinStart()
        for body in [original, copy] {
            Thread.detachNewThread {
                start.arriveAndWait()
                body()
            }
        }
    }

    /// Waits, yielding, until both threads arrived: the other is a thread already started.
    private func arriveAndWait() {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while arrived.load(ordering: .acquiring) < 2 { sched_yield() }
    }
}

/// The responses to one request of an MC task (an async participant): the first is delivered on
/// the task's turn; a duplicate that comes before that delivery ran waits for it, so it can only
/// reach the transport's caller second (a duplicate delivered first would resume the task off its
/// turn, where the schedule does not choose).
struct AsyncDelivery {
    enum Arrival { case first, held, afterFirst }

    private var first = false
    private var delivered = false
    private var held: [Result<HTTPResponse, TransportError>] = []

    /// A response came: the first, one held for after the first, or one after the first ran.
    mutating func arrive(_ response: Result<HTTPResponse, TransportError>) -> Arrival {
        if !first {
            first = true
            return .first
        }
        guard delivered else {
            held.append(response)
            return .held
        }
        return .afterFirst
    }

    /// The first was delivered: the duplicates held for it, to go now.
    mutating func firstDelivered() -> [Result<HTTPResponse, TransportError>] {
        delivered = true
        defer { held = [] }
        return held
    }
}
