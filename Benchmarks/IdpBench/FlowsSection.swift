import BenchSupport
import CredentialProviders
import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import McSdk
import Synchronization

/// The end-to-end rig: one IDP, one IdpSdkService, the recommended `CredentialStore` as provider,
/// and a pool of devices (a MasterController each) with enrolled users.
final class FlowRig: Sendable {
    static let tenant = "bench"
    let idp: IdpServer
    let sdk: IdpSdkService
    let store = CredentialStore()
    let devices: [Device]
    private let activations = Atomic<Int>(0)
    private let seed: UInt64

    /// A phone: its MasterController and the user enrolled on it.
    struct Device: Sendable {
        let mc: MasterController
        let userId: String
    }

    enum Scenario: String, CaseIterable { case activation, login }

    init(devices count: Int, latency: Duration, seed: UInt64, workerSpin: Duration? = nil, workerKeepAlive: Duration? = nil,
         coresPerPool: Int? = nil) async throws {
        self.seed = seed
        idp = IdpServer(configuration: .init(auditLogCapacity: 4_096))
        try idp.addTenant(Self.tenant)
        let url = "https://idp-bench-\(UUID().uuidString.prefix(8).lowercased()).invalid"
        IdpNetwork.shared.register(idp, at: url, latency: latency)
        var configuration = IdpSdkService.Configuration()
        if let workerSpin { configuration.workerSpin = workerSpin }
        if let workerKeepAlive { configuration.workerKeepAlive = workerKeepAlive }
        if let coresPerPool { configuration.coresPerWorkerPool = coresPerPool }
        sdk = IdpSdkService(tenantId: Self.tenant, idpUrl: url, certificateChain: Data(), shouldHashPin: false, configuration: configuration)
        var devices: [Device] = []
        devices.reserveCapacity(count)
        for index in 0..<count {
            let userId = "login-\(seed)-\(index)"
            let password = "pw-\(seed)-\(index)-secret"
            try idp.addUser(userId, tenant: Self.tenant, password: password)
            store.set([IdpSdkConstants.USERNAME: userId, IdpSdkConstants.PASSWORD: password], userId: userId, tenantId: Self.tenant)
            let mc = MasterController(configuration: .init(idpUrl: url))
            _ = await mc.receive(KSMStartEvent())
            devices.append(Device(mc: mc, userId: userId))
        }
        self.devices = devices
    }

    /// One flow of `scenario` on `device`: the MC's AST client data, `getAuthorizationCode`, and the
    /// MC's token exchange. An activation first creates a new user and activation code at the IDP
    /// (not timed) and runs on a new MasterController, as on a new phone.
    /// - Returns: when the flow started (after setup), or the failure.
    func run(_ scenario: Scenario, device: Device) async -> Result<UInt64, BenchFailure> {
        switch scenario {
        case .login:
            let start = uptimeNanoseconds()
            return await flow(mc: device.mc, client: "KssIdpLogin", userId: device.userId, trace: nil).map { start }
        case .activation:
            let number = activations.wrappingAdd(1, ordering: .relaxed).newValue
            let userId = "new-\(seed)-\(number)"
            let code: String
            do {
                try idp.addUser(userId, tenant: Self.tenant)
                code = try idp.issueActivationCode(for: userId, tenant: Self.tenant)
            } catch {
                return .failure(BenchFailure("activation setup: \(error)"))
            }
            store.set([IdpSdkConstants.USERNAME: userId, IdpSdkConstants.PASSWORD: "pw-\(number)-secret", IdpSdkConstants.ACTIVATION_CODE: code],
                      userId: userId, tenantId: Self.tenant)
            let trace = TraceParent.random()
            store.bind(traceId: trace.traceId, toUser: userId, tenantId: Self.tenant)
            defer {
                store.unbind(traceId: trace.traceId)
                store.remove(userId: userId, tenantId: Self.tenant)
            }
            let mc = MasterController(configuration: .init(idpUrl: sdk.idpUrl))
            _ = await mc.receive(KSMStartEvent())
            let start = uptimeNanoseconds()
            return await flow(mc: mc, client: "KssIdpEnrollment", userId: nil, trace: trace.description).map { start }
        }
    }

