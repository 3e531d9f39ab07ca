import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import Testing
import StackTestSupport

@Suite("Bad credentials from a provider end the flow with an error naming the field")
struct CredentialErrorTests {
    let idp = TestIDP()
    init() { idp.activeUser("carol", password: "pa55word") }

    func login(_ provider: any IdpSdkInteractionInterface & Sendable, configuration: IdpSdkService.Configuration = .init()) async -> IdpSdkResult {
        await idp.sdk(configuration).run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "carol")
    }

    @Test("credentials that lack a requested field")
    func missingField() async {
        let result = await login(ClosureProvider { _ in .init(credentials: ["username": "carol"]) })
        #expect(result.idpSdkError == IdpSdkError(.missingCredentialField, "credentials lack field 'password', which step 1 of client 'KssIdpLogin' requested"))
        #expect(result.authorizationCode == nil)
    }

    @Test("by default, as the documents expect, a field the step did not request is dropped and the login succeeds")
    func unrequestedFieldDroppedByDefault() async {
        let result = await login(ClosureProvider { _ in .init(credentials: ["username": "carol", "password": "pa55word", "activation-code": "123"]) })
        #expect(!result.hasError())
        #expect(result.authorizationCode != nil)
    }

    @Test("with the strict policy opted in, a field the step did not request ends the flow with an error naming the field and the step")
    func unrequestedFieldRejectedWhenStrict() async {
        let result = await login(ClosureProvider { _ in .init(credentials: ["username": "carol", "password": "pa55word", "activation-code": "123"]) },
                                 configuration: .init(unrequestedFields: .reject))
        #expect(result.idpSdkError == IdpSdkError(.unexpectedCredentialField, "credentials name field 'activation-code', which step 1 of client 'KssIdpLogin' did not request (it asked [\"username\", \"password\"])"))
    }

    @Test("an empty value")
    func emptyValue() async {
        let result = await login(ClosureProvider { _ in .init(credentials: ["username": "carol", "password": ""]) })
        #expect(result.idpSdkError == IdpSdkError(.emptyCredentialField, "field 'password' of step 1 of client 'KssIdpLogin' is empty"))
    }

    @Test("an oversized value")
    func oversizedValue() async {
        let result = await login(ClosureProvider { _ in .init(credentials: ["username": "carol", "password": String(repeating: "x", count: 1025)]) })
        #expect(result.idpSdkError == IdpSdkError(.credentialFieldTooLong, "field 'password' of step 1 of client 'KssIdpLogin' is 1025 bytes; at most 1024 are accepted"))
    }

    @Test("a value with a control character")
    func controlCharacter() async {
        let result = await login(ClosureProvider { _ in .init(credentials: ["username": "carol\u{0}", "password": "pa55word"]) })
        #expect(result.idpSdkError == IdpSdkError(.invalidCredentialValue, "field 'username' of step 1 of client 'KssIdpLogin' contains a control character"))
    }

    @Test("a missing field is reported before an earlier field's bad value, and with the strict policy an unrequested field before any bad value")
    func errorPrecedence() async {
        // A requested field missing, though the one before it is empty
        let missing = await login(ClosureProvider { _ in .init(credentials: ["username": ""]) })
        #expect(missing.idpSdkError == IdpSdkError(.missingCredentialField, "credentials lack field 'password', which step 1 of client 'KssIdpLogin' requested"))
        // An unrequested field, though a requested one is empty, under the strict policy
        let unrequested = await login(ClosureProvider { _ in .init(credentials: ["username": "", "password": "pa55word", "pin": "1"]) },
                                      configuration: .init(unrequestedFields: .reject))
        #expect(unrequested.idpSdkError?.code == .unexpectedCredentialField)
        // Bad values in form order: the first field's, though the second is bad too
        let values = await login(ClosureProvider { _ in .init(credentials: ["username": "carol\u{7F}", "password": ""]) })
        #expect(values.idpSdkError == IdpSdkError(.invalidCredentialValue, "field 'username' of step 1 of client 'KssIdpLogin' contains a control character"))
    }

    @Test("characters beyond ASCII are not control characters: the value reaches the IDP")
    func nonASCIIValuesPass() async {
        // Given a user whose password has two-, three- and four-byte characters and a C1 code point
        idp.activeUser("zoë", password: "pässwörd€😀\u{85}")

        // When the provider answers it
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                         provider: ClosureProvider { _ in .init(credentials: ["username": "zoë", "password": "pässwörd€😀\u{85}"]) },
                                         userId: "zoë")

        // Then the login succeeds
        #expect(result.idpSdkError == nil)
        #expect(result.authorizationCode != nil)
    }

    @Test("a provider's error cancels the flow and comes back unchanged")
    func providerErrorComesBackUnchanged() async {
        let error = IdpSdkError("MyApp", 42, "the user closed the prompt")
        let result = await login(ClosureProvider { _ in .init(error: error) })
        #expect(result.idpSdkError == error)
        #expect(result.hasError())
    }

    @Test("the error's description never shows a credential value")
    func descriptionsHideSecrets() async {
        let result = await login(ClosureProvider { _ in .init(credentials: ["username": "carol", "password": "pa55word-but-way-too-long" + String(repeating: "y", count: 2000)]) })
        #expect(result.idpSdkError?.code == .credentialFieldTooLong)
        #expect(!(result.idpSdkError?.errorDescription.contains("pa55word") ?? true))
        #expect(!IdpSdkProvideCredentialsResult(credentials: ["password": "pa55word"]).description.contains("pa55word"))
    }
}

