import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
@testable import McSdk
import Testing
import StackTestSupport

@Suite("The MasterController")
struct MasterControllerTests {
    let idp = TestIDP()
    let user = KsUserIdentifier(tenantId: "demo", userId: "uma")

    /// Start, GetAstClientData and an enrollment code for a new user "uma", not yet exchanged.
    func codeForNewUser(_ mc: MasterController) async -> (code: String, ast: KSMGetAstClientDataResultEvent) {
        let activationCode = idp.pendingUser("uma")
        _ = await mc.receive(KSMStartEvent())
        let ast = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo")) as! KSMGetAstClientDataResultEvent
        let result = await idp.sdk().run(AstClientDataInfo(astClientData: ast), clientId: "KssIdpEnrollment",
                                         provider: TableProvider(["username": "uma", "activation-code": activationCode, "password": "pw-uma"]))
        return (result.authorizationCode!, ast)
    }

    func set(_ mc: MasterController, code: String, clientId: String = "KssIdpEnrollment", user: KsUserIdentifier? = nil) async -> KSMSetAuthorisationCodeResultEvent {
        let event = user.map { KSMSetAuthorisationCodeEvent(userIdentifier: $0, authenticationMode: .no, authorisationCode: code, clientId: clientId) }
            ?? KSMSetAuthorisationCodeEvent(tenantId: "demo", authenticationMode: .no, authorisationCode: code, clientId: clientId)
        return await mc.receive(event) as! KSMSetAuthorisationCodeResultEvent
    }

    func startState(_ mc: MasterController) async -> KSMSdkState {
        (await mc.receive(KSMStartEvent()) as! KSMStartResultEvent).sdkState
    }

    @Test("events before Start fail with kInvalidState")
    func eventsBeforeStart() async {
        let mc = idp.masterController()
        let ast = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo")) as! KSMGetAstClientDataResultEvent
        #expect(ast.status == .kInvalidState)
        #expect(ast.errorDescription == "post a KSMStartEvent before KSMGetAstClientDataEvent")
        #expect(ast.hasErrorOccurred)
        let set = await set(mc, code: "x")
        #expect(set.status == .kInvalidState)
    }

    @Test("GetAstClientData makes a fresh S256 challenge per request, all-zero client id for a new device")
    func astClientData() async {
        let mc = idp.masterController()
        _ = await mc.receive(KSMStartEvent())
        let first = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo")) as! KSMGetAstClientDataResultEvent
        let second = await mc.receive(KSMGetAstClientDataEvent(userIdentifier: KsUserIdentifier(tenantId: "demo", userId: ""))) as! KSMGetAstClientDataResultEvent
        #expect(first.status == .OK)
        #expect(first.codeChallengeMethod == "S256" && first.codeChallangeMethod == "S256")
        #expect(PKCE.isValidS256Challenge(first.codeChallenge))
        #expect(first.codeChallange == first.codeChallenge)
        #expect(first.codeChallenge != second.codeChallenge)
        #expect(first.clientData != second.clientData)
        #expect(first.astClientId == "00000000-0000-0000-0000-000000000000" && first.clientId == first.astClientId)
        let empty = await mc.receive(KSMGetAstClientDataEvent(tenantId: "")) as! KSMGetAstClientDataResultEvent
        #expect(empty.status == .kFailed && empty.errorDescription == "tenantId is empty")
    }

    @Test("a good code activates the user; Start then reports LOGIN_REQUIRED with that user and its AST client id")
    func activation() async throws {
        let mc = idp.masterController()
        #expect(await startState(mc) == .ACTIVATION_REQUIRED)
        let (code, _) = await codeForNewUser(mc)
        let result = await set(mc, code: code)
        #expect(result.status == .kOk)
        #expect(result.errorCode == 0 && result.errorDescription.isEmpty && !result.hasErrorOccurred)
        let start = await mc.receive(KSMStartEvent()) as! KSMStartResultEvent
        #expect(start.sdkState == .LOGIN_REQUIRED)
        #expect(start.userList == [user])
        let again = await mc.receive(KSMGetAstClientDataEvent(userIdentifier: user)) as! KSMGetAstClientDataResultEvent
        #expect(idp.server.user("uma", tenant: "demo")?.astClientIds == [again.astClientId])
    }

    @Test("an unknown code fails with kCannotAcquireTokenData, as the documents list it, and changes nothing")
    func unknownCode() async throws {
        let mc = idp.masterController()
        let (code, _) = await codeForNewUser(mc)
        let result = await set(mc, code: "not-a-code")
        #expect(result.status == .CANNOT_ACQUIRE_TOKEN_DATA)
        #expect(result.errorDescription == "the IDP refused the code: invalid_grant: authorization code is unknown")
        #expect(await startState(mc) == .ACTIVATION_REQUIRED)
        // the kept verifier is untouched: the right code still works
        #expect(await set(mc, code: code).status == .kOk)
    }

