import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
@testable import McSdk
import Synchronization
import Testing
import TestSupport

/// Collects what the MC sends its listeners.
final class RecordingListener: KSMEventListener {
    private let events = LockedValue<[any KsEvent]>([])
    func executeEvent(_ event: any KsEvent) { events.withLock { $0.append(event) } }
    var received: [any KsEvent] { events.withLock { $0 } }
    var names: [String] { received.map { String(describing: type(of: $0)) } }
}

@Suite("The documents' MC events")
struct DocumentedEventTests {
    @Test("a trace context set on an event goes with its IDP requests and comes back on its result; an unparseable one starts a new trace")
    func traceContextTravels() async throws {
        // Given a started device and an authorization code
        let device = CatalogueDevice.started()
        await device.start()
        let code = try await device.enrollmentCode()
        // When SetAuthorisationCode carries the app's trace context
        let event = KSMSetAuthorisationCodeEvent(tenantId: "demo", authenticationMode: .no, authorisationCode: code, clientId: "KssIdpEnrollment")
        let context = TraceContext(traceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", traceState: "app=banking")
        event.traceContext = context
        let result = await device.mc.receive(event) as! KSMSetAuthorisationCodeResultEvent
        // Then the IDP's audit log shows the code redeemed in that trace, and the result carries it
        #expect(result.status == .kOk)
        #expect(result.traceContext == context)
        #expect(device.idp.server.auditLog(traceId: "4bf92f3577b34da6a3ce929d0e0e4736").map(\.event) == [.codeRedeemed])
        // GetAstClientData's result carries its event's trace too
        let astContext = TraceContext(traceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        let ast = await device.mc.receive(KSMGetAstClientDataEvent(tenantId: "demo", traceContext: astContext))
        #expect(ast.traceContext == astContext)
        // An event without one gets a new trace; one that cannot be parsed gets a new one too
        let plain = await device.mc.receive(KSMGetInformationEvent())
        #expect(TraceParent.traceId(of: plain.traceContext?.traceParent ?? "") != nil)
        let broken = KSMGetInformationEvent(traceContext: TraceContext(traceParent: "not-a-traceparent"))
        let answer = await device.mc.receive(broken)
        let restarted = try #require(answer.traceContext)
        #expect(TraceParent.traceId(of: restarted.traceParent) != nil && restarted.traceState == TraceParent.restartedTraceState)
    }

    @Test("StartLogin goes to a registered listener after a Start with activated users, not on a first start and not after the activation")
    func startLoginToListener() async throws {
        let device = CatalogueDevice.started()
        let listener = RecordingListener()
        device.mc.register(listener)
        await device.start()
        _ = await device.set(try await device.enrollmentCode("uma"))
        let restart = await device.mc.receive(KSMRestartEvent()) as! KSMRestartResultEvent
        #expect(restart.status == .kOk)
        #expect(await eventually { listener.received.count == 1 })
        let startLogin = try #require(listener.received.first as? KSMStartLoginEvent)
        #expect(startLogin.userList == [device.uma] && startLogin.userDetailsList.map(\.userIdentifier) == [device.uma])
        #expect(listener.names == ["KSMStartLoginEvent"])
    }

    @Test("a lost connection: the listener gets CONNECTION_LOST, then after the failed retry NOT_REACHABLE and the automated restart's result, in that order")
    func connectionLostThenRestart() async throws {
        let device = await CatalogueDevice.activated()
        let listener = RecordingListener()
        device.mc.register(listener)
        device.idp.clock.advance(by: .seconds(301))
        device.transport.loseConnections(true)
        let offline = await device.offlineLogin(device.uma)
        #expect(offline.status == .kCannotAcquireTokenData)
        #expect(await eventually { listener.received.count == 4 })
        #expect(listener.names == ["KSMServerConnectionEvent", "KSMServerConnectionEvent", "KSMRestartResultEvent", "KSMStartLoginEvent"])
        let states = listener.received.compactMap { ($0 as? KSMServerConnectionEvent)?.connectionState }
        #expect(states == [.CONNECTION_LOST, .NOT_REACHABLE])
        #expect((listener.received[2] as? KSMRestartResultEvent)?.sdkState == .LOGIN_REQUIRED)
        #expect(await !device.mc.isLoggedIn(device.uma))
        // The connection comes back: the user logs in offline again
        device.transport.loseConnections(false)
        #expect(await device.offlineLogin(device.uma).status == .kOk)
    }

    @Test("GetState answers with what the MC waits for; GetInformation names the logged-in user; both are InvalidState before Start")
    func stateAndInformation() async throws {
        let fresh = CatalogueDevice.started()
        #expect(await fresh.mc.receive(KSMGetStateEventEvent()) is KSMInvalidStateEvent)
        #expect(await fresh.mc.receive(KSMGetInformationEvent()) is KSMInvalidStateEvent)

        let device = await CatalogueDevice.activated()
        let info = await device.mc.receive(KSMGetInformationEvent()) as! KSMGetInformationResultEvent
        #expect(info.loggedInUser == device.uma && info.loggedInUserIdentifier == device.uma)
        #expect(info.serialNumber == "" && info.sdkVersion == MasterController.sdkVersion)
        #expect(info.iamConfigurationData.clientId == "KssIdpEnrollment" && info.iamConfigurationData.serverUrl == device.idp.url)
        #expect(info.ssmsAppConfiguration?.name == "IdpHarness")
        #expect(await device.mc.receive(KSMGetStateEventEvent()) is KSMStartResultEvent)
        _ = await device.mc.receive(KSMRestartEvent())
        let waiting = try #require(await device.mc.receive(KSMGetStateEventEvent()) as? KSMStartLoginEvent)
        #expect(waiting.userList == [device.uma])
        let afterRestart = await device.mc.receive(KSMGetInformationEvent()) as! KSMGetInformationResultEvent
        #expect(afterRestart.loggedInUser == nil)
    }

    @Test("StartEventEx keeps the app's configuration for GetInformation; a failed Start changes nothing")
    func startEventEx() async throws {
        let device = CatalogueDevice.started()
        let app = KSMSsmsAppConfiguration(locale: "de-CH", version: KSMVersion(majorVersion: 2, minorVersion: 1, build: 7), name: "Banking", sdkconfig: Data("{}".utf8))
        let bad = KSMStartEventEx(serverBackend: "maverick", ssmsAppConfiguration: KSMSsmsAppConfiguration(
            locale: "de", version: app.version, name: String(repeating: "x", count: 33), sdkconfig: Data()), mcConfig: "{}", certificateChain: Data())
        let refused = await device.mc.receive(bad) as! KSMStartResultEvent
        #expect(refused.status == .kInvalidParameter && refused.errorDescription == "the app name must be 1 to 32 UTF-8 bytes; it is 33")
        #expect(await device.mc.receive(KSMGetInformationEvent()) is KSMInvalidStateEvent)
        let notJSON = KSMStartEventEx(serverBackend: "", ssmsAppConfiguration: app, mcConfig: "[1, 2]", certificateChain: Data())
        #expect((await device.mc.receive(notJSON) as! KSMStartResultEvent).status == .kInvalidParameter)
        let started = await device.mc.receive(KSMStartEventEx(serverBackend: "maverick", ssmsAppConfiguration: app, mcConfig: "{\"iam\": {}}",
                                                              certificateChain: Data(), configurationData: KSMConfigurationData(category: "", tagName: ""))) as! KSMStartResultEvent
        #expect(started.status == .kOk && started.sdkState == .ACTIVATION_REQUIRED)
        let info = await device.mc.receive(KSMGetInformationEvent()) as! KSMGetInformationResultEvent
        #expect(info.ssmsAppConfiguration == app && info.ssmsAppConfiguration?.version.ssmsVersionString == "2.1.7")
    }

    @Test("ExchangeIamToken: a token for the audience that an external service can check, never one of the MC's own; InvalidState before a login")
    func exchangeIamToken() async throws {
        let fresh = CatalogueDevice.started()
        await fresh.start()
        let early = try #require(await fresh.exchange() as? KSMInvalidStateEvent)
        #expect(early.errorMessage == "KSMExchangeIamTokenEvent needs a user logged in by SetAuthorisationCode or OfflineLogin")

        let device = await CatalogueDevice.activated()
        let result = try #require(await device.exchange("banking-api") as? KSMExchangeIamTokenResultEvent)
        #expect(result.status == .kOk && !result.description.contains(result.token))
        let seen = try #require(device.idp.server.introspect(result.token, tenant: "demo"))
        #expect(seen.active && seen.userId == "uma" && seen.audience == "banking-api" && !seen.isMcToken)
        // The MC's own tokens stay inside: the exchanged token is none of them
        let own = try #require(await device.mc.tokenSet(for: device.uma))
        #expect(![own.accessToken, own.refreshToken, own.offlineToken].contains(result.token))
        // An exchanged token cannot be used to refresh
        #expect(device.idp.server.isTokenActive(result.token, tenant: "demo"))
        // After a logout the exchanged token's family is gone from the MC: InvalidState
        _ = await device.mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: device.uma))
        #expect(await device.exchange() is KSMInvalidStateEvent)
    }

