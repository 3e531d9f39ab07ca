import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import McSdk
import Synchronization
import Testing
import StackTestSupport
import TestSupport

/// The Kotlin samples' shape: one provider object shared by every flow, answering by field id.
/// It tells flows apart by their trace id; its table is immutable, so it needs no lock.
private final class CompanionProvider: IdpSdkInteractionInterface, Sendable {
    struct Answers: Sendable { let username: String; let password: String; let activationCode: String }
    let byTraceId: [String: Answers]
    let misplacedCalls = Atomic<Int>(0)
    let calls = Atomic<Int>(0)

    init(_ byTraceId: [String: Answers]) { self.byTraceId = byTraceId }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        calls.add(1, ordering: .relaxed)
        if !IdpSdkService.isSDKThread || Thread.isMainThread || withUnsafeCurrentTask(body: { $0 != nil }) {
            misplacedCalls.add(1, ordering: .relaxed)
        }
        guard let traceParent = interactionData.traceParent, let answers = byTraceId[String(traceParent.dropFirst(3).prefix(32))] else {
            return .init(error: IdpSdkError("CompanionProvider", 1, "no answers for this flow"))
        }
        var credentials: [String: String] = [:]
        for fieldId in interactionData.inputFieldIds {
            switch fieldId {
            case IdpSdkConstants.USERNAME: credentials[fieldId] = answers.username
            case IdpSdkConstants.PASSWORD: credentials[fieldId] = answers.password
            case IdpSdkConstants.ACTIVATION_CODE: credentials[fieldId] = answers.activationCode
            default: break
            }
        }
        return .init(credentials: credentials)
    }
}

@Suite("Many flows at once", .heavy)
struct ConcurrentFlowTests {
    struct Device: Sendable {
        let user: String
        let masterController: MasterController
        let activationTrace: TraceParent
        let loginTrace: TraceParent
    }

    struct Outcome: Sendable {
        let device: Int
        let activation: KSMSetAuthorisationCodeResultEvent
        let login: KSMSetAuthorisationCodeResultEvent?
    }

    @Test("activation+login flows of several devices for each of 100 users, all at once, share one provider, and each flow gets its own user's code")
    func flowsOverHundredUsers() async throws {
        // Given 100 users, each to be activated on 3 devices (10 in the full suite; one
        // MasterController each), and one shared provider instance, over an IDP with 2 ms of
        // latency per request
        let devicesPerUser = SuiteSize.pick(3, full: 10)
        let idp = TestIDP(latency: .milliseconds(2))
        let sdk = idp.sdk()
        var devices: [Device] = []
        var answers: [String: CompanionProvider.Answers] = [:]
        for u in 0..<100 {
            let user = "user\(u)"
            try idp.server.addUser(user, tenant: idp.tenant)
            for _ in 0..<devicesPerUser {
                let code = try idp.server.issueActivationCode(for: user, tenant: idp.tenant)
                let device = Device(user: user, masterController: idp.masterController(), activationTrace: .random(), loginTrace: .random())
                let answer = CompanionProvider.Answers(username: user, password: "pw-\(user)", activationCode: code)
                answers[device.activationTrace.traceId] = answer
                answers[device.loginTrace.traceId] = answer
                devices.append(device)
            }
        }
        let provider = CompanionProvider(answers)

        // When every device activates and then logs in, all at once
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for (index, device) in devices.enumerated() {
                group.addTask {
                    let mc = device.masterController
                    _ = await mc.receive(KSMStartEvent())
                    let activation = await Self.threeSteps(mc, sdk: sdk, tenant: idp.tenant, client: "KssIdpEnrollment", provider: provider, userId: nil, trace: device.activationTrace)
                    guard activation.status == .kOk else { return Outcome(device: index, activation: activation, login: nil) }
                    let start = await mc.receive(KSMStartEvent()) as! KSMStartResultEvent
                    let login = await Self.threeSteps(mc, sdk: sdk, tenant: idp.tenant, client: "KssIdpLogin", provider: provider, userId: start.userList.first?.userId, trace: device.loginTrace)
                    return Outcome(device: index, activation: activation, login: login)
                }
            }
            var all: [Outcome] = []
            for await outcome in group { all.append(outcome) }
            return all
        }