    /// One login on `device` with its phases noted in a new recorder.
    func recordedLogin(device: Device) async -> Result<PhaseRecorder, BenchFailure> {
        let recorder = PhaseRecorder()
        return await PhaseRecorder.withRecording(recorder) {
            await flow(mc: device.mc, client: "KssIdpLogin", userId: device.userId, trace: nil, phases: recorder).map { recorder }
        }
    }

    private func flow(mc: MasterController, client: String, userId: String?, trace: String?, phases: PhaseRecorder? = nil) async -> Result<Void, BenchFailure> {
        phases?.note(.started)
        guard let ast = await mc.receive(KSMGetAstClientDataEvent(tenantId: Self.tenant)) as? KSMGetAstClientDataResultEvent, ast.status == .kOk else {
            return .failure(BenchFailure("\(client): no AST client data"))
        }
        phases?.note(.astClientDataReturned)
        let result = await sdk.getAuthorizationCode(withAstClientData: AstClientDataInfo(astClientData: ast), clientId: client,
                                                    interactionInterface: store, userId: userId, traceParent: trace)
        phases?.note(.codeReturned)
        phases?.noteCallerPlace()
        guard let code = result.authorizationCode else {
            return .failure(BenchFailure("\(client): \(result.idpSdkError.map { "\($0)" } ?? "no code")"))
        }
        let exchange = await mc.receive(KSMSetAuthorisationCodeEvent(tenantId: Self.tenant, authenticationMode: .no, authorisationCode: code, clientId: client))
        phases?.note(.tokensStored)
        guard let exchanged = exchange as? KSMSetAuthorisationCodeResultEvent, exchanged.status == .kOk else {
            return .failure(BenchFailure("\(client): token exchange \((exchange as? KSMSetAuthorisationCodeResultEvent)?.status.description ?? "failed")"))
        }
        return .success(())
    }
}

/// The monotonic clock, in nanoseconds.
func uptimeNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// What one closed- or open-loop cell measured.
struct FlowCell {
    var histogram = LatencyHistogram()
    var completed = 0
    var errors = 0
    var firstError: String?
    /// Every flow the cell ran, in and out of its measurement window (a closed loop sets it).
    var flowsRun = 0

    mutating func merge(_ other: FlowCell) {
        histogram.merge(other.histogram)
        completed += other.completed
        errors += other.errors
        firstError = firstError ?? other.firstError
        flowsRun += other.flowsRun
    }
}

/// Closed loop: `inFlight` workers each run flows back to back. The measurement window opens once
/// the start-up burst has passed (at least `min(0.5 s, seconds / 4)` and every worker has finished
/// one flow, or after 30 s whatever happened) and lasts `seconds`. Throughput is the flows
/// *completed* in the window divided by its length, and the latencies are those flows' own, each
/// counted from its start: the steady-state estimator. (Counting only flows that also *started*
/// in the window drops those still running at its end, about `latency ÷ window` of them, and
/// keeps the short ones: at 4,096 in flight, where a flow takes a third of the window, it
/// understated throughput by a third and filled p25 with the few flows that had been fast.)
/// The CPU per flow is the process's CPU time in the window over the flows completed in it.
/// With `notingPhases`, every login notes its phases (``PhaseRecorder``) and those completed in
/// the window are split into parts. Each worker runs on a device of its own; with `spreadOver`,
/// the workers share that many of the rig's devices, each worker taking its share in turn
/// (``FlowRow/device(worker:flow:inFlight:devices:)``).
func closedLoop(_ rig: FlowRig, _ scenario: FlowRig.Scenario, inFlight: Int, seconds: Double, notingPhases: Bool = false, spreadOver users: Int? = nil)
    async -> (cell: FlowCell, seconds: Double, cpuUsPerFlow: Double, parts: LoginPartsRecord) {
    let window = MeasurementWindow(workers: inFlight, seconds: seconds, minimumWarmUp: min(0.5, seconds / 4))
    let cells = PerThreadCells()
    let notingPhases = notingPhases && scenario == .login
    let devices = min(users ?? inFlight, rig.devices.count)
    let (flowsRun, parts) = await withTaskGroup(of: (Int, LoginPartsRecord).self) { group in
        for worker in 0..<inFlight {
            group.addTask {
                var first = true
                var flows = 0
                var parts = LoginPartsRecord()
                while !window.hasEnded(at: uptimeNanoseconds()) {
                    let device = rig.devices[FlowRow.device(worker: worker, flow: flows, inFlight: inFlight, devices: devices)]
                    let outcome: Result<UInt64, BenchFailure>
                    var recorder: PhaseRecorder?
                    if notingPhases {
                        let noted = await rig.recordedLogin(device: device)
                        recorder = try? noted.get()
                        outcome = noted.map { $0.time(of: .started) ?? 0 }
                    } else {
                        outcome = await rig.run(scenario, device: device)
                    }
                    let finished = uptimeNanoseconds()
                    flows += 1
                    window.flowFinished(at: finished, firstOfWorker: first)
                    first = false
                    // A failure counts wherever it happens; a success only inside the window.
                    if case .success = outcome, !window.contains(finished) { continue }
                    if let recorder, !parts.record(recorder) {
                        cells.record(.failure(BenchFailure("a login did not pass every phase in order")), latency: 0)
                        continue
                    }
                    cells.record(outcome, latency: finished &- ((try? outcome.get()) ?? finished))
                }
                return (flows, parts)
            }
        }
        var total = (0, LoginPartsRecord())
        for await (flows, parts) in group {
            total.0 += flows
            total.1.merge(parts)
        }
        return total
    }
    var cell = cells.merged()
    cell.flowsRun = flowsRun
    return (cell, seconds, window.cpuMicroseconds / Double(max(1, cell.completed)), parts)
}