    @Test("a code exchanged uses up its authorization: the same code again is kInvalidState, not sent to the IDP")
    func exchangedAuthorizationIsGone() async {
        // Given a user activated with a code
        let mc = idp.masterController()
        let (code, _) = await codeForNewUser(mc)
        #expect(await set(mc, code: code).status == .kOk)
        // When the same code comes again with no GetAstClientData between
        let again = await set(mc, code: code)
        // Then nothing is pending any more
        #expect(again.status == .kInvalidState)
        #expect(again.errorDescription == "no authorization is pending for demo/; post a KSMGetAstClientDataEvent first")
    }

    @Test("a reused code fails, and the IDP revokes what its first use issued")
    func reusedCode() async throws {
        let mc = idp.masterController()
        let (code, _) = await codeForNewUser(mc)
        #expect(await set(mc, code: code).status == .kOk)
        let tokens = try #require(await mc.tokenSet(for: user))
        // a second authorization is pending, but the old code is presented
        _ = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo"))
        let result = await set(mc, code: code)
        #expect(result.status == .kCannotAcquireTokenData)
        #expect(result.errorDescription == "the IDP refused the code: invalid_grant: authorization code was already used; the tokens it issued are revoked")
        #expect(!idp.server.isTokenActive(try #require(tokens.accessToken), tenant: "demo"))
        #expect(await mc.tokenSet(for: user)?.accessToken == tokens.accessToken)
    }

    @Test("an expired code fails and changes nothing")
    func expiredCode() async throws {
        let mc = idp.masterController()
        let (code, _) = await codeForNewUser(mc)
        idp.clock.advance(by: .seconds(61))
        let result = await set(mc, code: code)
        #expect(result.status == .kCannotAcquireTokenData)
        #expect(result.errorDescription == "the IDP refused the code: invalid_grant: authorization code has expired")
        #expect(await startState(mc) == .ACTIVATION_REQUIRED)
    }

    @Test("a code bound to another verifier (a superseded GetAstClientData) fails and changes nothing")
    func mismatchedVerifier() async throws {
        let mc = idp.masterController()
        let (code, _) = await codeForNewUser(mc)
        _ = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo"))
        let result = await set(mc, code: code)
        #expect(result.status == .kCannotAcquireTokenData)
        #expect(result.errorDescription == "the IDP refused the code: invalid_grant: code_verifier does not match the code challenge")
        #expect(await startState(mc) == .ACTIVATION_REQUIRED)
    }

    @Test("a code presented for another client fails")
    func mismatchedClient() async throws {
        let mc = idp.masterController()
        let (code, _) = await codeForNewUser(mc)
        let result = await set(mc, code: code, clientId: "KssIdpLogin")
        #expect(result.status == .kCannotAcquireTokenData)
        #expect(result.errorDescription == "the IDP refused the code: invalid_grant: authorization code was issued to another client")
        #expect(await set(mc, code: code).status == .kOk)
    }