    @Test("1,000 concurrent ExchangeIamToken events at expiry share one refresh at the IDP, and each gets a token")
    func exchangesShareOneRefresh() async throws {
        let device = await CatalogueDevice.activated()
        device.idp.clock.advance(by: .seconds(301))
        let results = await withTaskGroup(of: KSMEventStatusType?.self) { group in
            for index in 0..<1_000 {
                group.addTask { (await device.exchange("service-\(index % 7)") as? KSMExchangeIamTokenResultEvent)?.status }
            }
            return await group.reduce(into: [KSMEventStatusType?]()) { $0.append($1) }
        }
        #expect(results.count == 1_000 && results.allSatisfy { $0 == .kOk })
        #expect(device.idp.count(.tokensRefreshed) == 1)
        #expect(device.idp.count(.tokenExchanged) == 1_000)
    }

    @Test("forceUpdate refreshes a still-valid access token first")
    func forceUpdate() async throws {
        let device = await CatalogueDevice.activated()
        #expect((await device.exchange() as? KSMExchangeIamTokenResultEvent)?.status == .kOk)
        #expect(device.idp.count(.tokensRefreshed) == 0)
        #expect((await device.exchange(forceUpdate: true) as? KSMExchangeIamTokenResultEvent)?.status == .kOk)
        #expect(device.idp.count(.tokensRefreshed) == 1)
    }