@Suite("Bad arguments to getAuthorizationCode fail clearly, on an SDK thread")
struct ArgumentErrorTests {
    let idp = TestIDP()
    let provider = TableProvider(["username": "dave", "password": "letmein1"])
    init() { idp.activeUser("dave", password: "letmein1") }

    func run(_ info: AstClientDataInfo = TestIDP.astClientData().info, clientId: String = "KssIdpLogin", userId: String? = "dave", traceParent: String? = nil, sdk: IdpSdkService? = nil) async -> IdpSdkError? {
        await (sdk ?? idp.sdk()).run(info, clientId: clientId, provider: provider, userId: userId, traceParent: traceParent).idpSdkError
    }

    @Test("an empty clientId")
    func emptyClientId() async {
        #expect(await run(clientId: "") == IdpSdkError(.invalidArgument, "clientId is empty"))
    }

    @Test("an empty userId means none, as the documents use it: no login hint, and the provider sees nil")
    func emptyUserIdMeansNone() async {
        #expect(await run(userId: "") == nil)
        #expect(provider.recorded.map(\.userId) == [nil])
        let requested = idp.server.auditLog().filter { $0.event == .authorizationRequested }
        #expect(requested.count == 1 && requested[0].userId == nil)
    }

    @Test("empty AST client data")
    func emptyClientData() async {
        let good = TestIDP.astClientData().info
        let info = AstClientDataInfo("", good.astClientId, good.codeChallenge, good.codeChallengeMethod)
        #expect(await run(info) == IdpSdkError(.invalidArgument, "astClientData.clientData is empty; post a KSMGetAstClientDataEvent first"))
    }

    @Test("the plain challenge method")
    func plainChallengeMethod() async {
        let good = TestIDP.astClientData().info
        let info = AstClientDataInfo(good.clientData, good.astClientId, good.codeChallenge, "plain")
        #expect(await run(info) == IdpSdkError(.invalidArgument, "astClientData.codeChallengeMethod 'plain' is not supported; S256 is required"))
    }

    @Test("a malformed code challenge")
    func malformedChallenge() async {
        let good = TestIDP.astClientData().info
        let info = AstClientDataInfo(good.clientData, good.astClientId, "short", good.codeChallengeMethod)
        #expect(await run(info) == IdpSdkError(.invalidArgument, "astClientData.codeChallenge is not an S256 challenge (43 base64url characters)"))
    }