    @Test("a code presented for another user fails with kFailed and changes nothing")
    func mismatchedUser() async throws {
        let mc = idp.masterController()
        _ = idp.pendingUser("victor")
        let activationCode = idp.pendingUser("uma")
        _ = await mc.receive(KSMStartEvent())
        let victor = KsUserIdentifier(tenantId: "demo", userId: "victor")
        let ast = await mc.receive(KSMGetAstClientDataEvent(userIdentifier: victor)) as! KSMGetAstClientDataResultEvent
        let result = await idp.sdk().run(AstClientDataInfo(astClientData: ast), clientId: "KssIdpEnrollment",
                                         provider: TableProvider(["username": "uma", "activation-code": activationCode, "password": "pw-uma"]))
        let set = await set(mc, code: try #require(result.authorizationCode), user: victor)
        #expect(set.status == .kFailed)
        #expect(set.errorDescription == "the code was issued for another user than demo/victor")
        #expect(await startState(mc) == .ACTIVATION_REQUIRED)
    }

    @Test("empty parameters fail with kFailed (the documents list no kInvalidParameter for SetAuthorisationCode); no pending authorization with kInvalidState")
    func badParameters() async {
        let mc = idp.masterController()
        _ = await mc.receive(KSMStartEvent())
        #expect(await set(mc, code: "").status == .kFailed)
        #expect(await set(mc, code: "abc", clientId: "").status == .kFailed)
        let none = await set(mc, code: "abc")
        #expect(none.status == .kInvalidState)
        #expect(none.errorDescription == "no authorization is pending for demo/; post a KSMGetAstClientDataEvent first")
    }

    @Test("no IDP at the configured URL gives kCannotAcquireTokenData")
    func unreachable() async {
        let mc = MasterController(configuration: .init(idpUrl: "https://nowhere.test"))
        _ = await mc.receive(KSMStartEvent())
        _ = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo"))
        let result = await set(mc, code: "abc")
        #expect(result.status == .kCannotAcquireTokenData)
    }

    @Test("token requests go to the token endpoint of their event's tenant, percent-encoded, when one device's events change tenant")
    func tokenRequestsFollowTheTenant() async {
        // Given a device whose transport records each request's target and refuses it
        let transport = TargetRecordingTransport()
        let mc = MasterController(configuration: .init(idpUrl: "https://idp.test", transport: transport))
        _ = await mc.receive(KSMStartEvent())
        // When codes are presented in one tenant, another, and the first again
        for tenant in ["demo", "other bank", "demo"] {
            _ = await mc.receive(KSMGetAstClientDataEvent(tenantId: tenant))
            let result = await mc.receive(KSMSetAuthorisationCodeEvent(tenantId: tenant, authenticationMode: .no, authorisationCode: "abc", clientId: "app"))
            #expect((result as? KSMSetAuthorisationCodeResultEvent)?.status == .kCannotAcquireTokenData)
        }
        // Then each went to its own tenant's endpoint
        #expect(transport.targets == ["/auth/realms/demo/protocol/openid-connect/token",
                                      "/auth/realms/other%20bank/protocol/openid-connect/token",
                                      "/auth/realms/demo/protocol/openid-connect/token"])
    }

    @Test("the completion form delivers a KsMacroEvent to downcast, and postEvent's future resolves with then and value")
    func callbackForms() async throws {
        let mc = idp.masterController()
        let start = await withCheckedContinuation { continuation in
            mc.sendEvent2MasterController(KSMStartEvent()) { event in
                guard let macroEvent = event as? KsMacroEvent, let result = macroEvent as? KSMStartResultEvent else {
                    continuation.resume(returning: KSMSdkState.unidentified)
                    return
                }
                continuation.resume(returning: result.sdkState)
            }
        }
        #expect(start == .ACTIVATION_REQUIRED)
        let future = mc.postEvent(KSMGetAstClientDataEvent(tenantId: "demo"))
        let viaThen = await withCheckedContinuation { continuation in
            future.then { resultEvent in continuation.resume(returning: (resultEvent as? KSMGetAstClientDataResultEvent)?.status) }
        }
        #expect(viaThen == .OK)
        #expect((await future.value as? KSMGetAstClientDataResultEvent)?.status == .OK)
    }

    @Test("the future's blocking get() refuses inside a task and works on a plain thread")
    func blockingGet() async throws {
        let mc = idp.masterController()
        let future = mc.postEvent(KSMStartEvent())
        #expect(throws: McFutureError.blockingCallInsideTask) { try future.get() }
        let state = await OSThreads.run { (try? future.get() as? KSMStartResultEvent)?.sdkState }
        #expect(state == .ACTIVATION_REQUIRED)
    }

    @Test("an event the MasterController does not handle gets kNotSupported")
    func unsupportedEvent() async {
        final class KSMMadeUpEvent: KsMacroEvent { var traceContext: TraceContext? { get { nil } set {} } }
        let result = await idp.masterController().receive(KSMMadeUpEvent()) as! KSMStatusResultEvent
        #expect(result.status == .kNotSupported)
    }

    @Test("the status type has the documents' 54 values with their spellings")
    func statusValues() {
        #expect(KSMEventStatusType.allCases.count == 54)
        #expect(KSMEventStatusType.KSMOK == .kOk && StatusType.OK == .kOk)
        #expect(KSMEventStatusType.kTemporaryLocked.description == "kTemporaryLocked")
        #expect(StatusType.PIN_BLOCKED == .kPinBlocked)
        // The enumerations page's iOS spellings, its two irregular ones included
        #expect(KSMEventStatusType.KSMTEMPORARY_LOCKED == .kTemporaryLocked && KSMEventStatusType.KSMCONNECTION_LOST == .kConnectionLost)
        #expect(KSMEventStatusType.KSMGLOBALPINSET == .kGlobalPinSet && KSMEventStatusType.KSMGLOBAL_PIN_SET == .kGlobalPinSet)
        #expect(KSMEventStatusType.KSMCANNOT_ACQUIRE_ACCESS_TOKEN_FOR_AUTHORIZATIN_CODE == .kCannotAcquireAccessTokenForAuthorizationCode)
        #expect(KSMAuthenticationMode.KSMAuthenticationModeBiometric == .BIOMETRIC)
    }
}

/// Records the target of every request and answers each with 400 `invalid_grant`.
final class TargetRecordingTransport: Transport {
    private let recorded = LockedValue<[String]>([])
    var targets: [String] { recorded.withLock { $0 } }

    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        recorded.withLock { $0.append(request.target) }
        completion(.success(HTTPResponse(status: 400, body: Array(#"{"error":"invalid_grant"}"#.utf8))))
    }
}