    @Test("tracing: ConfigurationEvent may come before Start; EnableOpenCensusTracing only after it, and then every new trace is sampled")
    func tracing() async throws {
        let device = CatalogueDevice.started()
        let configured = await device.mc.receive(KSMConfigurationEvent(exporterUrl: "https://zipkin.example.test/api", userName: "u", password: "secret", serverCertificate: Data()))
        #expect((configured as? KSMStatusResultEvent)?.status == .kOk)
        #expect(await device.mc.receive(KSMEnableOpenCensusTracingEvent(tracingEnabled: true)) is KSMInvalidStateEvent)
        await device.start()
        // Off: about one trace in ten is sampled (flags 01)
        var sampledOff = 0
        for _ in 0..<300 where (await device.mc.receive(KSMGetInformationEvent())).traceContext?.traceParent.hasSuffix("-01") == true { sampledOff += 1 }
        #expect(sampledOff > 0 && sampledOff < 100)
        // On: all
        #expect((await device.mc.receive(KSMEnableOpenCensusTracingEvent(tracingEnabled: true)) as? KSMStatusResultEvent)?.status == .kOk)
        for _ in 0..<50 {
            #expect((await device.mc.receive(KSMGetInformationEvent())).traceContext?.traceParent.hasSuffix("-01") == true)
        }
    }

    @Test("receive(_:withCompletionHandler:) answers once, on a concurrency thread, with the result event")
    func completionHandlerForm() async throws {
        let device = CatalogueDevice.started()
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<(any KsEvent)?, Never>) in
            device.mc.receive(KSMStartEvent(), withCompletionHandler: { continuation.resume(returning: $0) })
        }
        #expect((answer as? KSMStartResultEvent)?.status == .kOk)
    }

    @Test("the iOS spellings of every status match in a switch")
    func iosSpellingsSwitch() {
        func describe(_ status: KSMEventStatusType) -> String {
            switch status {
            case .KSMOK: "ok"
            case .KSMTEMPORARY_LOCKED: "locked"
            case .KSMPIN_BLOCKED: "blocked"
            case .KSMCANNOT_ACQUIRE_TOKEN_DATA: "no tokens"
            default: "other"
            }
        }
        #expect(describe(.kTemporaryLocked) == "locked" && describe(.kPinBlocked) == "blocked" && describe(.kOk) == "ok")
        #expect(describe(.kCannotAcquireTokenData) == "no tokens" && describe(.kFailed) == "other")
    }
}
