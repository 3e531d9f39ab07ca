import BenchSupport
import CredentialProviders
import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import Synchronization

/// Holds every request until it is opened, then passes it to `base`: lets the memory probe park
/// all its flows at the IDP at once before the simulated latency starts.
final class GateTransport: Transport {
    private struct Parked {
        var isOpen = false
        var requests: [(HTTPRequest, @Sendable (Result<HTTPResponse, TransportError>) -> Void)] = []
    }

    private let base: any Transport
    private let parked = LockedValue(Parked())

    init(_ base: any Transport) { self.base = base }

    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        let passThrough = parked.withLock { parked -> Bool in
            if parked.isOpen { return true }
            parked.requests.append((request, completion))
            return false
        }
        if passThrough { base.send(request, completion: completion) }
    }

    /// Requests waiting at the gate.
    var waiting: Int { parked.withLock { $0.requests.count } }

    /// Holds requests again from now on.
    func close() { parked.withLock { $0.isOpen = false } }

    /// Passes every waiting request on, and later ones straight through.
    func open() {
        let waiting = parked.withLock { parked in
            parked.isOpen = true
            defer { parked.requests = [] }
            return parked.requests
        }
        for (request, completion) in waiting { base.send(request, completion: completion) }
    }
}

/// The memory probe, run in a child process (`idp-bench memory-probe FLOWS LATENCY_MS`) so that
/// the heap the other sections grew does not hide or inflate what the flows take.
///
/// Starts `flows` logins through `getAuthorizationCode` whose first request parks at a gate in
/// front of the IDP; when all are parked, it reads the resident memory and the OS threads, then
/// opens the gate, and every request takes the simulated latency. Bytes per flow is the growth of
/// resident memory over a baseline taken after a warm-up, divided by the flows.
func memoryProbe(flows: Int, latency: Duration) async throws -> MemoryRow {
    let tenant = "bench"
    let idp = IdpServer()
    try idp.addTenant(tenant)
    let store = CredentialStore()
    let users = 1_000
    for index in 0..<users {
        try idp.addUser("user-\(index)", tenant: tenant, password: "pw-\(index)-secret")
        store.set([IdpSdkConstants.USERNAME: "user-\(index)", IdpSdkConstants.PASSWORD: "pw-\(index)-secret"], userId: "user-\(index)", tenantId: tenant)
    }
    let gate = GateTransport(InProcessTransport(server: idp, latency: latency))
    let configuration = IdpSdkService.Configuration()
    let sdk = IdpSdkService(tenantId: tenant, idpUrl: "https://idp-memory.invalid", certificateChain: Data(), shouldHashPin: false,
                            configuration: configuration, transport: gate)
    let ast = AstClientDataInfo("bench-device-client-data", String(repeating: "0", count: 32), PKCE.challenge(for: PKCE.makeVerifier()), "S256")

    let completed = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    func start(_ count: Int) {
        for index in 0..<count {
            sdk.getAuthorizationCode(withAstClientData: ast, clientId: "KssIdpLogin", interactionInterface: store,
                                     userId: "user-\(index % users)", traceParent: nil) { result in
                if result.authorizationCode == nil { failed.add(1, ordering: .relaxed) }
                completed.add(1, ordering: .relaxed)
            }
        }
    }
    func waitUntil(_ what: String, _ condition: () -> Bool) async throws(BenchFailure) {
        let deadline = ContinuousClock.now + .seconds(300)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw BenchFailure("memory probe: gave up waiting until \(what)") }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    // Warm-up through the open gate, so the worker pool, caches and the allocator are in their
    // working state before the baseline.
    let warmUp = 1_000
    gate.open()
    start(warmUp)
    try await waitUntil("the warm-up flows completed") { completed.load(ordering: .relaxed) == warmUp }
    gate.close()
    let baseline = residentBytes() ?? 0

    start(flows)
    try await waitUntil("all flows parked") { gate.waiting == flows }
    let parked = residentBytes() ?? 0
    let threads = osThreadCount() ?? 0

    gate.open()
    try await waitUntil("the parked flows completed") { completed.load(ordering: .relaxed) == warmUp + flows }
    let failures = failed.load(ordering: .relaxed)
    if failures > 0 { throw BenchFailure("memory probe: \(failures) flows failed") }
    return MemoryRow(parkedFlows: flows, bytesPerFlow: Double(Int64(parked) - Int64(baseline)) / Double(flows), threads: threads,
                     poolLimit: configuration.maximumWorkerThreads, rssBeforeBytes: baseline, rssParkedBytes: parked)
}

/// Runs the memory probe in a child process and reads its row.
func runMemorySection(_ options: Options, progress: Progress) async throws(BenchFailure) -> MemoryRow {
    progress.report("memory: \(options.parkedFlows) flows parked in a child process", force: true)
    return try await runChild(["memory-probe", String(options.parkedFlows), String(options.parkedLatencyMilliseconds)], as: MemoryRow.self, what: "memory probe")
}
