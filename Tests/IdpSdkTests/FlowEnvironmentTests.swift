import Foundation
@testable import IdpSdk
import IdpPrimitives
import IdpServer
import StackTestSupport
import Testing
import TestSupport

@Suite("Flows in flight refer to the service's shared objects through their stripe's environment")
struct FlowEnvironmentTests {
    /// The reference counts of the objects every flow of `sdk` uses.
    static func counts(_ sdk: IdpSdkService) -> (shared: Int, environments: Int) {
        (Int(_getRetainCount(sdk.pool)) + Int(_getRetainCount(sdk.timers)) + Int(_getRetainCount(sdk.inFlight)),
         sdk.environments.reduce(0) { $0 + Int(_getRetainCount($1)) })
    }

    @Test("each parked flow adds a reference to an environment, not one to the pools, the timers or the in-flight count")
    func parkedFlowsReferToEnvironments() async throws {
        // Given a service whose flows wait at the IDP until released
        let flows = 200
        let idp = TestIDP()
        for u in 0..<10 { idp.activeUser("e\(u)", password: "pw-e\(u)") }
        let transport = HoldingTransport(InProcessTransport(server: idp.server))
        transport.hold()
        let sdk = IdpSdkService(tenantId: idp.tenant, idpUrl: idp.url, certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(clock: idp.clock), transport: transport)
        let provider = ClosureProvider { data in .init(credentials: ["username": data.userId!, "password": "pw-\(data.userId!)"]) }
        let before = Self.counts(sdk)
        let finished = LockedValue(0)

        // When 200 flows are parked there
        _ = await OSThreads.run {
            for n in 0..<flows {
                sdk.getAuthorizationCode(withAstClientData: TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                         interactionInterface: provider, userId: "e\(n % 10)", traceParent: nil) { _ in
                    finished.withLock { $0 += 1 }
                }
            }
            return true
        }
        #expect(transport.heldCount == flows)
        let parked = Self.counts(sdk)

        // Then each holds one more reference to an environment, and the shared objects gained
        // none per flow (a few at most from the SDK's own threads and timer)
        #expect(parked.environments - before.environments == flows)
        #expect(parked.shared - before.shared < 10, "shared objects went from \(before.shared) to \(parked.shared) references")

        // And once released, every flow ends and gives its reference back
        transport.release()
        #expect(await eventually { finished.withLock { $0 } == flows })
        #expect(await eventually { Self.counts(sdk).environments == before.environments })
    }
}

@Suite("A flow reads the service's tenant and configuration through its environment")
struct FlowEnvironmentConfigurationTests {
    @Test("every stripe's environment carries the service's tenant, configuration and hashing choice, uncontrolled by default")
    func environmentsCarryTheService() {
        // Given a service with a configuration of its own
        let sdk = IdpSdkService(tenantId: "realm-7", idpUrl: "https://idp.test", certificateChain: Data(), shouldHashPin: true,
                                configuration: .init(redirectUri: "app://back", maximumSteps: 5))

        // Then each environment its flows read carries them
        for environment in sdk.environments {
            #expect(environment.tenantId == "realm-7")
            #expect(environment.shouldHashPin)
            #expect(environment.configuration.redirectUri == "app://back" && environment.configuration.maximumSteps == 5)
            #expect(!environment.isControlled)
        }
    }
}
