import Foundation
import IdpPrimitives
import IdpServer
import IdpSdk
import McSdk
import StackTestSupport
import Testing
import TestSupport

/// Nothing heavy under the whole stack's locks: with the lock profiler on, activations and logins
/// through the MasterController, the IdpSdk engine and the in-process IDP hash, draw random bytes,
/// render and allocate large blocks only while their threads hold none of the product's labelled
/// locks (``LockProfiler/noteHeavyWork(_:)``).
@Suite("Heavy work under the stack's locks")
struct StackHeavyWorkTests {
    @Test("six devices each activate a user and log in twice at once: heavy work noted, none under any of the product's locks")
    func nothingHeavyUnderTheStacksLocks() async {
        await LockProfilerTurn.take {
            // Given one IDP and an SDK, profiled
            let idp = TestIDP()
            let sdk = idp.sdk()
            LockProfiler.start()
            // When six devices each activate a user and log in twice, all at once
            let statuses = await withTaskGroup(of: [KSMEventStatusType].self) { group in
                for device in 0..<6 {
                    group.addTask {
                        let masterController = idp.masterController()
                        let user = "heavy-\(device)", password = "pw-heavy-\(device)"
                        var statuses = [await idp.activate(user, password: password, on: masterController, sdk: sdk)]
                        for _ in 0..<2 { statuses.append(await idp.login(user, password: password, on: masterController)) }
                        return statuses
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
            let report = LockProfiler.stopReport()
            // Then every flow ended as documented, heavy work was noted, and none under a lock of
            // the product (the labels the test's own locks do not use)
            #expect(statuses.count == 18 && statuses.allSatisfy { $0 == .kOk }, "\(statuses)")
            #expect(Set(report.heavyWorkNoted.keys).isSuperset(of: [.hash, .random, .render]), "\(report.heavyWorkNoted)")
            let under = report.locks.filter { $0.heavyWork > 0 }.map { "\($0.label): \($0.heavyWork) \($0.heavyWorkKinds.sorted())" }
            #expect(under.isEmpty, "\(under)")
            let labels = Set(report.locks.map(\.label))
            #expect(labels.isSuperset(of: ["IdpSdk.Flow", "IdpSdk.WorkerPool", "IdpServer.sessions", "IdpServer.users", "IdpServer.grants"]), "\(labels)")
        }
    }
}
