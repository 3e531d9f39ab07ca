// seeds/003's finishAuthentication(userInformation:), compiled as printed in a Swift 6 client target
// (Tests/DocumentSamples/Seed003AuthenticationResult): its exhaustive switch over the eight
// documented AuthenticationResult cases, run against the in-process IDP through XignSdk.shared.
import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
@testable import Seed003AuthenticationResultSample
import Testing

/// What `body` threw, run on a new OS thread (the documents' call blocks, so it must not run in a
/// task), or `nil` when it returned.
func errorOnOSThread(_ body: @escaping @Sendable () throws -> Void) async -> (any Error)? {
    do { try await OSThreads.run { try body() } } catch { return error }
    return nil
}

@Suite("The documents' AuthenticationResult sample (seeds/003), as printed", .serialized)
struct AuthenticationResultSampleTests {
    let idp = SampleIDP(lockout: LockoutPolicy(maximumFailures: 1, lockoutDuration: .seconds(60), permanentLockoutAfterTotalFailures: 2))

    init() {
        try! idp.server.addUser("zoe", tenant: idp.tenant, password: "pw-zoe-1")
        XignSdk.shared.authenticator.use(IdpSdkService(tenantId: idp.tenant, idpUrl: idp.url, certificateChain: Data(), shouldHashPin: false))
    }

    func signed(_ password: String) -> AuthenticationUserInformation {
        var info = AuthenticationUserInformation(tenantId: idp.tenant, userId: "zoe", clientId: "KssIdpLogin")
        info.sign("username", with: "zoe")
        info.sign("password", with: password)
        return info
    }

    @Test("the right secret ends in .userLogin: the sample returns, and the IDP issued a code")
    func userLogin() async {
        let info = signed("pw-zoe-1")
        #expect(await errorOnOSThread { try runFinishAuthentication(userInformation: info) } == nil)
        #expect(idp.server.auditLog().filter { $0.event == .codeIssued && $0.userId == "zoe" }.count == 1)
    }

    @Test("a wrong secret ends in .lockout: the sample signs the user information again, with its signatures cleared; a second wrong one locks for good and the sample throws")
    func lockout() async throws {
        let before = signedAgain.withLock { $0.count }
        #expect(await errorOnOSThread { try runFinishAuthentication(userInformation: signed("wrong")) } == nil)
        let again = try #require(signedAgain.withLock { $0.dropFirst(before).first })
        #expect(again.userId == "zoe" && again.signatures.isEmpty)
        #expect(idp.server.user("zoe", tenant: idp.tenant)?.lockout?.isPermanent == false)

        // After the lock lifts, a second wrong secret reaches the permanent total
        idp.clock.advance(by: .seconds(61))
        let error = await errorOnOSThread { try runFinishAuthentication(userInformation: signed("wrong again")) }
        #expect(error as? YourError == .yourErrorCase)
        #expect(idp.server.user("zoe", tenant: idp.tenant)?.lockout?.isPermanent == true)
    }

    @Test("finishAuthenticationSynchronous refuses inside a Swift task instead of blocking it")
    func refusesInsideTask() async {
        #expect(throws: IdpSdkError(.blockingCallInsideTask, "finishAuthenticationSynchronous blocks its thread; call finishAuthentication(userInfo:) with await inside a task")) {
            _ = try XignSdk.shared.authenticator.finishAuthenticationSynchronous(userInfo: signed("pw-zoe-1"))
        }
        // and the async form works there
        let result = try? await XignSdk.shared.authenticator.finishAuthentication(userInfo: signed("pw-zoe-1"))
        guard case .userLogin(let login)? = result else { Issue.record("expected .userLogin, got \(String(describing: result))"); return }
        #expect(login.roleName == "KssIdpLogin" && !login.authorizationCode.isEmpty)
    }

    @Test("each purpose ends in its documented case")
    func purposes() async throws {
        let cases: [(AuthenticationUserInformation.Purpose, (AuthenticationResult) -> Bool)] = [
            (.serviceLogin, { if case .serviceLogin = $0 { true } else { false } }),
            (.addFactor, { if case .apiAccessAddFactor = $0 { true } else { false } }),
            (.changePin, { if case .apiAccessChangePin = $0 { true } else { false } }),
            (.mergeAccount(idmIdentifier: "idm-7"), { $0 == .apiAccessMergeComplete(idmIdentifier: "idm-7") }),
            (.requestNewActivationData, { if case .apiAccessRequestNewActivationData = $0 { true } else { false } }),
            (.delete, { if case .apiAccessDelete = $0 { true } else { false } }),
        ]
        for (purpose, matches) in cases {
            var info = AuthenticationUserInformation(tenantId: idp.tenant, userId: "zoe", clientId: "KssIdpLogin", purpose: purpose)
            info.sign("username", with: "zoe")
            info.sign("password", with: "pw-zoe-1")
            let result = try await XignSdk.shared.authenticator.finishAuthentication(userInfo: info)
            #expect(matches(result), "\(purpose) gave \(result)")
        }
    }

    @Test("a missing signature is a clear error, not a result")
    func missingSignature() async {
        var info = AuthenticationUserInformation(tenantId: idp.tenant, userId: "zoe", clientId: "KssIdpLogin")
        info.sign("username", with: "zoe")
        await #expect(throws: IdpSdkError(.missingCredentialField, "no signature for factor 'password' of step 1 of client 'KssIdpLogin'")) {
            _ = try await XignSdk.shared.authenticator.finishAuthentication(userInfo: info)
        }
    }
}
