import Foundation
import IdpPrimitives
import IdpServer
import IdpWireFormats
import Testing
import TestSupport

/// Nothing heavy under the server's locks: with the lock profiler on, every SHA-256, every draw
/// of random bytes, every rendered page and every chunk or table made is counted against the
/// labelled locks its thread holds (``LockProfiler/noteHeavyWork(_:)``). The workloads cover the
/// server's paths: logins on two OS threads, each code redeemed and its refresh token used, and
/// an activation whose last step others keep overtaking, so it is decided under its locks.
@Suite("Heavy work under the IDP's locks")
struct HeavyWorkUnderLockTests {
    /// An activation for a new user erin, whose password step (which makes her device's AST client
    /// id) a wrong activation code for erin overtakes on every optimistic try, so it is decided
    /// under its locks. Returns the final response and how many times the step was overtaken.
    static func overtakenActivation(_ browser: Browser, _ overtaker: Overtaker) throws -> (HTTPResponse, Int) {
        try browser.server.addUser("erin", tenant: "demo")
        let code = try browser.server.issueActivationCode(for: "erin", tenant: "demo")
        let step2 = try browser.next(try browser.open("KssIdpEnrollment"), [("username", "erin")])
        let step3 = try browser.next(step2, [("activation-code", code)])
        overtaker.overtake {
            guard let form = try? browser.next(try browser.open("KssIdpEnrollment"), [("username", "erin")]) else { return }
            _ = browser.submit(form, [("activation-code", "wrong")])
        }
        let response = browser.submit(step3, [("password", "pw-erin-1")])
        return (response, overtaker.overtaken)
    }

    /// Logins for alice on two OS threads, each code redeemed and its refresh token used.
    static func loginsRedeemedAndRefreshed(_ browser: Browser, count: Int) async -> Int {
        let refreshed = LockedValue(0)
        await onOSThreads(2) { _ in
            for _ in 0..<count {
                guard let code = try? browser.code() else { continue }
                let exchange = browser.exchange(code)
                guard exchange.status == 200, let refresh = exchange.json["refresh_token"] as? String else { continue }
                if browser.refresh(refresh).status == 200 { refreshed.withLock { $0 += 1 } }
            }
        }
        return refreshed.withLock { $0 }
    }

    /// The server's locks that the profile saw heavy work under, with its kinds; and how much heavy
    /// work it noted in all.
    static func heavyUnderServerLocks(_ report: LockProfiler.Report) -> (under: [String: String], noted: UInt64) {
        let under = report.locks.filter { $0.label.hasPrefix("IdpServer.") && $0.heavyWork > 0 }
        return (Dictionary(uniqueKeysWithValues: under.map { ($0.label, "\($0.heavyWork): \($0.heavyWorkKinds.sorted())") }),
                report.heavyWorkNoted.values.reduce(0, +))
    }

    #if DEBUG
    @Test("logins, redemptions, refreshes and an activation decided under its locks hash, draw and render only outside the server's locks")
    func nothingHeavyUnderTheLocks() async throws {
        try await LockProfilerTurn.take {
            // Given a server whose locks are profiled
            let overtaker = Overtaker(limit: 1_000)
            let browser = Browser(lockout: LockoutPolicy(maximumFailures: 1_000), controller: overtaker)
            LockProfiler.start()
            // When logins run on two threads and an activation is decided under its locks
            let refreshed = await Self.loginsRedeemedAndRefreshed(browser, count: 50)
            let (activation, overtaken) = try Self.overtakenActivation(browser, overtaker)
            let report = LockProfiler.stopReport()
            // Then every path ran, heavy work was noted, and none of it under a server lock
            #expect(refreshed == 100)
            #expect(Browser.fragment(of: activation)["code"] != nil, "\(Browser.fragment(of: activation))")
            #expect(overtaken == IdpServer.optimisticTries + 1)
            let (under, noted) = Self.heavyUnderServerLocks(report)
            #expect(noted > 0, "no heavy work noted: the check was not exercised")
            #expect(Set(report.heavyWorkNoted.keys).isSuperset(of: [.hash, .random, .render]), "\(report.heavyWorkNoted)")
            #expect(under.isEmpty, "\(under)")
        }
    }

    @Test("planted: an activation decided under its locks that draws its device's id there is caught as randomness under the session and user locks")
    func freshValuesDrawnUnderTheLocksAreCaught() async throws {
        try await LockProfilerTurn.take {
            // Given a server that does not make a step's random values before it takes its locks
            let overtaker = Overtaker(limit: 1_000)
            let browser = Browser(lockout: LockoutPolicy(maximumFailures: 1_000), controller: overtaker, plantedBug: .idpDrawsFreshValuesUnderLocks)
            LockProfiler.start()
            // When the activation's last step is decided under its locks
            let (activation, overtaken) = try Self.overtakenActivation(browser, overtaker)
            let report = LockProfiler.stopReport()
            // Then the draw shows under both locks the decision held
            #expect(Browser.fragment(of: activation)["code"] != nil)
            #expect(overtaken == IdpServer.optimisticTries + 1)
            let under = report.locks.filter { $0.heavyWork > 0 }
            for label in ["IdpServer.sessions", "IdpServer.users"] {
                let lock = under.first { $0.label == label }
                #expect(lock?.heavyWorkKinds.contains(.random) == true, "\(label): \(under.map { "\($0.label) \($0.heavyWork) \($0.heavyWorkKinds)" })")
            }
        }
    }
    #endif
}
