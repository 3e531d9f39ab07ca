import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpServer
import Testing
import TestSupport

extension Browser {
    /// One login attempt for alice with `password` in a fresh session: the IDP's answer.
    func attempt(_ password: String) throws -> HTTPResponse {
        let form = try XHTMLForm.parse(try #require(authorize().bodyText))
        return submit(form, [("username", "alice"), ("password", password)])
    }

    /// A session's login form, ready to be answered (for answering many at once).
    func openForm() throws -> XHTMLForm {
        try XHTMLForm.parse(try #require(authorize().bodyText))
    }

    /// The lock an answer reports, read from its redirect as the SDK reads it; `nil` if none.
    static func lockout(in response: HTTPResponse) -> LockoutInformation? {
        guard response.status == 302, let location = response.headers["Location"],
              let fragment = location.split(separator: "#", maxSplits: 1).dropFirst().first,
              let pairs = try? FormURLEncoding.decode(String(fragment)) else { return nil }
        let parameters = Dictionary(pairs.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        return parameters["error"].flatMap { LockoutInformation(error: $0, lockedUntil: parameters["locked_until"]) }
    }

    func count(_ event: AuditEntry.Event) -> Int { server.auditLog().filter { $0.event == event }.count }
}

@Suite("Lockout at the IDP", .heavy)
struct LockoutTests {
    @Test("N wrong passwords lock the account until lockedUntil; while locked even the right password is refused unevaluated")
    func temporaryLockout() throws {
        // Given a policy of 3 failures and 60 s
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: 3, lockoutDuration: .seconds(60)))
        // When two wrong passwords are given, the form is re-served (no lock yet)
        for _ in 0..<2 {
            let answer = try browser.attempt("wrong")
            #expect(answer.status == 200)
            #expect(Browser.lockout(in: answer) == nil)
        }
        #expect(browser.server.user("alice", tenant: "demo")?.failedAttempts == 2)
        // The third locks, and says until when
        let locking = try browser.attempt("wrong")
        let lockedUntil = browser.clock.now().addingTimeInterval(60)
        #expect(Browser.lockout(in: locking) == .temporary(until: lockedUntil))
        #expect(browser.server.user("alice", tenant: "demo")?.lockout == .temporary(until: lockedUntil))
        // Then the right password during the lock is refused at once and not counted
        browser.clock.advance(by: .seconds(59))
        let refused = try browser.attempt("pw-alice")
        #expect(Browser.lockout(in: refused) == .temporary(until: lockedUntil))
        #expect(browser.count(.credentialsRejected) == 3)
        #expect(browser.count(.accountLocked) == 1)
        #expect(browser.count(.lockedAttemptRefused) == 1)
        #expect(browser.server.user("alice", tenant: "demo")?.totalFailedAttempts == 3)
        // And after the lock the right password works and clears every count
        browser.clock.advance(by: .seconds(1))
        #expect(try browser.attempt("pw-alice").status == 302)
        let user = try #require(browser.server.user("alice", tenant: "demo"))
        #expect(user.lockout == nil && user.failedAttempts == 0 && user.totalFailedAttempts == 0 && user.lockouts == 0)
    }

    @Test("each further lockout lasts longer, up to the maximum")
    func growingLockouts() throws {
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: 1, lockoutDuration: .seconds(10), durationMultiplier: 3,
                                                     maximumLockoutDuration: .seconds(60)))
        var durations: [TimeInterval] = []
        for _ in 0..<4 {
            let lock = try #require(Browser.lockout(in: try browser.attempt("wrong")))
            durations.append(lock.lockedUntil.timeIntervalSince(browser.clock.now()))
            browser.clock.set(lock.lockedUntil)
        }
        #expect(durations == [10, 30, 60, 60])
        #expect(browser.server.user("alice", tenant: "demo")?.lockouts == 4)
    }

    @Test("the wrong secret that reaches the configured total locks for good; only unlock lifts it")
    func permanentLockout() throws {
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: 2, lockoutDuration: .seconds(10), permanentLockoutAfterTotalFailures: 4))
        _ = try browser.attempt("wrong")
        let first = try #require(Browser.lockout(in: try browser.attempt("wrong")))
        #expect(!first.isPermanent)
        browser.clock.set(first.lockedUntil)
        _ = try browser.attempt("wrong")
        let second = try #require(Browser.lockout(in: try browser.attempt("wrong")))
        #expect(second == .permanent && second.isPermanent && second.lockedUntil == .distantFuture)
        browser.clock.advance(by: .seconds(365 * 24 * 3600))
        #expect(Browser.lockout(in: try browser.attempt("pw-alice")) == .permanent)
        try browser.server.unlock("alice", tenant: "demo")
        #expect(try browser.attempt("pw-alice").status == 302)
        #expect(throws: IdpServerError(.unknownUser("nobody"))) { try browser.server.unlock("nobody", tenant: "demo") }
    }

    @Test("a missing field or an unknown user name counts against nobody")
    func onlyWrongSecretsCount() throws {
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: 1))
        let form = try browser.openForm()
        #expect(browser.submit(form, [("username", "alice"), ("password", "")]).status == 200)
        #expect(browser.submit(try browser.openForm(), [("username", "mallory"), ("password", "x")]).status == 200)
        #expect(browser.server.user("alice", tenant: "demo")?.lockout == nil)
        #expect(try browser.attempt("pw-alice").status == 302)
    }

    @Test("lockout is off by default: wrong secrets are only counted")
    func offByDefault() throws {
        let browser = Browser()
        for _ in 0..<10 { #expect(try browser.attempt("wrong").status == 200) }
        #expect(browser.server.user("alice", tenant: "demo")?.failedAttempts == 10)
        #expect(try browser.attempt("pw-alice").status == 302)
    }

    @Test("the wrong answer that ends a flow (its last attempt) counts towards the lock and is audited as rejected, before the flow's end")
    func lastAttemptIsAudited() throws {
        // Given a lock after 5 wrong secrets and a login client that allows 3 attempts per step
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: 5, lockoutDuration: .seconds(60)))
        // When one session answers wrongly three times
        var form = try browser.openForm()
        var answer = browser.submit(form, [("username", "alice"), ("password", "wrong-1")])
        form = try XHTMLForm.parse(try #require(answer.bodyText))
        answer = browser.submit(form, [("username", "alice"), ("password", "wrong-2")])
        form = try XHTMLForm.parse(try #require(answer.bodyText))
        answer = browser.submit(form, [("username", "alice"), ("password", "wrong-3")])
        // Then the flow ends, all three counted, and all three are in the audit, each a decision
        // of its own, the last with the flow's end
        #expect(answer.status == 302)
        #expect(browser.server.user("alice", tenant: "demo")?.failedAttempts == 3)
        #expect(browser.count(.credentialsRejected) == 3)
        let decisions = browser.server.userDecisions("alice", tenant: "demo")
        let events: [AuditEntry.Event] = decisions.map(\.event)
        #expect(events == [.credentialsRejected, .credentialsRejected, .credentialsRejected, .flowFailed])
        let numbers: [UInt64] = decisions.compactMap(\.userDecision)
        #expect(numbers == [1, 2, 3, 3])
        let log: [AuditEntry.Event] = browser.server.auditLog().map(\.event)
        let lastRejected = try #require(log.lastIndex(of: .credentialsRejected))
        let failed = try #require(log.lastIndex(of: .flowFailed))
        #expect(lastRejected < failed)
    }

    @Test("1,000 simultaneous wrong attempts on OS threads with a limit of 5: exactly 5 evaluated, 995 refused as locked",
          arguments: [5])
    func exactUnderConcurrency(limit: Int) async throws {
        // Given 1,000 open login sessions for alice (each answers once)
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: limit, lockoutDuration: .seconds(300)))
        let attempts = 1_000
        let forms = try (0..<attempts).map { _ in try browser.openForm() }
        let locks = LockedValue<[LockoutInformation?]>([])
        // When 1,000 OS threads answer with a wrong password at once
        await onOSThreads(attempts, stackSize: 256 * 1024) { index in
            let answer = browser.submit(forms[index], [("username", "alice"), ("password", "wrong")])
            let lock = Browser.lockout(in: answer)
            locks.withLock { $0.append(lock) }
        }
        // Then exactly `limit` were evaluated, the limit-th of them locked, and the rest were refused unevaluated
        let results = locks.withLock { $0 }
        #expect(results.count == attempts)
        #expect(results.filter { $0 == nil }.count == limit - 1)
        #expect(results.filter { $0 != nil }.count == attempts - limit + 1)
        #expect(browser.count(.credentialsRejected) == limit)
        #expect(browser.count(.accountLocked) == 1)
        #expect(browser.count(.lockedAttemptRefused) == attempts - limit)
        let user = try #require(browser.server.user("alice", tenant: "demo"))
        #expect(user.totalFailedAttempts == limit && user.lockouts == 1)
        // And read back in the order the IDP decided them (the audit appends after the locks are
        // released, in any order), the first `limit` decisions evaluated, the last of them locked,
        // and every later one was refused
        let decisions = browser.server.userDecisions("alice", tenant: "demo")
        let numbers: [UInt64] = decisions.compactMap(\.userDecision)
        var expectedNumbers: [UInt64] = (1...UInt64(attempts)).map { $0 }
        expectedNumbers.insert(UInt64(limit), at: limit)   // the lock is the limit-th decision's second entry
        #expect(numbers == expectedNumbers)
        let firstEvents: [AuditEntry.Event] = decisions.prefix(limit + 1).map(\.event)
        var expectedEvents: [AuditEntry.Event] = Array(repeating: .credentialsRejected, count: limit)
        expectedEvents.append(.accountLocked)
        #expect(firstEvents == expectedEvents)
        #expect(decisions.dropFirst(limit + 1).allSatisfy { $0.event == .lockedAttemptRefused })
        // And the right password is refused during the lock
        #expect(Browser.lockout(in: try browser.attempt("pw-alice")) != nil)
    }
}