/// When a closed loop's measurement window opens and ends, shared by its workers: it opens at the
/// first flow end after the warm-up at which every worker has finished a flow, and the process's
/// CPU time is read at both ends.
final class MeasurementWindow: Sendable {
    private let workers: Int
    private let length: UInt64
    private let earliestOpen: UInt64
    private let latestOpen: UInt64
    private let warmedWorkers = Atomic<Int>(0)
    /// 0 until the window opens.
    private let opened = Atomic<UInt64>(0)
    private let cpuAtOpen = Atomic<Int>(0)
    private let cpuAtEnd = Atomic<Int>(-1)

    init(workers: Int, seconds: Double, minimumWarmUp: Double) {
        let now = uptimeNanoseconds()
        self.workers = workers
        length = UInt64(seconds * 1e9)
        earliestOpen = now + UInt64(minimumWarmUp * 1e9)
        latestOpen = now + 30_000_000_000
    }

    /// Called by a worker after each flow: opens the window when it is time, and reads the CPU
    /// time at its end.
    func flowFinished(at now: UInt64, firstOfWorker: Bool) {
        let warmed = firstOfWorker ? warmedWorkers.add(1, ordering: .relaxed).newValue : warmedWorkers.load(ordering: .relaxed)
        let start = opened.load(ordering: .acquiring)
        if start == 0 {
            guard now >= latestOpen || (now >= earliestOpen && warmed >= workers) else { return }
            let cpu = Int(processCPUMicroseconds())
            if opened.compareExchange(expected: 0, desired: now, ordering: .acquiringAndReleasing).exchanged {
                cpuAtOpen.store(cpu, ordering: .releasing)
            }
        } else if now >= start + length && cpuAtEnd.load(ordering: .relaxed) < 0 {
            _ = cpuAtEnd.compareExchange(expected: -1, desired: Int(processCPUMicroseconds()), ordering: .relaxed)
        }
    }

    /// Whether a flow that finished at `time` counts: inside the open window.
    func contains(_ time: UInt64) -> Bool {
        let start = opened.load(ordering: .acquiring)
        return start != 0 && time >= start && time < start + length
    }

    /// Whether workers should stop starting flows.
    func hasEnded(at now: UInt64) -> Bool {
        let start = opened.load(ordering: .acquiring)
        return start != 0 && now >= start + length
    }

    /// The process's CPU time from the window's opening to its end, in µs.
    var cpuMicroseconds: Double {
        let read = cpuAtEnd.load(ordering: .relaxed)
        let end = read < 0 ? Int(processCPUMicroseconds()) : read
        return Double(end - cpuAtOpen.load(ordering: .acquiring))
    }
}

/// The process's CPU time so far (user + system, all threads), in µs.
func processCPUMicroseconds() -> Double {
    var usage = rusage()
    let status = getrusage(RUSAGE_SELF.rawValue, &usage)
    precondition(status == 0, "getrusage failed: \(errno)")
    func micro(_ time: timeval) -> Double { Double(time.tv_sec) * 1e6 + Double(time.tv_usec) }
    return micro(usage.ru_utime) + micro(usage.ru_stime)
}

