import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import McSdk
import Testing
import StackTestSupport

/// Records the headers of every request before passing it on.
final class HeaderRecordingTransport: Transport, Sendable {
    private let inner: any Transport
    private let seen = LockedValue<[(target: String, headers: HTTPHeaders)]>([])
    init(_ inner: any Transport) { self.inner = inner }

    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        seen.withLock { $0.append((request.target, request.headers)) }
        inner.send(request, completion: completion)
    }

    /// The `X-KOBIL-ASTCLIENTID` of each authorize request, in order (`nil` where absent).
    var astClientIdsOfAuthorizeRequests: [String?] {
        seen.withLock { $0.filter { $0.target.contains("/openid-connect/auth?") }.map { $0.headers["X-KOBIL-ASTCLIENTID"] } }
    }
}

@Suite("One device binding shared by every user on a device")
struct DeviceBindingTests {
    @Test("a second user enrolled on a device shares the first one's AST client id, and the documents' login sends it as X-KOBIL-ASTCLIENTID")
    func addUserSharesTheBinding() async throws {
        // Given a device (one MC) on which uma was activated
        let idp = TestIDP()
        let transport = HeaderRecordingTransport(InProcessTransport(server: idp.server))
        let sdk = IdpSdkService(tenantId: idp.tenant, idpUrl: idp.url, certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(clock: idp.clock), transport: transport)
        let mc = idp.masterController()
        #expect(await idp.activate("uma", password: "pw-uma-1", on: mc, sdk: sdk) == .kOk)
        let device = try #require(idp.server.user("uma", tenant: "demo")?.astClientIds.first)

        // When vic is added on the same device (the documents' tenant-only GetAstClientData)
        #expect(await idp.activate("vic", password: "pw-vic-1", on: mc, sdk: sdk, existingUserId: "uma") == .kOk)

        // Then both users carry the device's one binding
        #expect(idp.server.user("uma", tenant: "demo")?.astClientIds == [device])
        #expect(idp.server.user("vic", tenant: "demo")?.astClientIds == [device])
        // and the tenant-only GetAstClientData of the login sample hands it out, so the IdpSdk sends it
        let ast = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo")) as! KSMGetAstClientDataResultEvent
        #expect(ast.astClientId == device)
        let login = await sdk.run(AstClientDataInfo(astClientData: ast), clientId: "KssIdpLogin",
                                  provider: TableProvider(["username": "vic", "password": "pw-vic-1"]), userId: "vic")
        #expect(login.authorizationCode != nil)
        // The first activation had no binding to send; every authorization after it sends the device's
        #expect(transport.astClientIdsOfAuthorizeRequests == [nil, device, device])
    }

    @Test("two devices of one user get two bindings")
    func twoDevicesTwoBindings() async throws {
        let idp = TestIDP()
        #expect(await idp.activate("uma", password: "pw-uma-1", on: idp.masterController()) == .kOk)
        let second = idp.masterController()
        let code = try idp.server.issueActivationCode(for: "uma", tenant: "demo")
        _ = await second.receive(KSMStartEvent())
        let ast = await second.receive(KSMGetAstClientDataEvent(tenantId: "demo")) as! KSMGetAstClientDataResultEvent
        #expect(ast.astClientId == IdpServer.unassignedAstClientId)
        let result = await idp.sdk().run(AstClientDataInfo(astClientData: ast), clientId: "KssIdpEnrollment",
                                         provider: TableProvider(["username": "uma", "activation-code": code, "password": "pw-uma-2"]))
        let set = await second.receive(KSMSetAuthorisationCodeEvent(tenantId: "demo", authenticationMode: .no,
                                                                     authorisationCode: try #require(result.authorizationCode),
                                                                     clientId: "KssIdpEnrollment")) as! KSMSetAuthorisationCodeResultEvent
        #expect(set.status == .kOk)
        let bindings = try #require(idp.server.user("uma", tenant: "demo")?.astClientIds)
        #expect(bindings.count == 2 && bindings[0] != bindings[1])
    }
}