        // Then every flow ended OK, for its own user
        #expect(outcomes.count == 100 * devicesPerUser)
        for outcome in outcomes {
            let user = KsUserIdentifier(tenantId: "demo", userId: devices[outcome.device].user)
            #expect(outcome.activation.status == .kOk, "device \(outcome.device) activation: \(outcome.activation.errorDescription)")
            #expect(outcome.activation.userIdentifier == user)
            #expect(outcome.login?.status == .kOk, "device \(outcome.device) login: \(outcome.login?.errorDescription ?? "not run")")
            #expect(outcome.login?.userIdentifier == user)
        }
        // and the IDP issued each flow's code to the user of that flow's trace
        let issued = Dictionary(grouping: idp.server.auditLog().filter { $0.event == .codeIssued }, by: { $0.traceId ?? "" })
        for device in devices {
            #expect(issued[device.activationTrace.traceId]?.map(\.userId) == [device.user])
            #expect(issued[device.loginTrace.traceId]?.map(\.userId) == [device.user])
        }
        // and the provider ran only on SDK threads: 3 enrollment steps + 1 login step per device
        #expect(provider.calls.load(ordering: .relaxed) == 4 * 100 * devicesPerUser)
        #expect(provider.misplacedCalls.load(ordering: .relaxed) == 0)
        #expect(sdk.flowsInFlight == 0)
        #expect(idp.server.user("user7", tenant: "demo")?.astClientIds.count == devicesPerUser)
    }

    static func threeSteps(_ mc: MasterController, sdk: IdpSdkService, tenant: String, client: String, provider: any IdpSdkInteractionInterface & Sendable, userId: String?, trace: TraceParent) async -> KSMSetAuthorisationCodeResultEvent {
        let ast = await mc.receive(KSMGetAstClientDataEvent(tenantId: tenant)) as! KSMGetAstClientDataResultEvent
        let result = await sdk.getAuthorizationCode(withAstClientData: AstClientDataInfo(astClientData: ast), clientId: client,
                                                    interactionInterface: provider, userId: userId, traceParent: trace.description)
        return await mc.receive(KSMSetAuthorisationCodeEvent(tenantId: tenant, authenticationMode: .no,
                                                             authorisationCode: result.authorizationCode ?? "", clientId: client)) as! KSMSetAuthorisationCodeResultEvent
    }

    @Test("flows started from 16 OS threads through the completion handler each complete exactly once with their own user's code")
    func completionHandlersFromOSThreads() async throws {
        // Given 40 active users and 16 caller threads, each starting 10 login flows, one after the
        // other (25 in the full suite)
        let idp = TestIDP(latency: .milliseconds(1))
        let sdk = idp.sdk()
        for u in 0..<40 { idp.activeUser("u\(u)", password: "secret-\(u)") }
        let provider = ClosureProvider { data in
            let user = data.userId ?? ""
            var credentials: [String: String] = [:]
            for id in data.inputFieldIds { credentials[id] = id == "username" ? user : "secret-\(user.dropFirst())" }
            return .init(credentials: credentials)
        }
        let counter = CompletionCounter()
        let wrongUser = Atomic<Int>(0)
        let failures = LockedValue<[String]>([])
        let threads = 16, flowsPerThread = SuiteSize.pick(10, full: 25)

        // When the threads start their flows and wait for each completion
        await onOSThreads(threads) { t in
            for f in 0..<flowsPerThread {
                let user = "u\((t * flowsPerThread + f) % 40)"
                let trace = TraceParent.random()
                let finished = Gate()
                sdk.getAuthorizationCode(withAstClientData: TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                         interactionInterface: provider, userId: user, traceParent: trace.description) { result in
                    counter.record(result)
                    if let error = result.idpSdkError { failures.withLock { $0.append(error.description) } }
                    if idp.server.auditLog(traceId: trace.traceId).first(where: { $0.event == .codeIssued })?.userId != user {
                        wrongUser.add(1, ordering: .relaxed)
                    }
                    finished.open()
                }
                guard finished.wait(timeout: .seconds(600)) else {
                    failures.withLock { $0.append("\(user)'s flow did not complete within 600 s") }
                    return
                }
            }
        }

        // Then all completed once, each with a code for its own user
        #expect(failures.withLock { $0 } == [])
        #expect(counter.completions == threads * flowsPerThread)
        #expect(counter.flowsCompletedMoreThanOnce == 0)
        #expect(wrongUser.load(ordering: .relaxed) == 0)
    }
}