/// Open loop: flows start at a fixed rate whatever happens to earlier ones, and each latency is
/// counted from the flow's scheduled start, so a stall shows up in every flow it delayed (no
/// coordinated omission). A pacing OS thread starts the flows.
///
/// Each flow leases a device for its whole run: a MasterController runs one login at a time, so
/// when the loop falls behind its arrivals (more flows in flight than devices), a flow waits for
/// a device, and that wait is in its latency, rather than two logins sharing one device, the
/// first's token exchange failing (which stopped whole default runs on slow phases).
/// - Returns: the flows, and the seconds from the first arrival to the last flow's end (longer
///   than `seconds` when the loop fell behind, so completed ÷ elapsed is what it sustained).
func openLoop(_ rig: FlowRig, _ scenario: FlowRig.Scenario, rate: Double, seconds: Double) async -> (cell: FlowCell, elapsed: Double) {
    let cells = PerThreadCells()
    let arrivals = max(1, Int(rate * seconds))
    let interval = 1e9 / rate
    let finished = AtomicCounter()
    let devices = LeasePool(rig.devices)
    let start = uptimeNanoseconds()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let pacer = Thread {
            for arrival in 0..<arrivals {
                let scheduled = start + UInt64(Double(arrival) * interval)
                let now = uptimeNanoseconds()
                if scheduled > now + 50_000 { usleep(UInt32((scheduled - now) / 1_000)) }
                Task {
                    let outcome: Result<UInt64, BenchFailure>
                    do {
                        let device = try await devices.lease()
                        outcome = await rig.run(scenario, device: device)
                        devices.giveBack(device)
                    } catch {
                        outcome = .failure(BenchFailure("no device leased: \(error)"))
                    }
                    cells.record(outcome, latency: uptimeNanoseconds() &- scheduled)
                    if finished.value.add(1, ordering: .acquiringAndReleasing).newValue == arrivals { continuation.resume() }
                }
            }
        }
        pacer.start()
    }
    return (cells.merged(), Double(uptimeNanoseconds() - start) / 1e9)
}

/// One ``FlowCell`` per OS thread that records: a thread finds its own through thread-specific
/// storage and records without a lock; ``merged()`` adds them up once every flow is done.
final class PerThreadCells: Sendable {
    private static let nextId = AtomicCounter()
    private let id = PerThreadCells.nextId.value.wrappingAdd(1, ordering: .relaxed).newValue
    private let registered = LockedValue<[CellBox]>([])

    /// A thread's cell. Sound as `@unchecked Sendable`: only the thread that registered it writes
    /// it, and it is read by ``merged()`` only after every recording flow has completed, which the
    /// task group (closed loop) or the completion counter's acquire-release (open loop) orders
    /// after the last write.
    final class CellBox: @unchecked Sendable {
        var cell = FlowCell()
    }

    /// Records one finished flow: its latency on success, the failure otherwise.
    func record(_ outcome: Result<UInt64, BenchFailure>, latency: UInt64) {
        let box = ThreadCellSlots.current.box(for: id) { box in registered.withLock { $0.append(box) } }
        switch outcome {
        case .success:
            box.cell.histogram.record(latency)
            box.cell.completed += 1
        case .failure(let failure):
            box.cell.errors += 1
            box.cell.firstError = box.cell.firstError ?? failure.description
        }
    }

    func merged() -> FlowCell {
        var merged = FlowCell()
        for box in registered.withLock({ $0 }) { merged.merge(box.cell) }
        return merged
    }
}

/// The calling thread's cells, by recorder id, behind one process-wide pthread key.
private final class ThreadCellSlots {
    private var boxes: [Int: PerThreadCells.CellBox] = [:]

    func box(for id: Int, register: (PerThreadCells.CellBox) -> Void) -> PerThreadCells.CellBox {
        if let box = boxes[id] { return box }
        let box = PerThreadCells.CellBox()
        boxes[id] = box
        register(box)
        return box
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<ThreadCellSlots>.fromOpaque(pointer).release() }
        }
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// Created on a thread's first recording and released when the thread exits.
    static var current: ThreadCellSlots {
        if let pointer = pthread_getspecific(key) { return Unmanaged<ThreadCellSlots>.fromOpaque(pointer).takeUnretainedValue() }
        let slots = ThreadCellSlots()
        pthread_setspecific(key, Unmanaged.passRetained(slots).toOpaque())
        return slots
    }
}

