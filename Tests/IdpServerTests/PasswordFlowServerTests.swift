import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpServer
import Synchronization
import Testing
import TestSupport

extension Browser {
    /// Step 1 of `clientId`'s flow in a fresh session.
    func open(_ clientId: String) throws -> XHTMLForm {
        let query = [
            ("client_id", clientId), ("redirect_uri", Self.redirect), ("response_type", "code"), ("scope", "openid"),
            ("code_challenge", Self.rfcChallenge), ("code_challenge_method", "S256"),
        ]
        return try XHTMLForm.parse(try #require(authorize(query).bodyText))
    }

    /// Answers `form` and reads the form served next: the next step, or the same one re-asked.
    func next(_ form: XHTMLForm, _ answers: [(String, String)]) throws -> XHTMLForm {
        let response = submit(form, answers)
        #expect(response.status == 200)
        return try XHTMLForm.parse(try #require(response.bodyText))
    }

    /// The parameters of a redirect's fragment (`code`, or `error` and `error_description`).
    static func fragment(of response: HTTPResponse) -> [String: String] {
        guard response.status == 302, let location = response.headers["Location"],
              let fragment = location.split(separator: "#", maxSplits: 1).dropFirst().first,
              let pairs = try? FormURLEncoding.decode(String(fragment)) else { return [:] }
        return Dictionary(pairs.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// Step 1 of `KssIdpChangePassword` answered for alice with `current`: the response.
    func proveCurrent(_ current: String) throws -> (form: XHTMLForm, response: HTTPResponse) {
        let form = try open("KssIdpChangePassword")
        return (form, submit(form, [("username", "alice"), ("current-password", current)]))
    }

    /// A whole `KssIdpChangePassword` flow for alice: the final response.
    func changePassword(current: String, new: String) throws -> HTTPResponse {
        let step2 = try XHTMLForm.parse(try #require(try proveCurrent(current).response.bodyText))
        return submit(step2, [("new-password", new)])
    }

    /// Step 1 of `KssIdpForgotPassword` answered for alice with `resetCode`: the response.
    func proveResetCode(_ resetCode: String) throws -> (form: XHTMLForm, response: HTTPResponse) {
        let form = try open("KssIdpForgotPassword")
        return (form, submit(form, [("username", "alice"), ("activation-code", resetCode)]))
    }

    /// A whole `KssIdpForgotPassword` flow for alice: the final response.
    func resetPassword(code resetCode: String, new: String) throws -> HTTPResponse {
        let step1 = try proveResetCode(resetCode).response
        guard step1.status == 200 else { return step1 }
        let step2 = try XHTMLForm.parse(try #require(step1.bodyText))
        guard step2.errorCode == nil else { return step1 }   // step 1 re-asked: the code was refused
        return submit(step2, [("new-password", new)])
    }

    /// Whether a `KssIdpLogin` for alice with `password` ends with an authorization code.
    func logsIn(_ password: String) throws -> Bool {
        Browser.fragment(of: try attempt(password))["code"] != nil
    }

    var alice: IdpUserSnapshot? { server.user("alice", tenant: "demo") }
}

@Suite("KssIdpChangePassword at the IDP")
struct ChangePasswordServerTests {
    @Test("proving the current password and choosing a new one issues a code; the old password then fails and the new one logs in")
    func changesThePassword() throws {
        // Given alice with pw-alice, and one earlier wrong login
        let browser = Browser()
        #expect(try !browser.logsIn("wrong"))
        // When she proves pw-alice and chooses pw-new
        let (_, proven) = try browser.proveCurrent("pw-alice")
        let step2 = try XHTMLForm.parse(try #require(proven.bodyText))
        #expect(step2.visibleInputs.map(\.name) == ["new-password"])
        #expect(step2.visibleInputs.first?.type == "password")
        let done = browser.submit(step2, [("new-password", "pw-new")])
        // Then the flow ends with a code that redeems for alice's tokens at the token endpoint
        let code = try #require(Browser.fragment(of: done)["code"])
        let exchange = browser.exchange(code, clientId: "KssIdpChangePassword")
        #expect(exchange.status == 200)
        #expect(exchange.json["user_id"] as? String == "alice")
        // And the failure count is cleared, the old password fails and the new one logs in
        #expect(browser.alice?.failedAttempts == 0)
        #expect(try !browser.logsIn("pw-alice"))
        #expect(try browser.logsIn("pw-new"))
        // And the audit log says so, without any password or code
        #expect(browser.count(.passwordChanged) == 1)
        let log = browser.server.auditLog().map(\.description).joined(separator: "\n")
        for secret in ["pw-alice", "pw-new", code] { #expect(!log.contains(secret)) }
    }

    @Test("a wrong current password re-asks step 1 and counts as a wrong login password does")
    func wrongCurrentPasswordCounts() throws {
        // Given alice
        let browser = Browser()
        // When she gives a wrong current password
        let (_, response) = try browser.proveCurrent("wrong")
        // Then step 1 is re-asked with the rejection, and one wrong secret is counted
        let again = try XHTMLForm.parse(try #require(response.bodyText))
        #expect(again.errorCode == "invalid_credentials")
        #expect(again.visibleInputs.map(\.name) == ["username", "current-password"])
        #expect(browser.alice?.failedAttempts == 1)
        #expect(browser.count(.credentialsRejected) == 1)
        // And her password is unchanged
        #expect(try browser.logsIn("pw-alice"))
    }

    @Test("wrong current passwords and wrong login passwords add up to one lockout, which then refuses the login too")
    func lockoutByWrongCurrentPasswords() throws {
        // Given a policy of 3 failures, and one wrong login password
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: 3, lockoutDuration: .seconds(60)))
        #expect(try !browser.logsIn("wrong"))
        // When two change-password flows give wrong current passwords
        #expect(try browser.proveCurrent("wrong-1").response.status == 200)
        let locking = try browser.proveCurrent("wrong-2").response
        // Then the second locks the account, as a third wrong login password would
        let until = browser.clock.now().addingTimeInterval(60)
        #expect(Browser.lockout(in: locking) == .temporary(until: until))
        #expect(browser.count(.accountLocked) == 1)
        // And while locked, neither the right current password nor the right login password is looked at
        #expect(Browser.lockout(in: try browser.proveCurrent("pw-alice").response) == .temporary(until: until))
        #expect(Browser.lockout(in: try browser.attempt("pw-alice")) == .temporary(until: until))
        #expect(browser.count(.lockedAttemptRefused) == 2)
        // And after the lock the password is still pw-alice
        browser.clock.set(until)
        #expect(try browser.logsIn("pw-alice"))
    }

    @Test("a new password that is too short or equal to the current one re-asks step 2 with the rule, never echoing it")
    func newPasswordRules() throws {
        // Given alice past step 1
        let browser = Browser()
        let step2 = try XHTMLForm.parse(try #require(try browser.proveCurrent("pw-alice").response.bodyText))
        // When she chooses a 3-character password
        let tooShort = browser.submit(step2, [("new-password", "q7!")])
        let shortForm = try XHTMLForm.parse(try #require(tooShort.bodyText))
        // Then step 2 is re-asked naming the minimum length, without the value
        #expect(shortForm.errorCode == "password_policy")
        #expect(shortForm.errorMessage == "The password must have at least 4 characters.")
        #expect(shortForm.visibleInputs.map(\.name) == ["new-password"])
        #expect(!(tooShort.bodyText ?? "").contains("q7!"))
        // When she then chooses her current password
        let same = browser.submit(shortForm, [("new-password", "pw-alice")])
        let sameForm = try XHTMLForm.parse(try #require(same.bodyText))
        // Then step 2 is re-asked saying it must differ, without the value
        #expect(sameForm.errorCode == "password_reuse")
        #expect(sameForm.errorMessage == "The new password must differ from the current one.")
        #expect(!(same.bodyText ?? "").contains("pw-alice"))
        // And neither counted against her, and a good third answer completes the flow
        #expect(browser.alice?.totalFailedAttempts == 0)
        #expect(Browser.fragment(of: browser.submit(sameForm, [("new-password", "pw-better")]))["code"] != nil)
        #expect(try browser.logsIn("pw-better"))
    }

    @Test("an abandoned or expired change-password flow changes nothing")
    func abandonedFlowChangesNothing() throws {
        // Given alice past step 1 in one flow, and past a rejected step 2 in another
        let browser = Browser()
        _ = try browser.proveCurrent("pw-alice")
        let step2 = try XHTMLForm.parse(try #require(try browser.proveCurrent("pw-alice").response.bodyText))
        _ = browser.submit(step2, [("new-password", "x")])
        // When the session expires and the abandoned step 2 is answered late
        browser.clock.advance(by: .seconds(1801))
        let late = browser.submit(step2, [("new-password", "pw-late")])
        // Then it is refused, and the old password still works while the new one does not
        #expect(late.bodyText.flatMap(XHTMLForm.errorNotice(in:))?.code == "session_expired")
        #expect(try browser.logsIn("pw-alice"))
        #expect(try !browser.logsIn("pw-late"))
        #expect(browser.count(.passwordChanged) == 0)
    }

    @Test("a flow proven against a password that another flow changed meanwhile cannot overwrite the change")
    func changedMeanwhile() throws {
        // Given two flows past step 1 with pw-alice
        let browser = Browser()
        let first = try XHTMLForm.parse(try #require(try browser.proveCurrent("pw-alice").response.bodyText))
        let second = try XHTMLForm.parse(try #require(try browser.proveCurrent("pw-alice").response.bodyText))
        // When the first completes, then the second
        #expect(Browser.fragment(of: browser.submit(first, [("new-password", "pw-first")]))["code"] != nil)
        let late = Browser.fragment(of: browser.submit(second, [("new-password", "pw-second")]))
        // Then the second ends with password_changed and the first one's password stands
        #expect(late["error"] == "password_changed")
        #expect(late["code"] == nil)
        #expect(try browser.logsIn("pw-first"))
        #expect(try !browser.logsIn("pw-second"))
    }
}

@Suite("KssIdpForgotPassword at the IDP")
struct ForgotPasswordServerTests {
    @Test("a reset code and a new password issue a code, consume the reset code and clear the failure count")
    func resetsThePassword() throws {
        // Given alice with two wrong logins and a reset code
        let browser = Browser()
        for _ in 0..<2 { #expect(try !browser.logsIn("wrong")) }
        let resetCode = try browser.server.issuePasswordResetCode(for: "alice", tenant: "demo")
        #expect(browser.alice?.outstandingPasswordResetCodes == 1)
        #expect(browser.alice?.outstandingActivationCodes == 0)
        // When she answers username and code, then a new password
        let (form, step1) = try browser.proveResetCode(resetCode)
        #expect(form.visibleInputs.map(\.name) == ["username", "activation-code"])
        let step2 = try XHTMLForm.parse(try #require(step1.bodyText))
        #expect(step2.visibleInputs.map(\.name) == ["new-password"])
        let done = browser.submit(step2, [("new-password", "pw-reset")])
        // Then the code redeems, the reset code is spent and the counts are cleared
        let code = try #require(Browser.fragment(of: done)["code"])
        #expect(browser.exchange(code, clientId: "KssIdpForgotPassword").json["user_id"] as? String == "alice")
        #expect(browser.alice?.outstandingPasswordResetCodes == 0)
        #expect(browser.alice?.totalFailedAttempts == 0)
        // And the old password fails, the new one logs in, and the audit log holds no secret
        #expect(try !browser.logsIn("pw-alice"))
        #expect(try browser.logsIn("pw-reset"))
        #expect(browser.count(.passwordReset) == 1)
        #expect(browser.count(.passwordResetCodeIssued) == 1)
        let log = browser.server.auditLog().map(\.description).joined(separator: "\n")
        for secret in [resetCode, "pw-reset", code] { #expect(!log.contains(secret)) }
    }

    @Test("a wrong reset code is re-asked and counted toward lockout")
    func wrongCodeCounts() throws {
        // Given a policy of 2 failures and a reset code for alice
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: 2, lockoutDuration: .seconds(60)))
        let resetCode = try browser.server.issuePasswordResetCode(for: "alice", tenant: "demo")
        // When a wrong code is given
        let first = try XHTMLForm.parse(try #require(try browser.proveResetCode("000000000000").response.bodyText))
        // Then step 1 is re-asked and one wrong secret counted
        #expect(first.errorCode == "invalid_reset_code")
        #expect(browser.alice?.failedAttempts == 1)
        // When a second wrong code is given, the account locks, and even the right code is refused
        let locking = browser.submit(first, [("username", "alice"), ("activation-code", "111111111111")])
        #expect(Browser.lockout(in: locking) != nil)
        #expect(Browser.lockout(in: try browser.proveResetCode(resetCode).response) != nil)
        // And the right code is still outstanding and the password unchanged
        #expect(browser.alice?.outstandingPasswordResetCodes == 1)
        #expect(Browser.lockout(in: try browser.attempt("pw-alice")) != nil)
    }

    @Test("an expired reset code ends the flow with reset_code_expired, at step 1 or at completion")
    func expiredCode() throws {
        // Given a reset code valid for 10 minutes, and a flow past step 1 with it
        let browser = Browser()
        let resetCode = try browser.server.issuePasswordResetCode(for: "alice", tenant: "demo", validFor: .seconds(600))
        let pastStep1 = try XHTMLForm.parse(try #require(try browser.proveResetCode(resetCode).response.bodyText))
        // When 10 minutes pass
        browser.clock.advance(by: .seconds(600))
        // Then a new flow ends at step 1, and the flow past step 1 ends at completion, both with reset_code_expired
        #expect(Browser.fragment(of: try browser.proveResetCode(resetCode).response)["error"] == "reset_code_expired")
        #expect(Browser.fragment(of: browser.submit(pastStep1, [("new-password", "pw-reset")]))["error"] == "reset_code_expired")
        // And the password is unchanged, nothing counted
        #expect(browser.alice?.totalFailedAttempts == 0)
        #expect(try browser.logsIn("pw-alice"))
    }

    @Test("a used reset code is refused as a wrong one; an abandoned flow leaves the code usable")
    func usedAndAbandonedCodes() throws {
        // Given a reset code and a flow abandoned after step 1
        let browser = Browser()
        let resetCode = try browser.server.issuePasswordResetCode(for: "alice", tenant: "demo")
        _ = try browser.proveResetCode(resetCode)
        #expect(try browser.logsIn("pw-alice"))
        #expect(browser.alice?.outstandingPasswordResetCodes == 1)
        // When the code is used to completion
        #expect(Browser.fragment(of: try browser.resetPassword(code: resetCode, new: "pw-once"))["code"] != nil)
        // Then a second flow with it finds no pending reset (it was the only one)
        let again = try XHTMLForm.parse(try #require(try browser.proveResetCode(resetCode).response.bodyText))
        #expect(again.errorCode == "reset_not_pending")
        // And with another code outstanding, the used one is a wrong secret
        _ = try browser.server.issuePasswordResetCode(for: "alice", tenant: "demo")
        let reused = try XHTMLForm.parse(try #require(try browser.proveResetCode(resetCode).response.bodyText))
        #expect(reused.errorCode == "invalid_reset_code")
        #expect(browser.alice?.failedAttempts == 1)
        #expect(try browser.logsIn("pw-once"))
    }

    @Test("reset codes are for active users only, and activation codes and reset codes do not stand in for each other")
    func codesAreSeparate() throws {
        // Given a pending user and alice with an activation code (a second device)
        let browser = Browser()
        try browser.server.addUser("pat", tenant: "demo")
        #expect(throws: IdpServerError(.invalidArgument("user 'pat' is not active; a pending user activates with an activation code"))) {
            _ = try browser.server.issuePasswordResetCode(for: "pat", tenant: "demo")
        }
        #expect(throws: IdpServerError(.unknownUser("nobody"))) { _ = try browser.server.issuePasswordResetCode(for: "nobody", tenant: "demo") }
        let activationCode = try browser.server.issueActivationCode(for: "alice", tenant: "demo")
        _ = try browser.server.issuePasswordResetCode(for: "alice", tenant: "demo")
        // When the activation code is given as a reset code
        let refused = try XHTMLForm.parse(try #require(try browser.proveResetCode(activationCode).response.bodyText))
        // Then it is a wrong reset code
        #expect(refused.errorCode == "invalid_reset_code")
    }

    @Test("one reset code proven by 64 flows on OS threads, then completed by all at once: exactly one completes and sets its password")
    func concurrentUseOfOneCode() async throws {
        // Given one reset code, and 64 flows past step 1 with it, proven at once on OS threads
        let browser = Browser()
        let resetCode = try browser.server.issuePasswordResetCode(for: "alice", tenant: "demo")
        let flows = 64
        let proven = LockedValue<[Int: XHTMLForm]>([:])
        await onOSThreads(flows) { index in
            guard let response = try? browser.proveResetCode(resetCode).response,
                  let form = response.bodyText.flatMap({ try? XHTMLForm.parse($0) }), form.errorCode == nil else { return }
            proven.withLock { $0[index] = form }
        }
        let step2 = proven.withLock { $0 }
        #expect(step2.count == flows)
        // When all 64 answer step 2 at once, each with its own new password
        let outcomes = LockedValue<[(password: String, fragment: [String: String])]>([])
        await onOSThreads(flows) { index in
            guard let form = step2[index] else { return }
            let password = "pw-thread-\(index)"
            let fragment = Browser.fragment(of: browser.submit(form, [("new-password", password)]))
            outcomes.withLock { $0.append((password, fragment)) }
        }
        // Then exactly one ended with a code, and every other ended with reset_code_used
        let results = outcomes.withLock { $0 }
        let winners = results.filter { $0.fragment["code"] != nil }
        let losers = results.filter { $0.fragment["code"] == nil }
        #expect(results.count == flows)
        #expect(winners.count == 1)
        #expect(losers.count == flows - 1 && losers.allSatisfy { $0.fragment["error"] == "reset_code_used" })
        // And only the winner's password logs in, and the code is spent
        let winner = try #require(winners.first)
        #expect(try browser.logsIn(winner.password))
        #expect(try !browser.logsIn(losers.first?.password ?? "pw-alice"))
        #expect(browser.alice?.outstandingPasswordResetCodes == 0)
        #expect(browser.count(.passwordReset) == 1)
    }
}


@Suite("Password clients' validation")
struct PasswordClientValidationTests {
    @Test("refuses change- and forgot-password clients whose steps make no sense")
    func invalidPasswordClients() throws {
        // Given a tenant without standard clients and some fields
        let server = IdpServer()
        try server.addTenant("t", standardClients: false)
        let user = IdpFormField(id: "u", role: .username), current = IdpFormField(id: "c", role: .currentPassword)
        let new = IdpFormField(id: "n", role: .newPassword), reset = IdpFormField(id: "r", role: .passwordResetCode)
        let cases: [(IdpClientConfiguration, String)] = [
            (.init(clientId: "A", purpose: .changePassword, steps: [[user, new]]), "change-password client 'A' never asks for the current password"),
            (.init(clientId: "B", purpose: .changePassword, steps: [[user, new], [current]]), "change-password client 'B' asks for the new password before the current one"),
            (.init(clientId: "C", purpose: .forgotPassword, steps: [[user, reset, current], [new]]), "forgot-password client 'C' asks for a password or an activation code"),
            (.init(clientId: "D", purpose: .forgotPassword, steps: [[user], [new]]), "forgot-password client 'D' never asks for the password-reset code"),
            (.init(clientId: "E", purpose: .login, steps: [[user, IdpFormField(id: "p", role: .password), reset]]), "client 'E' asks for a password-reset code outside a forgot-password flow"),
        ]
        // Then each is refused naming its problem, and the standard ones are accepted
        for (client, problem) in cases {
            #expect(throws: IdpServerError(.invalidClient(problem))) { try server.addClient(client, tenant: "t") }
        }
        try server.addClient(.kssIdpChangePassword, tenant: "t")
        try server.addClient(.kssIdpForgotPassword, tenant: "t")
    }
}

@Suite("One activation code, many flows")
struct ActivationCodeRaceTests {
    @Test("one activation code proven by 32 enrollment flows on OS threads, then completed by all at once: exactly one activates, the rest end with activation_code_used")
    func concurrentUseOfOneActivationCode() async throws {
        // Given a pending user with one activation code, and 32 flows past the code step with it
        let browser = Browser()
        try browser.server.addUser("erin", tenant: "demo")
        let code = try browser.server.issueActivationCode(for: "erin", tenant: "demo")
        let flows = 32
        let proven = LockedValue<[Int: XHTMLForm]>([:])
        await onOSThreads(flows) { index in
            guard let step1 = try? browser.open("KssIdpEnrollment"),
                  let step2 = try? browser.next(step1, [("username", "erin")]),
                  let step3 = try? browser.next(step2, [("activation-code", code)]), step3.errorCode == nil else { return }
            proven.withLock { $0[index] = step3 }
        }
        let step3 = proven.withLock { $0 }
        #expect(step3.count == flows)
        // When all answer the password step at once
        let fragments = LockedValue<[[String: String]]>([])
        await onOSThreads(flows) { index in
            guard let form = step3[index] else { return }
            let fragment = Browser.fragment(of: browser.submit(form, [("password", "pw-erin-\(index)")]))
            fragments.withLock { $0.append(fragment) }
        }
        // Then exactly one activated, with one device binding; the others were told why
        let results = fragments.withLock { $0 }
        #expect(results.count == flows)
        #expect(results.filter { $0["code"] != nil }.count == 1)
        #expect(results.filter { $0["error"] == "activation_code_used" }.count == flows - 1)
        #expect(browser.server.user("erin", tenant: "demo")?.astClientIds.count == 1)
        #expect(browser.server.user("erin", tenant: "demo")?.outstandingActivationCodes == 0)
    }
}