@Suite("Waiting on the IDP", .heavy)
struct ParkingTests {
    /// Holds every request, as a slow IDP would, until released; then hands them to the IDP.
    final class HoldingTransport: Transport {
        let inner: any Transport
        let held = LockedValue<[(HTTPRequest, @Sendable (Result<HTTPResponse, TransportError>) -> Void)]>([])
        let holding = LockedValue(true)

        init(inner: any Transport) { self.inner = inner }

        func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
            let hold = holding.withLock { $0 }
            if hold { held.withLock { $0.append((request, completion)) } } else { inner.send(request, completion: completion) }
        }

        func release() {
            holding.withLock { $0 = false }
            for (request, completion) in held.withLock({ $0 }) { inner.send(request, completion: completion) }
        }
    }

    @Test("a thousand flows waiting on the IDP park as state, not threads")
    func flowsParkWithoutThreads() async throws {
        // Given 1,000 login flows (2,000 in the full suite) started at once against an IDP that
        // holds every request
        let flows = SuiteSize.pick(1_000, full: 2_000)
        let idp = TestIDP()
        for u in 0..<20 { idp.activeUser("p\(u)", password: "pw-p\(u)") }
        let transport = HoldingTransport(inner: InProcessTransport(server: idp.server))
        let sdk = IdpSdkService(tenantId: idp.tenant, idpUrl: idp.url, certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(clock: idp.clock), transport: transport)
        let provider = ClosureProvider { data in
            .init(credentials: ["username": data.userId!, "password": "pw-\(data.userId!)"])
        }
        let results = LockedValue<[IdpSdkResult]>([])
        let allDone = Gate()
        // Started from an OS thread: a thousand starts take seconds under ThreadSanitizer.
        _ = await OSThreads.run {
            for n in 0..<flows {
                sdk.getAuthorizationCode(withAstClientData: TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                         interactionInterface: provider, userId: "p\(n % 20)", traceParent: nil) { result in
                    if results.withLock({ $0.append(result); return $0.count }) == flows { allDone.open() }
                }
            }
            return true
        }

        // When they all wait for the IDP's first answer
        #expect(sdk.flowsInFlight == flows)
        #expect(transport.held.withLock { $0.count } == flows)

        // Then no SDK thread is held, the SDK never grew toward a thread per flow (its own count:
        // the process's count moved with other tests' threads, 1,000 at once in the lockout
        // test), and once the IDP answers every flow completes once
        let threads = sdk.workerThreads
        #expect(threads.current == 0)
        #expect(threads.peak < 200, "the SDK had \(threads.peak) threads at once while \(flows) flows started")
        transport.release()
        #expect(await OSThreads.run { allDone.wait(timeout: stuckRunDeadline) })
        let finished = results.withLock { $0 }
        #expect(finished.count == flows)
        #expect(finished.allSatisfy { !$0.hasError() })
        #expect(Set(finished.compactMap(\.flowId)).count == flows)
    }
}