/// Runs the flows section: the closed loop for each scenario and in-flight level, then the open
/// loop.
///
/// Every closed-loop cell is measured in `options.rounds` rounds of `secondsPerFlowCell ÷ rounds`,
/// the rounds interleaved over all cells, so a phase of the shared host that slows it for a few
/// seconds lands on every level instead of on one (the collapse ratio compares levels). A row
/// reports the median round's throughput and CPU per flow and the latencies of all its rounds.
/// Right before each round the `Mutex` floor is measured on one thread for 20 ms; the row's
/// `floor_ns` is the median of its rounds' floors, the unit its figures are judged in. Before each
/// round at 1 in flight, 200 hand-backs are measured (``measureHandBack(samples:before:after:)``,
/// about 30 ms); the row's `hand_back_us` is the median of the rounds' p50s. Before each round of
/// logins at 1 in flight, a login's requests are sent to the `IdpServer` directly for 20 ms on one
/// thread; the row's `idp_us` is the median of the rounds' µs per login.
///
/// A login cell runs one device (a user) per flow in flight, so the deepest level's logins also
/// meet the most users. After each round's cells, every login level between 1 and the deepest
/// runs again over the deepest level's users (``FlowRow/scenario(_:spreadOver:)``): the same
/// users at every depth.
func runFlowsSection(_ options: Options, rig: FlowRig, progress: Progress) async throws(BenchFailure) -> [FlowRow] {
    let levels = options.inFlight.sorted()
    let cells = FlowRig.Scenario.allCases.flatMap { scenario in levels.map { (scenario: scenario, level: $0) } }
    let rounds = max(1, options.rounds)
    let window = options.secondsPerFlowCell / Double(rounds)
    let floorOperation = floors(HotPathData(userCount: 1_000, seed: options.seed)).first { $0.name == idpFloorName }!.makeOperation(0)
    func floorBeside() async -> Double {
        await OSThreads.run { race(threads: 1, seconds: 0.02, makeOperation: { _ in floorOperation }).nanosecondsPerOperation }
    }
    // The IDP's own share of a lone login: its requests handled by the IdpServer directly.
    let stepRig = try IdpStepRig(users: 64)
    guard stepRig.loginWithTokens(user: 0) == 200 else { throw BenchFailure("flows: a login's requests sent to the IDP directly did not end in tokens") }
    var measured = Array(repeating: [CellRound](), count: cells.count)
    // The lone logins' phases: the 1-in-flight login cell's logins note them.
    var loginParts = LoginPartsRecord()
    let deepest = levels.last ?? 1
    let spreadLevels = levels.filter { $0 > 1 && $0 < deepest }
    var spread = Array(repeating: [CellRound](), count: spreadLevels.count)
    /// One round of a closed-loop cell, with what was measured beside it; the lone logins' phases
    /// go into `loginParts`.
    func measureRound(_ scenario: FlowRig.Scenario, inFlight: Int, spreadOver users: Int? = nil, floorNs: Double, handBackUs: Double? = nil,
                      idpUs: Double? = nil, what: String) async throws(BenchFailure) -> CellRound {
        let (flows, seconds, cpu, parts) = await closedLoop(rig, scenario, inFlight: inFlight, seconds: window, notingPhases: inFlight == 1, spreadOver: users)
        loginParts.merge(parts)
        try check(flows, what)
        return CellRound(cell: flows, throughput: Double(flows.completed) / seconds, cpu: cpu, floorNs: floorNs, handBackUs: handBackUs, idpUs: idpUs)
    }
    for round in 0..<rounds {
        for (index, cell) in cells.enumerated() {
            progress.report("flows: \(cell.scenario.rawValue), closed loop, \(cell.level) in flight, round \(round + 1)/\(rounds)", force: true)
            let floorNs = await floorBeside()
            // A lone flow's hand-back, measured in a child task as the closed loop's workers are.
            let handBackUs: Double? = cell.level == 1 ? await withTaskGroup(of: Double.self) { group in
                group.addTask { Double(await measureHandBack(samples: 200).value(atPercentile: 50)) / 1_000 }
                return await group.next() ?? 0
            } : nil
            // Each login timed alone and the p50 taken, as the cell's latency is: a mean over a
            // window would charge the IDP for every time the shared machine took the core away.
            let idpUs: Double? = cell.level == 1 && cell.scenario == .login ? await OSThreads.run {
                var histogram = LatencyHistogram()
                for call in 0..<200 {
                    let start = uptimeNanoseconds()
                    blackHole(stepRig.loginWithTokens(user: call))
                    histogram.record(uptimeNanoseconds() &- start)
                }
                return Double(histogram.value(atPercentile: 50)) / 1_000
            } : nil
            measured[index].append(try await measureRound(cell.scenario, inFlight: cell.level, floorNs: floorNs, handBackUs: handBackUs, idpUs: idpUs,
                                                          what: "\(cell.scenario.rawValue) at \(cell.level) in flight"))
        }
        for (index, level) in spreadLevels.enumerated() {
            progress.report("flows: login, closed loop, \(level) in flight over \(deepest) users, round \(round + 1)/\(rounds)", force: true)
            spread[index].append(try await measureRound(.login, inFlight: level, spreadOver: deepest, floorNs: await floorBeside(),
                                                        what: "login at \(level) in flight over \(deepest) users"))
        }
    }
    var rows: [FlowRow] = []
    for (index, cell) in cells.enumerated() {
        rows.append(closedLoopRow(cell.scenario.rawValue, inFlight: cell.level, measured[index],
                                  loginParts: cell.level == 1 && cell.scenario == .login ? loginParts.figures : nil))
    }
    for (index, level) in spreadLevels.enumerated() {
        rows.append(closedLoopRow(FlowRow.scenario(FlowRig.Scenario.login.rawValue, spreadOver: deepest), inFlight: level, spread[index], loginParts: nil))
    }
    // Open loop at a rate the machine can sustain: half the lowest closed-loop login throughput
    // with more than one flow in flight (an open loop runs few flows at once, and few flows at
    // once pay a thread wake-up per hand-off that many do not), unless --rate says otherwise.
    let loginRows = rows.filter { $0.scenario == FlowRig.Scenario.login.rawValue }
    let reference = loginRows.filter { $0.inFlight > 1 }.min { $0.throughputPerS < $1.throughputPerS } ?? loginRows.first
    let rate = options.openLoopRate ?? max(1, (reference?.throughputPerS ?? 100) / 2)
    progress.report("flows: login, open loop at \(Int(rate))/s", force: true)
    let (cell, elapsed) = await openLoop(rig, .login, rate: rate, seconds: options.secondsPerFlowCell)
    try check(cell, "open-loop logins at \(Int(rate))/s")
    let p50 = cell.histogram.value(atPercentile: 50)
    rows.append(FlowRow(scenario: FlowRig.Scenario.login.rawValue, mode: "open", inFlight: Int((rate * Double(p50) / 1e9).rounded(.up)),
                        offeredPerS: rate, throughputPerS: Double(cell.completed) / max(options.secondsPerFlowCell, elapsed),
                        completed: cell.completed, errors: cell.errors, latencyUs: cell.histogram.percentiles()))
    return rows
}

