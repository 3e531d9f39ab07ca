import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk
import Synchronization
import Testing
import StackTestSupport
import TestSupport

@Suite("Lockout seen from the IdpSdk", .heavy)
struct LockoutFlowTests {
    /// A provider that gives `password` once per flow and ends the flow when the IDP re-asks.
    static func oneTry(_ password: String, user: String = "lee") -> ClosureProvider {
        ClosureProvider { data in
            data.previousError == nil
                ? .init(credentials: ["username": user, "password": password])
                : .init(error: IdpSdkError("test", 1, "gave up after a rejection"))
        }
    }

    @Test("wrong passwords end in AuthenticationResult.lockout with lockedUntil; the right password is refused until then")
    func lockoutThroughTheSdk() async throws {
        let idp = TestIDP(lockout: LockoutPolicy(maximumFailures: 3, lockoutDuration: .seconds(120)))
        idp.activeUser("lee", password: "pw-lee")
        func login(_ password: String) async -> IdpSdkResult {
            await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: Self.oneTry(password), userId: "lee")
        }
        for _ in 0..<2 {
            let rejected = await login("wrong")
            #expect(rejected.authenticationResult == nil)
            #expect(rejected.idpSdkError == IdpSdkError("test", 1, "gave up after a rejection"))
        }
        let locking = await login("wrong")
        let lockedUntil = idp.clock.now().addingTimeInterval(120)
        let lee = AuthenticationUserInformation(tenantId: "demo", userId: "lee", clientId: "KssIdpLogin")
        #expect(locking.authenticationResult == .lockout(lockoutInformation: .temporary(until: lockedUntil), authenticationUserInformation: lee))
        #expect(locking.idpSdkError?.code == .temporarilyLocked)
        #expect(locking.idpSdkError?.lockoutInformation?.isPermanent == false)
        let rightButLocked = await login("pw-lee")
        #expect(rightButLocked.authenticationResult == .lockout(lockoutInformation: .temporary(until: lockedUntil), authenticationUserInformation: lee))
        idp.clock.set(lockedUntil)
        guard case .userLogin(let login)? = await login("pw-lee").authenticationResult else { Issue.record("expected a login"); return }
        #expect(!login.authorizationCode.isEmpty && login.roleName == "KssIdpLogin" && login.serviceInformation == "demo")
    }

    @Test("a permanent lock is .lockout with isPermanent and the code permanentlyLocked")
    func permanentThroughTheSdk() async throws {
        let idp = TestIDP(lockout: LockoutPolicy(maximumFailures: 5, permanentLockoutAfterTotalFailures: 1))
        idp.activeUser("lee", password: "pw-lee")
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: Self.oneTry("wrong"), userId: "lee")
        #expect(result.authenticationResult == .lockout(lockoutInformation: .permanent,
                                                        authenticationUserInformation: .init(tenantId: "demo", userId: "lee", clientId: "KssIdpLogin")))
        #expect(result.idpSdkError?.code == .permanentlyLocked)
        #expect(KSMEventStatusType(lockout: .permanent) == .kPinBlocked)
        #expect(KSMEventStatusType(lockout: .temporary(until: Date())) == .kTemporaryLocked)
    }

    @Test("1,000 concurrent IdpSdk flows guessing for one user with a limit of 4: exactly 4 evaluated failures, the rest locked out")
    func concurrentFlowsAreExact() async throws {
        let limit = 4, flows = 1_000
        let idp = TestIDP(lockout: LockoutPolicy(maximumFailures: limit, lockoutDuration: .seconds(600)))
        idp.activeUser("lee", password: "pw-lee")
        let sdk = idp.sdk()
        let provider = Self.oneTry("wrong")
        let results = await withTaskGroup(of: AuthenticationResult?.self) { group in
            for _ in 0..<flows {
                group.addTask {
                    await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "lee").authenticationResult
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let lockouts = results.filter { if case .lockout = $0 { true } else { false } }.count
        #expect(results.count == flows)
        #expect(lockouts == flows - limit + 1)
        #expect(idp.count(.credentialsRejected) == limit)
        #expect(idp.count(.accountLocked) == 1)
        #expect(idp.count(.lockedAttemptRefused) == flows - limit)
        #expect(idp.server.user("lee", tenant: "demo")?.totalFailedAttempts == limit)
    }
}
