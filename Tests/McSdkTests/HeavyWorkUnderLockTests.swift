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
    /// Six devices, each activating a user and logging in twice, all at once, through one SDK and
    /// `idp`, with the lock profiler on: every flow's status, and the profile.
    static func sixDevices(on idp: TestIDP) async -> (statuses: [KSMEventStatusType], report: LockProfiler.Report) {
        let sdk = idp.sdk()
        LockProfiler.start()
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
        return (statuses, LockProfiler.stopReport())
    }

    /// The locks the profile saw heavy work under: label, count and kinds.
    static func heavyUnderLocks(_ report: LockProfiler.Report) -> [String] {
        report.locks.filter { $0.heavyWork > 0 }.map { "\($0.label): \($0.heavyWork) \($0.heavyWorkKinds.sorted())" }
    }

    @Test("six devices each activate a user and log in twice at once: heavy work noted, none under any of the product's locks")
    func nothingHeavyUnderTheStacksLocks() async {
        await LockProfilerTurn.take {
            // Given one IDP and an SDK, profiled
            // When six devices each activate a user and log in twice, all at once
            let (statuses, report) = await Self.sixDevices(on: TestIDP())
            // Then every flow ended as documented, heavy work was noted, and none under a lock of
            // the product (the labels the test's own locks do not use)
            #expect(statuses.count == 18 && statuses.allSatisfy { $0 == .kOk }, "\(statuses)")
            #expect(Set(report.heavyWorkNoted.keys).isSuperset(of: [.hash, .random, .render]), "\(report.heavyWorkNoted)")
            let under = Self.heavyUnderLocks(report)
            #expect(under.isEmpty, "\(under)")
            let labels = Set(report.locks.map(\.label))
            #expect(labels.isSuperset(of: ["IdpSdk.Flow", "IdpSdk.WorkerPool", "IdpSdk.FlowTimers", "IdpServer.sessions", "IdpServer.users", "IdpServer.grants"]), "\(labels)")
        }
    }

    #if DEBUG
    @Test("planted: an IDP that checks the code verifier inside the grant shard's lock is caught as SHA-256 under IdpServer.grants")
    func verifierCheckedUnderTheGrantLockIsCaught() async {
        await LockProfilerTurn.take {
            // Given an IDP that makes each code verifier's S256 challenge under its grant lock
            // When the same six devices activate and log in
            let (statuses, report) = await Self.sixDevices(on: TestIDP(plantedBug: .idpChecksVerifierUnderGrantLock))
            // Then the flows still end as documented, and the check names the lock and the kind:
            // one hash under it for each of the 18 codes redeemed
            #expect(statuses.count == 18 && statuses.allSatisfy { $0 == .kOk }, "\(statuses)")
            let grants = report.locks.first { $0.label == "IdpServer.grants" }
            #expect(grants?.heavyWork == 18, "\(Self.heavyUnderLocks(report))")
            #expect(grants?.heavyWorkKinds == [.hash])
            #expect(Self.heavyUnderLocks(report).count == 1, "\(Self.heavyUnderLocks(report))")
        }
    }
    #endif
}
