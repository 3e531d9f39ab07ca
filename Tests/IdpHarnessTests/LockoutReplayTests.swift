import Foundation
@testable import IdpHarness
@testable import IdpServer
import Testing

/// The lockout model the system stress judges wrong-password storms by, as a plain value.
@Suite("Lockout replay: the IDP's decisions on a user against the lockout policy")
struct LockoutReplayTests {
    static let start = Date(timeIntervalSince1970: 1_000_000)

    /// One decision: `R` a wrong secret, `L` a wrong secret that locked, `X` an attempt refused as
    /// locked, `C` a completed flow; at `seconds` after the start.
    static func decisions(_ script: [(String, Double)]) -> [AuditEntry] {
        var entries: [AuditEntry] = []
        for (number, (kind, seconds)) in script.enumerated() {
            let time = start.addingTimeInterval(seconds)
            func entry(_ event: AuditEntry.Event, _ detail: String) -> AuditEntry {
                AuditEntry(time: time, event: event, tenant: "t", clientId: "KssIdpLogin", userId: "locker", traceParent: nil, detail: detail,
                           userDecision: UInt64(number + 1))
            }
            switch kind {
            case "R": entries.append(entry(.credentialsRejected, "step 1 attempt 1: invalid_credentials"))
            case "L": entries += [entry(.credentialsRejected, "step 1 attempt 1: invalid_credentials"), entry(.accountLocked, "locked")]
            case "X": entries.append(entry(.lockedAttemptRefused, "refused unevaluated"))
            case "C": entries.append(entry(.codeIssued, "authorization code issued"))
            default: Issue.record("unknown decision \(kind)")
            }
        }
        return entries
    }

    static func replay(_ script: [(String, Double)]) -> SystemStress.LockoutReplay {
        SystemStress.LockoutReplay(decisions(script), limit: 3, lockDuration: .seconds(60))
    }

    @Test("a storm on a still clock: three evaluated, one lock, the rest refused")
    func stormOnStillClock() {
        let replay = Self.replay([("R", 0), ("R", 0), ("L", 0), ("X", 0), ("X", 0)])
        #expect(replay.problem == nil)
        #expect(replay.evaluated == 3 && replay.locks == 1 && !replay.liftedByClock)
    }

    @Test("a clock jump past the lock's end lifts it: the next guesses count again, up to a second lock")
    func clockJumpLiftsTheLock() {
        // Given five guesses, then a jump of 61 s, then three more
        let replay = Self.replay([("R", 0), ("R", 0), ("L", 0), ("X", 30), ("R", 61), ("R", 61), ("L", 61)])
        // Then six were evaluated and two locks set, which is the policy
        #expect(replay.problem == nil)
        #expect(replay.evaluated == 5 + 1 && replay.locks == 2 && replay.liftedByClock)
    }

    @Test("a guess evaluated while the lock runs is a violation")
    func evaluatedWhileLocked() {
        let replay = Self.replay([("R", 0), ("R", 0), ("L", 0), ("R", 59)])
        #expect(replay.problem?.contains("while the lock ran") == true, "\(replay.problem ?? "nil")")
    }

    @Test("a limit reached without a lock, or a lock before the limit, is a violation")
    func wrongLockCount() {
        #expect(Self.replay([("R", 0), ("R", 0), ("R", 0)]).problem?.contains("did not lock") == true)
        #expect(Self.replay([("R", 0), ("L", 0)]).problem?.contains("locked after 2") == true)
    }

    @Test("an attempt refused as locked while no lock runs is a violation; a completed flow clears the counts")
    func refusedWithoutLock() {
        #expect(Self.replay([("R", 0), ("X", 0)]).problem?.contains("no lock ran") == true)
        #expect(Self.replay([("R", 0), ("R", 0), ("L", 0), ("X", 61)]).problem?.contains("no lock ran") == true)
        #expect(Self.replay([("R", 0), ("R", 0), ("C", 0), ("R", 0), ("R", 0)]).problem == nil)
    }
}