/// One round of a closed-loop cell: what it measured and what was measured beside it.
private struct CellRound {
    var cell: FlowCell
    var throughput: Double
    var cpu: Double
    var floorNs: Double
    var handBackUs: Double?
    var idpUs: Double?
}

/// A closed-loop cell's row from its rounds: the median round's throughput, CPU per flow and
/// floor, the latencies of every round, and the medians of what was measured beside it.
private func closedLoopRow(_ scenario: String, inFlight: Int, _ runs: [CellRound], loginParts: LoginPartsFigures?) -> FlowRow {
    var merged = FlowCell()
    for run in runs { merged.merge(run.cell) }
    let median = runs.median(by: \.throughput)
    return FlowRow(scenario: scenario, mode: "closed", inFlight: inFlight, offeredPerS: nil,
                   throughputPerS: median.throughput, completed: merged.completed, errors: merged.errors,
                   latencyUs: merged.histogram.percentiles(), cpuUsPerFlow: median.cpu, floorNs: runs.median(by: \.floorNs).floorNs,
                   handBackUs: runs.contains { $0.handBackUs != nil } ? runs.median { $0.handBackUs ?? 0 }.handBackUs : nil,
                   idpUs: runs.contains { $0.idpUs != nil } ? runs.median { $0.idpUs ?? 0 }.idpUs : nil,
                   loginParts: loginParts)
}

