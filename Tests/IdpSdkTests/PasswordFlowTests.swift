import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk
import Testing
import StackTestSupport

@Suite("Change and forgot password through the IdpSdk")
struct PasswordFlowTests {
    let idp = TestIDP()
    let lee = KsUserIdentifier(tenantId: "demo", userId: "lee")

    /// Activates "lee" with `pw-lee` on a fresh MasterController, and returns it with the AST
    /// client data of a next flow for lee.
    func activatedLee() async -> (mc: MasterController, ast: AstClientDataInfo) {
        let mc = idp.masterController()
        #expect(await idp.activate("lee", password: "pw-lee", on: mc) == .OK)
        let ast = await mc.receive(KSMGetAstClientDataEvent(userIdentifier: lee)) as! KSMGetAstClientDataResultEvent
        return (mc, AstClientDataInfo(astClientData: ast))
    }

    /// Runs `clientId`'s flow for lee with `answers`; returns the code, after checking that the
    /// provider was asked `steps` on SDK threads.
    func code(_ clientId: String, ast: AstClientDataInfo, answers: [String: String], steps: [[String]]) async throws -> String {
        let provider = TableProvider(answers)
        let result = await idp.sdk().run(ast, clientId: clientId, provider: provider, userId: "lee")
        #expect(provider.recorded.map(\.inputFieldIds) == steps)
        #expect(provider.misplacedCalls.load(ordering: .relaxed) == 0)
        guard case .userLogin(let login)? = result.authenticationResult else {
            Issue.record("expected a login, got \(String(describing: result.idpSdkError))")
            throw CancellationError()
        }
        #expect(login.roleName == clientId && login.serviceInformation == "demo")
        return login.authorizationCode
    }

    /// SetAuthorisationCode for lee with a code of `clientId`.
    func set(_ mc: MasterController, code: String, clientId: String) async -> KSMEventStatusType {
        let set = await mc.receive(KSMSetAuthorisationCodeEvent(userIdentifier: lee, authenticationMode: .no,
                                                                authorisationCode: code, clientId: clientId))
        return (set as! KSMSetAuthorisationCodeResultEvent).status
    }

    @Test("KssIdpChangePassword asks username and current password, then the new one, and ends with a code; lee then logs in with the new password")
    func changePassword() async throws {
        // Given lee, activated with pw-lee
        let (mc, ast) = await activatedLee()
        // When lee changes the password through the SDK
        let code = try await code("KssIdpChangePassword", ast: ast, answers: [
            IdpSdkConstants.USERNAME: "lee", IdpSdkConstants.CURRENT_PASSWORD: "pw-lee", IdpSdkConstants.NEW_PASSWORD: "pw-lee-2",
        ], steps: [[IdpSdkConstants.USERNAME, IdpSdkConstants.CURRENT_PASSWORD], [IdpSdkConstants.NEW_PASSWORD]])
        // Then the code logs lee in at the MasterController
        #expect(await set(mc, code: code, clientId: "KssIdpChangePassword") == .OK)
        // And KssIdpLogin takes the new password and no longer the old one
        #expect(await idp.login("lee", password: "pw-lee-2", on: mc) == .OK)
        #expect(await idp.login("lee", password: "pw-lee", on: mc) == .kCannotAcquireAuthorizationCode)
        #expect(idp.count(.passwordChanged) == 1)
    }

    @Test("KssIdpForgotPassword asks username and the reset code, then the new password, and ends with a code; lee then logs in with the new password")
    func forgotPassword() async throws {
        // Given lee, activated with pw-lee, and a reset code the IDP issued out of band
        let (mc, ast) = await activatedLee()
        let resetCode = try idp.server.issuePasswordResetCode(for: "lee", tenant: "demo")
        // When lee resets the password through the SDK
        let code = try await code("KssIdpForgotPassword", ast: ast, answers: [
            IdpSdkConstants.USERNAME: "lee", IdpSdkConstants.ACTIVATION_CODE: resetCode, IdpSdkConstants.NEW_PASSWORD: "pw-lee-3",
        ], steps: [[IdpSdkConstants.USERNAME, IdpSdkConstants.ACTIVATION_CODE], [IdpSdkConstants.NEW_PASSWORD]])
        // Then the code logs lee in, and KssIdpLogin takes the new password and no longer the old one
        #expect(await set(mc, code: code, clientId: "KssIdpForgotPassword") == .OK)
        #expect(await idp.login("lee", password: "pw-lee-3", on: mc) == .OK)
        #expect(await idp.login("lee", password: "pw-lee", on: mc) == .kCannotAcquireAuthorizationCode)
        #expect(idp.server.user("lee", tenant: "demo")?.outstandingPasswordResetCodes == 0)
    }

