import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import Synchronization
import Testing
import StackTestSupport
import TestSupport

@Suite("The flow engine")
struct FlowBehaviourTests {
    @Test("walks KssIdpEnrollment's three steps, asking each step's fields once, with the flow's context")
    func enrollmentSteps() async throws {
        // Given a pending user
        let idp = TestIDP()
        let code = idp.pendingUser("frank")
        let provider = TableProvider(["username": "frank", "activation-code": code, "password": "new-pass"])
        let trace = TraceParent.random()

        // When the enrollment runs
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpEnrollment", provider: provider, traceParent: trace.description)

        // Then each step asked its own field, with the flow's id, step and context
        #expect(!result.hasError())
        let calls = provider.recorded
        #expect(calls.map(\.inputFieldIds) == [["username"], ["activation-code"], ["password"]])
        #expect(calls.map(\.step) == [1, 2, 3])
        #expect(calls.map(\.attempt) == [1, 1, 1])
        #expect(Set(calls.map(\.flowId)) == [try #require(result.flowId)])
        #expect(calls.allSatisfy { $0.clientId == "KssIdpEnrollment" && $0.tenantId == "demo" && $0.userId == nil && $0.traceParent == trace.description && $0.previousError == nil })
        #expect(calls[2].inputFields == [IdpSdkInputField(id: "password", label: "Choose a password", isSecret: true)])
        #expect(provider.misplacedCalls.load(ordering: .relaxed) == 0)
        // and the trace reached the IDP's audit log, from the request to the code
        #expect(idp.server.auditLog(traceId: trace.traceId).map(\.event) == [.authorizationRequested, .stepServed, .stepServed, .userActivated, .codeIssued])
    }

    @Test("a custom client with custom field ids works")
    func customClient() async throws {
        let idp = TestIDP()
        try idp.server.addClient(IdpClientConfiguration(
            clientId: "CorpOtpLogin", purpose: .login,
            steps: [[IdpFormField(id: "corp-user", role: .username)],
                    [IdpFormField(id: "corp-secret", role: .password), IdpFormField(id: "otp", role: .attribute("otp"))]]
        ), tenant: idp.tenant)
        try idp.server.addUser("gina", tenant: idp.tenant, password: "s3cret!", attributes: ["otp": "424242"])
        let provider = TableProvider(["corp-user": "gina", "corp-secret": "s3cret!", "otp": "424242"])
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "CorpOtpLogin", provider: provider, userId: "gina")
        #expect(!result.hasError())
        #expect(provider.recorded.map(\.inputFieldIds) == [["corp-user"], ["corp-secret", "otp"]])
    }

    @Test("a rejected answer re-serves the step with the rejection, and a right answer then succeeds")
    func reAskAfterRejection() async throws {
        // Given a provider that answers a wrong password first
        let idp = TestIDP()
        idp.activeUser("hank", password: "right-one")
        let provider = ClosureProvider { data in
            .init(credentials: ["username": "hank", "password": data.attempt == 1 ? "wrong-one" : "right-one"])
        }
        let seen = LockedValue<[IdpSdkInteractionData]>([])
        let recording = ClosureProvider { data in seen.withLock { $0.append(data) }; return provider.provideCredentials(data) }

        // When the login runs
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: recording, userId: "hank")

        // Then the second call saw the rejection, and the flow succeeded
        #expect(!result.hasError())
        let calls = seen.withLock { $0 }
        #expect(calls.map(\.step) == [1, 1])
        #expect(calls.map(\.attempt) == [1, 2])
        #expect(calls[0].previousError == nil)
        #expect(calls[1].previousError == IdpSdkError(.credentialsRejected, "invalid_credentials: Invalid username or password."))
        // and a success resets the user's count of wrong answers
        #expect(idp.server.user("hank", tenant: "demo")?.failedAttempts == 0)
    }

    @Test("past the client's tries the flow ends with tooManyAttempts, and the wrong answers count against the user")
    func tooManyAttempts() async throws {
        let idp = TestIDP()
        idp.activeUser("ivy", password: "right-one")
        let provider = TableProvider(["username": "ivy", "password": "wrong-one"])
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "ivy")
        #expect(result.idpSdkError == IdpSdkError(.tooManyAttempts, "too_many_attempts: step 1 was answered wrongly 3 times; the flow is ended"))
        #expect(provider.recorded.map(\.attempt) == [1, 2, 3])
        #expect(idp.server.user("ivy", tenant: "demo")?.failedAttempts == 3)
    }

    @Test("an expired activation code ends the flow with activationCodeExpired, and the user stays pending")
    func expiredActivationCode() async throws {
        let idp = TestIDP()
        try idp.server.addUser("jack", tenant: idp.tenant)
        let code = try idp.server.issueActivationCode(for: "jack", tenant: idp.tenant, validFor: .seconds(600))
        idp.clock.advance(by: .seconds(601))
        let provider = TableProvider(["username": "jack", "activation-code": code, "password": "new-pass"])
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpEnrollment", provider: provider)
        #expect(result.idpSdkError == IdpSdkError(.activationCodeExpired, "activation_code_expired: the activation code has expired; ask for a new one"))
        #expect(idp.server.user("jack", tenant: "demo")?.status == .pendingActivation)
    }

    @Test("an abandoned enrollment changes nothing at the IDP")
    func abandonedEnrollmentChangesNothing() async throws {
        let idp = TestIDP()
        let code = idp.pendingUser("kate")
        let provider = ClosureProvider { data in
            data.step < 3 ? .init(credentials: data.step == 1 ? ["username": "kate"] : ["activation-code": code])
                          : .init(error: IdpSdkError("App", 7, "user left"))
        }
        let result = await idp.sdk().run(TestIDP.astClientData().info, clientId: "KssIdpEnrollment", provider: provider)
        #expect(result.idpSdkError == IdpSdkError("App", 7, "user left"))
        let kate = try #require(idp.server.user("kate", tenant: "demo"))
        #expect(kate.status == .pendingActivation)
        #expect(kate.outstandingActivationCodes == 1)
    }

    @Test("with shouldHashPin the password travels hashed, and a tenant expecting hashes accepts it")
    func hashedPin() async throws {
        let idp = TestIDP(secretEncoding: .sha256)
        idp.activeUser("liam", password: "1234")
        let provider = TableProvider(["username": "liam", "password": "1234"])
        let hashed = await idp.sdk(shouldHashPin: true).run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "liam")
        #expect(!hashed.hasError())
        let clear = await idp.sdk(shouldHashPin: false).run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "liam")
        #expect(clear.idpSdkError?.code == .tooManyAttempts)
    }
}