/// A cell with failed flows makes the figures meaningless: stop with the first error.
private func check(_ cell: FlowCell, _ what: String) throws(BenchFailure) {
    if cell.errors > 0 { throw BenchFailure("\(cell.errors) flows failed (\(what)); first: \(cell.firstError ?? "-")") }
    if cell.completed == 0 { throw BenchFailure("no flow completed (\(what)); use a longer --flow-seconds") }
}

/// Runs the contention section: closed-loop logins at the highest in-flight level with every
/// labelled lock profiled: contention, hold times, and the kernel's preemptions of the process's
/// threads over the same run (``PreemptionRecord``); right after it, with nothing else running,
/// the machine's own pauses of one spinning thread per core (``MachinePauses``: a second, a
/// quarter of one in a quick run). The probe runs after the logins, not before: a second of every
/// core spinning can leave a virtual machine slower for a while, which the logins' hold times
/// would then show.
func runContentionSection(_ options: Options, rig: FlowRig, progress: Progress) async throws(BenchFailure)
    -> (rows: [ContentionRow], preemption: PreemptionRecord, pauses: MachinePauses?, heavyWorkNoted: [String: UInt64]) {
    let level = options.inFlight.max() ?? 256
    progress.report("contention: logins, \(level) in flight, locks profiled", force: true)
    LockProfiler.start()
    let before = ProcessUsage.now()
    let (cell, _, _, _) = await closedLoop(rig, .login, inFlight: level, seconds: options.secondsPerFlowCell)
    let after = ProcessUsage.now()
    let profile = LockProfiler.stopReport()
    let figures = profile.locks
    try check(cell, "contention run at \(level) in flight")
    progress.report("contention: the machine's own pauses, one spinning thread per core", force: true)
    let pauses = await MachinePauseProbe.measure(threads: Processors.available, seconds: options.quick ? 0.25 : 1)
    // Every login the loop ran took its locks while the profiler was on, in the window or not.
    let logins = Double(max(1, cell.flowsRun))
    let longHold = UInt64(HoldTimeTargets.maxUs * 1e3)
    let rows = figures.map {
        ContentionRow(lock: $0.label, acquisitions: $0.acquisitions, contended: $0.contended, contendedShare: $0.contendedShare,
                      waitMs: Double($0.waitNanoseconds) / 1e6, perLogin: Double($0.acquisitions) / logins,
                      holdP50Us: Double($0.holds.p50Nanoseconds) / 1e3, holdP99Us: Double($0.holds.p99Nanoseconds) / 1e3,
                      holdMaxUs: Double($0.holds.maxNanoseconds) / 1e3, longHolds: $0.holds.count(atLeast: longHold),
                      shortHoldMs: Double($0.holds.totalNanoseconds(below: longHold)) / 1e6,
                      holdMaxOnCoreUs: $0.keptCoreMaxNanoseconds.map { Double($0) / 1e3 }, holdsLeftCore: $0.holdsThatLeftCore?.count,
                      longHoldsOnCore: $0.holdsThatLeftCore.map { [holds = $0.holds] left in holds.count(atLeast: longHold) &- left.count(atLeast: longHold) },
                      heavyWork: $0.heavyWork, heavyWorkKinds: $0.heavyWorkKinds.sorted().map(\.description))
    }
    let preemption = PreemptionRecord(rows: rows, involuntarySwitches: after.involuntarySwitches &- before.involuntarySwitches,
                                      cpuMs: Double(after.cpuNanoseconds &- before.cpuNanoseconds) / 1e6)
    let noted = Dictionary(uniqueKeysWithValues: profile.heavyWorkNoted.map { ($0.key.description, $0.value) })
    return (rows, preemption, pauses, noted)
}

/// The process's CPU time and involuntary context switches so far (`getrusage`, every thread).
struct ProcessUsage {
    var cpuNanoseconds: UInt64
    var involuntarySwitches: UInt64

    static func now() -> ProcessUsage {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func nanoseconds(_ time: timeval) -> UInt64 { UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_usec) &* 1_000 }
        return ProcessUsage(cpuNanoseconds: nanoseconds(usage.ru_utime) &+ nanoseconds(usage.ru_stime), involuntarySwitches: UInt64(usage.ru_nivcsw))
    }
}