    @Test("an expired reset code ends the flow with activationCodeExpired")
    func expiredResetCode() async throws {
        // Given a reset code for lee that expired
        idp.activeUser("lee", password: "pw-lee")
        let resetCode = try idp.server.issuePasswordResetCode(for: "lee", tenant: "demo", validFor: .seconds(60))
        idp.clock.advance(by: .seconds(60))
        // When lee tries to reset with it
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpForgotPassword", provider: TableProvider([
            IdpSdkConstants.USERNAME: "lee", IdpSdkConstants.ACTIVATION_CODE: resetCode, IdpSdkConstants.NEW_PASSWORD: "pw-lee-3",
        ]), userId: "lee")
        // Then the flow fails with activationCodeExpired, and the password is unchanged
        #expect(result.authorizationCode == nil)
        #expect(result.idpSdkError?.code == .activationCodeExpired)
        #expect(result.idpSdkError?.errorDescription.hasPrefix("reset_code_expired:") == true)
        #expect(await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                    provider: TableProvider(["username": "lee", "password": "pw-lee"]), userId: "lee").authorizationCode != nil)
    }

    @Test("a wrong current password ends in AuthenticationResult.lockout once the policy's limit is reached")
    func wrongCurrentPasswordLocks() async throws {
        // Given a policy of 1 failure
        let idp = TestIDP(lockout: LockoutPolicy(maximumFailures: 1, lockoutDuration: .seconds(60)))
        idp.activeUser("lee", password: "pw-lee")
        // When lee gives a wrong current password
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpChangePassword", provider: TableProvider([
            IdpSdkConstants.USERNAME: "lee", IdpSdkConstants.CURRENT_PASSWORD: "wrong", IdpSdkConstants.NEW_PASSWORD: "pw-lee-2",
        ]), userId: "lee")
        // Then the flow ends in a lockout for the change-password client
        #expect(result.authenticationResult == .lockout(
            lockoutInformation: .temporary(until: idp.clock.now().addingTimeInterval(60)),
            authenticationUserInformation: .init(tenantId: "demo", userId: "lee", clientId: "KssIdpChangePassword")))
    }

    @Test("with shouldHashPin the passwords arrive hashed; the current password as the new one is re-asked, then a new one is set")
    func hashedPasswords() async throws {
        // Given a tenant that expects hashed secrets, and lee with pw-lee
        let idp = TestIDP(secretEncoding: .sha256)
        idp.activeUser("lee", password: "pw-lee")
        let rejections = LockedValue<[String]>([])
        // When the provider first offers the current password as the new one
        let provider = ClosureProvider { data in
            if let rejection = data.previousError { rejections.withLock { $0.append(rejection.errorDescription) } }
            let new = data.previousError == nil ? "pw-lee" : "pw-lee-hashed"
            return .init(credentials: [IdpSdkConstants.USERNAME: "lee", IdpSdkConstants.CURRENT_PASSWORD: "pw-lee", IdpSdkConstants.NEW_PASSWORD: new]
                .filter { data.inputFieldIds.contains($0.key) })
        }
        let changed = await idp.sdk(shouldHashPin: true).run(TestIDP.astClientData().info, clientId: "KssIdpChangePassword", provider: provider, userId: "lee")
        // Then the IDP re-asked with password_reuse, and the second answer completed the flow
        #expect(rejections.withLock { $0.count } == 1)
        #expect(rejections.withLock { $0.first?.hasPrefix("password_reuse:") } == true)
        #expect(changed.authorizationCode != nil)
        // And the new password logs in through a hashing SDK
        let login = await idp.sdk(shouldHashPin: true).run(TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                                          provider: TableProvider(["username": "lee", "password": "pw-lee-hashed"]), userId: "lee")
        #expect(login.authorizationCode != nil)
    }
}