@Suite("Every flow completes exactly once: on cancel, timeout and fault too")
struct CompletionTests {
    @Test("cancel while the provider is blocked completes once with cancelled; the late answer is dropped")
    func cancelWhileProviderBlocked() async throws {
        // Given a provider that blocks its SDK thread until released
        let idp = TestIDP()
        idp.activeUser("mia", password: "pw-mia")
        let entered = Gate(), release = Gate()
        let provider = ObservingClosureProvider { _ in
            entered.open()
            release.wait(timeout: stuckRunDeadline)
            return .init(credentials: ["username": "mia", "password": "pw-mia"])
        }
        let counter = CompletionCounter()
        let completed = Gate()
        let sdk = idp.sdk()

        // When the flow is cancelled while the provider waits, and the provider then answers
        let handle = sdk.getAuthorizationCode(withAstClientData: TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                              interactionInterface: provider, userId: "mia", traceParent: nil) { result in
            counter.record(result)
            #expect(result.idpSdkError == IdpSdkError(.cancelled, "the flow was cancelled by its caller"))
            completed.open()
        }
        #expect(await OSThreads.run { entered.wait(timeout: stuckRunDeadline) })
        handle.cancel()
        handle.cancel()
        #expect(await OSThreads.run { completed.wait(timeout: stuckRunDeadline) })
        release.open()
        // The late answer has come back and the engine is done with the flow
        #expect(await OSThreads.run { provider.endedGate.wait(timeout: stuckRunDeadline) })

        // Then it completed exactly once, and no code was issued
        #expect(counter.completions == 1)
        #expect(idp.server.auditLog().filter { $0.event == .codeIssued }.isEmpty)
        #expect(sdk.flowsInFlight == 0)
    }

