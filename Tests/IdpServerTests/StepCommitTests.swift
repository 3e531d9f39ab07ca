import Foundation
import IdpPrimitives
import IdpServer
import Testing

/// Runs another decision at a step's `idp.step` seam, between the step's reading of its copies
/// and its commit, the first `limit` times a step gets there: a decision that overtakes it.
/// Single-threaded: the interloper runs on the overtaken step's thread, and its own step is not
/// overtaken.
final class Overtaker: ExecutionController {
    private let state = LockedValue((overtaken: 0, inside: false))
    private let interloper = LockedValue<(@Sendable () -> Void)?>(nil)
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Sets what overtakes a step.
    func overtake(with body: @escaping @Sendable () -> Void) { interloper.withLock { $0 = body } }

    /// How many times a step was overtaken.
    var overtaken: Int { state.withLock { $0.overtaken } }

    func post(_ seam: Seam, _ job: @escaping @Sendable () -> Void) { job() }

    func pause(at seam: Seam) {
        guard seam.name == "idp.step", let body = interloper.withLock({ $0 }) else { return }
        let overtakes = state.withLock { state -> Bool in
            guard !state.inside, state.overtaken < limit else { return false }
            state.inside = true
            state.overtaken += 1
            return true
        }
        guard overtakes else { return }
        body()
        state.withLock { $0.inside = false }
    }
}

@Suite("A form step decided on copies commits only if they are current")
struct StepCommitTests {
    static func decisions(_ browser: Browser) -> [UInt64] {
        browser.server.userDecisions("alice", tenant: "demo").compactMap(\.userDecision).uniqued()
    }

    /// Alice's browser, on a server whose form steps another wrong password for her overtakes,
    /// between their read and their commit, the first `limit` times.
    static func overtakenBrowser(limit: Int, maximumFailures: Int, plantedBug: PlantedBug? = nil) -> (Overtaker, Browser) {
        let overtaker = Overtaker(limit: limit)
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: maximumFailures), controller: overtaker, plantedBug: plantedBug)
        overtaker.overtake { _ = try? browser.attempt("wrong") }
        return (overtaker, browser)
    }

    @Test("a wrong password whose copy of the user another wrong password overtook is decided again: both count, numbered one after the other")
    func overtakenStepIsDecidedAgain() throws {
        // Given a step that another wrong password for the same user overtakes once, between its
        // read and its commit
        let (overtaker, browser) = Self.overtakenBrowser(limit: 1, maximumFailures: 5)
        // When it is answered with a wrong password
        let answer = try browser.attempt("wrong")
        // Then it was overtaken, and decided again on the record the other one committed: two
        // failures counted, two decisions numbered 1 and 2, and the form served again
        #expect(overtaker.overtaken == 1)
        #expect(answer.status == 200)
        #expect(browser.server.user("alice", tenant: "demo")?.failedAttempts == 2)
        #expect(Self.decisions(browser) == [1, 2])
    }

    @Test("a step overtaken on every try is decided under its locks after the optimistic tries, and counts once")
    func alwaysOvertakenStepEnds() throws {
        // Given a step that another wrong password overtakes every time it reaches its commit
        let (overtaker, browser) = Self.overtakenBrowser(limit: 1_000, maximumFailures: 1_000)
        // When it is answered with a wrong password
        let answer = try browser.attempt("wrong")
        // Then it ends: overtaken on each optimistic try and once more before it decides under
        // its locks, every overtaking failure and its own counted
        let tries = IdpServer.optimisticTries + 1
        #expect(answer.status == 200)
        #expect(overtaker.overtaken == tries)
        #expect(browser.server.user("alice", tenant: "demo")?.failedAttempts == tries + 1)
        #expect(Self.decisions(browser) == Array(1...UInt64(tries + 1)))
    }

    #if DEBUG
    @Test("planted: a commit that does not compare the user's record writes its stale copy over the overtaking decision, and a failure is lost")
    func stalCopyCommitLosesAFailure() throws {
        // Given the same overtaken step, on a server whose commit skips the comparison
        let (overtaker, browser) = Self.overtakenBrowser(limit: 1, maximumFailures: 5, plantedBug: .idpCountsFailureOnStaleCopy)
        // When it is answered with a wrong password
        _ = try browser.attempt("wrong")
        // Then the comparison the fixed commit makes is what kept the count: one failure is lost,
        // and two decisions carry the same number
        #expect(overtaker.overtaken == 1)
        #expect(browser.server.user("alice", tenant: "demo")?.failedAttempts == 1)
        #expect(Self.decisions(browser) == [1])
    }
    #endif
}

extension Array where Element: Hashable {
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