    @Test("a traceparent that cannot be parsed starts a new trace, as W3C Trace Context asks, and the IDP's audit log shows it")
    func malformedTraceParentStartsNewTrace() async throws {
        for malformed in ["00-not-a-trace", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"] {
            #expect(await run(traceParent: malformed) == nil)
            let asked = try #require(provider.recorded.last)
            let fresh = try #require(asked.traceParent)
            let traceId = try #require(TraceParent.traceId(of: fresh))
            #expect(fresh != malformed)
            let entries = idp.server.auditLog(traceId: traceId)
            #expect(entries.first?.event == .authorizationRequested)
            #expect(entries.first?.detail.contains("new trace: the client could not parse its caller's traceparent") == true)
            #expect(entries.contains { $0.event == .codeIssued })
        }
        // A valid one is kept as it is, and no restart is noted.
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        #expect(await run(traceParent: valid) == nil)
        #expect(provider.recorded.last?.traceParent == valid)
        let entries = idp.server.auditLog(traceId: "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(entries.first?.detail == "step 1 of 1")
    }

    @Test("a login for a user who is not enrolled is refused before any credentials are asked")
    func loginForUnenrolledUser() async {
        #expect(await run(userId: "mallory") == IdpSdkError(.userNotEnrolled, "user_not_enrolled: user 'mallory' is not enrolled in tenant 'demo'"))
        _ = idp.pendingUser("erin")
        #expect(await run(userId: "erin") == IdpSdkError(.userNotEnrolled, "user_not_enrolled: user 'erin' is not enrolled in tenant 'demo'"))
        #expect(provider.recorded.isEmpty)
    }

    @Test("a client the IDP does not know")
    func unknownClient() async {
        #expect(await run(clientId: "NoSuchClient") == IdpSdkError(.unknownClient, "unknown_client: client 'NoSuchClient' is not known to tenant 'demo'"))
    }

    @Test("a tenant the IDP does not know")
    func unknownTenant() async {
        let sdk = IdpSdkService(tenantId: "elsewhere", idpUrl: idp.url, certificateChain: Data(), shouldHashPin: false)
        #expect(await run(sdk: sdk) == IdpSdkError(.unknownTenant, "unknown_tenant: tenant 'elsewhere' does not exist"))
    }

    @Test("no IDP at the URL")
    func unreachable() async {
        let sdk = IdpSdkService(tenantId: "demo", idpUrl: "https://nowhere.test", certificateChain: Data(), shouldHashPin: false)
        #expect(await run(sdk: sdk) == IdpSdkError(.idpUnreachable, "no IDP answers at https://nowhere.test"))
    }

    @Test("a certificate chain without the IDP's pinned certificate")
    func certificatePinning() async {
        let url = "https://pinned-\(UUID().uuidString).test"
        IdpNetwork.shared.register(idp.server, at: url, certificate: Data("IDP-CERT".utf8))
        let wrong = IdpSdkService(tenantId: "demo", idpUrl: url, certificateChain: Data("OTHER".utf8), shouldHashPin: false)
        #expect(await run(sdk: wrong)?.code == .certificatePinning)
        let right = IdpSdkService(tenantId: "demo", idpUrl: url, certificateChain: Data("-----BEGIN\nIDP-CERT\n-----END".utf8), shouldHashPin: false)
        #expect(await run(sdk: right) == nil)
    }

    @Test("argument errors are delivered on an SDK thread, not the caller's")
    func argumentErrorsArriveOnSDKThread() async {
        let sdk = idp.sdk()
        let onSDKThread = await withCheckedContinuation { continuation in
            sdk.getAuthorizationCode(withAstClientData: TestIDP.astClientData().info, clientId: "", interactionInterface: provider,
                                     userId: nil, traceParent: nil) { _ in
                continuation.resume(returning: IdpSdkService.isSDKThread)
            }
        }
        #expect(onSDKThread)
    }
}