    @Test("a provider blocked past the flow timeout completes once with timedOut, holding only its own thread")
    func timeoutWhileProviderBlocked() async throws {
        let idp = TestIDP()
        idp.activeUser("noah", password: "pw-noah")
        idp.activeUser("olga", password: "pw-olga")
        let entered = Gate(), release = Gate(), returned = Gate()
        let provider = ObservingClosureProvider { data in
            if data.userId == "noah" {
                entered.open()
                _ = release.wait(timeout: stuckRunDeadline)
                returned.open()
            }
            return .init(credentials: ["username": data.userId ?? "", "password": "pw-\(data.userId ?? "")"])
        }
        // Given a one-minute flow timeout on the IDP's manual clock, and noah's provider blocked
        let sdk = idp.sdk(.init(flowTimeout: .seconds(60), clock: idp.clock))
        let results = LockedValue<[IdpSdkResult]>([])
        let completed = Gate()
        sdk.getAuthorizationCode(withAstClientData: TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                 interactionInterface: provider, userId: "noah", traceParent: nil) { result in
            results.withLock { $0.append(result) }
            completed.open()
        }
        #expect(await OSThreads.run { entered.wait(timeout: stuckRunDeadline) })

        // While noah's provider blocks, another flow on the same service goes through
        let other = await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "olga")
        #expect(!other.hasError())
        #expect(results.withLock { $0.isEmpty })

        // When the clock passes the minute, noah's flow ends with timedOut while its provider blocks
        idp.clock.advance(by: .seconds(61))
        #expect(await OSThreads.run { completed.wait(timeout: stuckRunDeadline) })
        #expect(results.withLock { $0.map { $0.idpSdkError?.code } } == [.timedOut])

