// The vendor pages' MC Swift that Swift 6 accepts — Start/Restart (`KSMStartEventEx`,
// `KSMRestartEventEx`), tracing, logout, stay logged in — as printed in a Swift 6 client target
// (Tests/DocumentSamples/VendorMcPagesSwift6) whose app objects live on the main actor.
import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpServer
import McSdk
@testable import Seed001ActivationSample
@testable import VendorMcPagesSwift6Sample
import Testing

@MainActor
@Suite("The vendor pages' MC samples in Swift 6, as printed", .serialized)
struct VendorMcPageTests {
    let idp = SampleIDP()
    let app = SampleApp()

    init() { MasterControllerAdapter.sharedInstance.masterController = idp.masterController() }

    var masterController: MasterController { MasterControllerAdapter.sharedInstance.masterController! }

    func started() async -> ActionResult {
        await withCheckedContinuation { continuation in
            app.startMaster(startRequest: StartRequest(appName: "Banking", appVersion: "2.1.7")) { continuation.resume(returning: $0) }
        }
    }

    /// uma activated and logged in by the documents' activation sample.
    func activateUma() async {
        await Seed001ActivationSample.IdpHandler(
            idpUrl: idp.url, tenantId: idp.tenant, clientId: "KssIdpEnrollment", masterController: masterController,
            userId: nil, username: "uma", password: "pw-uma-1", activationCode: idp.pendingUser("uma")).activate()
    }

    @Test("start: KSMStartEventEx with the app's configuration and trace context ends OK; GetInformation shows the configuration")
    func start() async throws {
        let result = await started()
        #expect(result.success && result.error == nil)
        let event = try #require(result.event as? KSMStartResultEvent)
        #expect(event.status == .KSMOK && event.sdkState == .ACTIVATION_REQUIRED)
        #expect(event.traceContext?.traceParent == OtelTraceHandler.startTraceParent)
        let info = await masterController.receive(KSMGetInformationEvent()) as! KSMGetInformationResultEvent
        #expect(info.ssmsAppConfiguration?.name == "Banking" && info.ssmsAppConfiguration?.version.ssmsVersionString == "2.1.7")
        #expect(AppRecord.shared.all.contains("complete StartEventSpan"))
    }

    @Test("restart: KSMRestartEventEx ends OK; its traceparent (the sample passes a UUID) cannot be parsed, so the MC started a new trace")
    func restart() async throws {
        _ = await started()
        let result = await withCheckedContinuation { continuation in app.restartMaster { continuation.resume(returning: $0) } }
        #expect(result.success)
        let event = try #require(result.event as? KSMRestartResultEvent)
        let trace = try #require(event.traceContext)
        #expect(trace.traceParent != GlobalConstats.uuid && TraceParent.traceId(of: trace.traceParent) != nil)
        #expect(trace.traceState == TraceParent.restartedTraceState)
    }

    @Test("tracing: the configuration and enabling events need no completion; then every trace the MC starts is sampled")
    func tracing() async throws {
        app.configureOpenCensusTracing(openCensusConfig: OpenCensusConfig(exporterUrl: "https://zipkin.example.test", userName: "u", password: "p", cert: Data()))
        _ = await started()
        app.enableOpenCensusTracing(enable: true)
        // The enabling event is fire-and-forget: poll until twenty new traces in a row are sampled
        var sampledOnly = false
        for _ in 0..<2_000 where !sampledOnly {
            sampledOnly = true
            for _ in 0..<20 where await masterController.receive(KSMGetInformationEvent()).traceContext?.traceParent.hasSuffix("-01") != true {
                sampledOnly = false
            }
            if !sampledOnly { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(sampledOnly)
    }

    @Test("logout: triggerClearIAMTokenCache answers with the result event; the next OfflineLogin finds no tokens")
    func logout() async throws {
        _ = await started()
        await activateUma()
        let uma = KsUserIdentifier(tenantId: "demo", userId: "uma")
        let event = await withCheckedContinuation { continuation in
            app.triggerClearIAMTokenCache(useridentifier: uma) { continuation.resume(returning: $0) }
        }
        #expect((event as? KSMClearIamTokenCacheResultEvent)?.status == .KSMOK)
        _ = await masterController.receive(KSMRestartEvent())
        #expect((await masterController.receive(KSMOfflineLoginEvent(userIdentifier: uma)) as! KSMOfflineLoginResultEvent).status == .KSMNO_TOKEN_DATA_AVAILABLE)
    }

    @Test("stay logged in: performLoginOffline succeeds and builds a KSMLoginResultEvent for the GetInformation's loggedInUser")
    func stayLoggedIn() async throws {
        _ = await started()
        await activateUma()
        _ = await masterController.receive(KSMRestartEvent())
        let result = await withCheckedContinuation { continuation in
            app.performLoginOffline(loginRequest: LoginOfflineRequest(tenant: "demo", userId: "uma")) { continuation.resume(returning: $0) }
        }
        #expect(result.success && result.title == "Offline Login")
        let login = try #require(result.event as? KSMLoginResultEvent)
        #expect(login.status == .KSMOK && login.userIdentifier == KsUserIdentifier(tenantId: "demo", userId: "uma"))
        #expect(AppRecord.shared.all.contains("log Offline Login true"))
    }
}