        // Then the provider's late answer completes nothing a second time and redeems nothing
        release.open()
        #expect(await OSThreads.run { returned.wait(timeout: stuckRunDeadline) })
        // The engine is done with noah's flow once it says so (olga's flow said so earlier)
        #expect(await eventuallyOnOSThread { provider.ended.withLock { $0.count } == 2 })
        #expect(results.withLock { $0.count } == 1)
        #expect(idp.server.auditLog().filter { $0.event == .codeIssued }.map(\.userId) == ["olga"])
        #expect(sdk.flowsInFlight == 0)
    }

    @Test("cancelling the awaiting task ends the flow with cancelled")
    func taskCancellation() async throws {
        let idp = TestIDP()
        idp.activeUser("pia", password: "pw-pia")
        let release = Gate(), entered = Gate()
        let provider = ClosureProvider { _ in
            entered.open()
            release.wait(timeout: stuckRunDeadline)
            return .init(credentials: ["username": "pia", "password": "pw-pia"])
        }
        let sdk = idp.sdk()
        let task = Task { await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "pia") }
        // Once the flow is inside the provider, the awaiting task is cancelled
        #expect(await OSThreads.run { entered.wait(timeout: stuckRunDeadline) })
        task.cancel()
        let result = await task.value
        release.open()
        #expect(result.idpSdkError == IdpSdkError(.cancelled, "the flow was cancelled by its caller"))
    }

    @Test("a task cancelled before the call starts gets cancelled without asking the provider")
    func cancelledBeforeStart() async throws {
        let idp = TestIDP()
        idp.activeUser("quinn", password: "pw-quinn")
        let provider = TableProvider(["username": "quinn", "password": "pw-quinn"])
        let sdk = idp.sdk()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "quinn")
        }
        let result = await task.value
        #expect(result.idpSdkError == IdpSdkError(.cancelled, "the flow was cancelled by its caller"))
        #expect(provider.recorded.isEmpty)
    }

    @Test("a connection lost mid-flow completes once with connectionLost")
    func connectionLost() async throws {
        let idp = TestIDP()
        idp.activeUser("rita", password: "pw-rita")
        let transport = FaultyTransport(inner: InProcessTransport(server: idp.server)) { request in
            request.method == "POST" ? .failure(TransportError(.connectionLost, "reset by peer")) : nil
        }
        let sdk = IdpSdkService(tenantId: "demo", idpUrl: idp.url, certificateChain: Data(), shouldHashPin: false, configuration: .init(clock: idp.clock), transport: transport)
        let result = await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: TableProvider(["username": "rita", "password": "pw-rita"]), userId: "rita")
        #expect(result.idpSdkError == IdpSdkError(.connectionLost, "reset by peer"))
    }

    @Test("an IDP that never answers ends in timedOut")
    func silentIdp() async throws {
        let transport = FaultyTransport(inner: nil) { _ in nil }
        let sdk = IdpSdkService(tenantId: "demo", idpUrl: "https://silent.test", certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(flowTimeout: .milliseconds(100)), transport: transport)
        let result = await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: TableProvider([:]), userId: "x")
        #expect(result.idpSdkError?.code == .timedOut)
    }

    @Test("on a manual clock, a flow times out when the clock passes its timeout, not before, and without waiting")
    func timeoutOnManualClock() async throws {
        // Given a service on a manual clock with a one-minute timeout, and an IDP that never answers
        let clock = ManualClock()
        let transport = FaultyTransport(inner: nil) { _ in nil }
        let sdk = IdpSdkService(tenantId: "demo", idpUrl: "https://silent.test", certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(flowTimeout: .seconds(60), clock: clock), transport: transport)
        let completed = Gate()
        let outcome = LockedValue<IdpSdkResult?>(nil)
        sdk.getAuthorizationCode(withAstClientData: TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                 interactionInterface: TableProvider([:]), userId: "x", traceParent: nil) { result in
            outcome.withLock { $0 = result }
            completed.open()
        }
        #expect(sdk.armedTimeouts == 1)

        // When the clock moves 59 seconds, the flow is still running
        clock.advance(by: .seconds(59))
        #expect(await OSThreads.run { !completed.wait(timeout: .milliseconds(50)) })
        #expect(sdk.flowsInFlight == 1)

        // and when it passes the minute, the flow ends with timedOut and its timer is gone
        clock.advance(by: .seconds(2))
        #expect(await OSThreads.run { completed.wait(timeout: stuckRunDeadline) })
        #expect(outcome.withLock { $0 }?.idpSdkError?.code == .timedOut)
        #expect(sdk.armedTimeouts == 0)
        #expect(sdk.flowsInFlight == 0)
    }

    /// A clock the timers can only poll: it reads one instant until `jump()` moves it an hour on.
    private final class JumpingClock: IdpClock {
        private let jumped = Atomic<Bool>(false)
        private let start = Date(timeIntervalSince1970: 1_767_225_600)
        func jump() { jumped.store(true, ordering: .releasing) }
        func now() -> Date { jumped.load(ordering: .acquiring) ? start.addingTimeInterval(3600) : start }
    }

    @Test("an answer that comes after the flow's deadline, before its timer fired, ends the flow with timedOut")
    func answerPastDeadline() async throws {
        // Given a one-minute flow timeout on a clock the timers poll, and a provider that answers
        // rightly once the clock has passed the minute (the timers have not looked yet)
        let idp = TestIDP()
        idp.activeUser("noah", password: "pw-noah")
        let clock = JumpingClock()
        let provider = ObservingClosureProvider { data in
            clock.jump()
            return .init(credentials: ["username": data.userId ?? "", "password": "pw-noah"])
        }
        let sdk = idp.sdk(.init(flowTimeout: .seconds(60), clock: clock))
        // When the flow runs, it ends with timedOut, its timer gone
        let result = await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "noah")
        #expect(result.idpSdkError?.code == .timedOut, "\(result)")
        #expect(await eventuallyOnOSThread { sdk.armedTimeouts == 0 && sdk.flowsInFlight == 0 })
    }

    @Test("a flow that ends cancels its timeout at once")
    func endedFlowCancelsTimeout() async throws {
        let idp = TestIDP()
        idp.activeUser("tara", password: "pw-tara")
        let sdk = idp.sdk(.init(flowTimeout: .seconds(3600), clock: idp.clock))
        let result = await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: TableProvider(["username": "tara", "password": "pw-tara"]), userId: "tara")
        #expect(!result.hasError())
        #expect(sdk.armedTimeouts == 0)
        // and a cancelled flow holds no timer either
        let cancelled = sdk.getAuthorizationCode(withAstClientData: TestIDP.astClientData().info, clientId: "KssIdpLogin",
                                                 interactionInterface: TableProvider([:]), userId: "tara", traceParent: nil) { _ in }
        cancelled.cancel()
        #expect(sdk.armedTimeouts == 0)
    }

    @Test("an IDP that serves forms forever is cut off after the step limit")
    func endlessForms() async throws {
        let page = """
        <html xmlns="http://www.w3.org/1999/xhtml"><body><form action="/auth/realms/demo/login-actions/authenticate?session_code=x&amp;execution=1" method="post"><input id="username" name="username"/></form></body></html>
        """
        let transport = FaultyTransport(inner: nil) { _ in .success(HTTPResponse(status: 200, body: Array(page.utf8))) }
        let sdk = IdpSdkService(tenantId: "demo", idpUrl: "https://loop.test", certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(maximumSteps: 5), transport: transport)
        let provider = TableProvider(["username": "sam"])
        let result = await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "sam")
        #expect(result.idpSdkError == IdpSdkError(.protocolError, "the IDP served more than 5 form steps"))
        #expect(provider.recorded.count == 5)
    }

    @Test("3,000 steps answered inline by a non-blocking provider through a synchronous transport do not overflow the stack (without the nesting cap they do)")
    func deepInlineChain() async throws {
        // Given an IDP that serves a new form at once for 3,000 requests, then drops the connection
        // (3,000 nested inline steps overflow an SDK thread's 4 MiB stack without the cap: checked)
        let page = """
        <html xmlns="http://www.w3.org/1999/xhtml"><body><form action="/auth/realms/demo/login-actions/authenticate?session_code=x&amp;execution=1" method="post"><input id="username" name="username"/></form></body></html>
        """
        let requests = Atomic<Int>(0)
        let transport = FaultyTransport(inner: nil) { _ in
            requests.add(1, ordering: .relaxed).newValue > 3_000
                ? .failure(TransportError(.connectionLost, "enough"))
                : .success(HTTPResponse(status: 200, body: Array(page.utf8)))
        }
        let sdk = IdpSdkService(tenantId: "demo", idpUrl: "https://deep.test", certificateChain: Data(), shouldHashPin: false,
                                configuration: .init(flowTimeout: .seconds(3_600), maximumSteps: 1_000_000), transport: transport)
        let provider = NonBlockingTableProvider(["username": "sam"])

        // When a flow answers every one of them (inline, as the provider never blocks)
        let result = await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "sam")

        // Then it ends with the dropped connection, every call on an SDK thread
        #expect(result.idpSdkError == IdpSdkError(.connectionLost, "enough"))
        #expect(provider.calls.load(ordering: .relaxed) == 3_000)
        #expect(provider.misplacedCalls.load(ordering: .relaxed) == 0)
    }

    @Test("an unreadable IDP page is a protocol error")
    func unreadablePage() async throws {
        let transport = FaultyTransport(inner: nil) { _ in .success(HTTPResponse(status: 200, body: Array("<html><body>maintenance</body></html>".utf8))) }
        let sdk = IdpSdkService(tenantId: "demo", idpUrl: "https://broken.test", certificateChain: Data(), shouldHashPin: false, configuration: .init(), transport: transport)
        let result = await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: TableProvider([:]), userId: "sam")
        #expect(result.idpSdkError?.code == .protocolError)
    }

    @Test("a page whose bytes are not UTF-8 is a protocol error; a UTF-8 page beyond ASCII is read as its text")
    func pageEncodings() async throws {
        let form = #"<form action="/go" method="post"><label for="username">Nom d’utilisateur é</label><input id="username" name="username"/></form>"#
        var invalid = Array(form.utf8)
        invalid.insert(0xFF, at: 6)
        for (body, expected) in [(invalid, "the IDP's page is not UTF-8 or larger than \(XHTMLForm.maximumSize) bytes"), (Array(form.utf8), nil)] {
            let labels = LockedValue<[String?]>([])
            let transport = FaultyTransport(inner: nil) { request in
                request.method == "GET" ? .success(HTTPResponse(status: 200, body: body)) : .failure(TransportError(.connectionLost, "submitted"))
            }
            let sdk = IdpSdkService(tenantId: "demo", idpUrl: "https://encoding.test", certificateChain: Data(), shouldHashPin: false, configuration: .init(), transport: transport)
            let provider = ClosureProvider { data in
                labels.withLock { $0.append(contentsOf: data.inputFields.map(\.label)) }
                return IdpSdkProvideCredentialsResult(credentials: ["username": "sam"])
            }
            let result = await sdk.run(TestIDP.astClientData().info, clientId: "KssIdpLogin", provider: provider, userId: "sam")
            if let expected {
                #expect(result.idpSdkError == IdpSdkError(.protocolError, expected))
                #expect(labels.withLock { $0 }.isEmpty)
            } else {
                #expect(result.idpSdkError == IdpSdkError(.connectionLost, "submitted"))
                #expect(labels.withLock { $0 } == ["Nom d’utilisateur é"])
            }
        }
    }

}

/// A transport that answers some requests itself (a fault, a canned page) and passes the rest on;
/// with no inner transport, unanswered requests never complete.
/// A provider that says it never blocks, answering from a table; counts its calls and any that ran
/// somewhere a provider must never run.
final class NonBlockingTableProvider: IdpSdkNonBlockingProvider, Sendable {
    let table: [String: String]
    let calls = Atomic<Int>(0)
    let misplacedCalls = Atomic<Int>(0)

    init(_ table: [String: String]) { self.table = table }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if !IdpSdkService.isSDKThread || Thread.isMainThread || withUnsafeCurrentTask(body: { $0 != nil }) {
            misplacedCalls.add(1, ordering: .relaxed)
        }
        calls.add(1, ordering: .relaxed)
        return .init(credentials: table.filter { interactionData.inputFieldIds.contains($0.key) })
    }
}
