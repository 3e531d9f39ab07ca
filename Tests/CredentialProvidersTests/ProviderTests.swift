import Foundation
import CredentialProviders
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import Testing
import TestSupport

/// An IDP with users and an SDK bound to it, for one test.
struct Bench {
    let idp = IdpServer()
    let sdk: IdpSdkService

    init(users: [String: String] = ["alice": "pw-alice", "bob": "pw-bob"], flowTimeout: Duration = .seconds(600)) {
        try! idp.addTenant("demo")
        for (user, password) in users { try! idp.addUser(user, tenant: "demo", password: password) }
        sdk = IdpSdkService(tenantId: "demo", idpUrl: "https://providers.invalid", certificateChain: Data(), shouldHashPin: false,
                            configuration: .init(flowTimeout: flowTimeout), transport: InProcessTransport(server: idp))
    }

    func login(_ userId: String?, _ provider: any IdpSdkInteractionInterface & Sendable, clientId: String = "KssIdpLogin", traceParent: String? = nil) async -> IdpSdkResult {
        let verifier = PKCE.makeVerifier()
        return await sdk.getAuthorizationCode(
            withAstClientData: AstClientDataInfo("data", IdpServer.unassignedAstClientId, PKCE.challenge(for: verifier), "S256"),
            clientId: clientId, interactionInterface: provider, userId: userId, traceParent: traceParent)
    }
}


/// A made-up interaction, for calling a provider directly.
/// Every asked field answered with "x".
private func answeringX(_ data: IdpSdkInteractionData) -> [String: String] {
    var credentials: [String: String] = [:]
    for id in data.inputFieldIds { credentials[id] = "x" }
    return credentials
}

func interaction(_ fields: [String], userId: String? = "alice", flow: UInt64 = 1, step: Int = 1, attempt: Int = 1, rejected: Bool = false, traceParent: String? = nil) -> IdpSdkInteractionData {
    var inputFields: [IdpSdkInputField] = []
    for id in fields { inputFields.append(IdpSdkInputField(id: id, label: nil, isSecret: false)) }
    return IdpSdkInteractionData(inputFields: inputFields, flowId: IdpSdkFlowID(rawValue: flow),
                          step: step, attempt: attempt, tenantId: "demo", clientId: "KssIdpLogin", userId: userId, traceParent: traceParent,
                          previousError: rejected ? IdpSdkError(.credentialsRejected, "invalid_credentials: no") : nil)
}

@Suite("StaticCredentials")
struct StaticCredentialsTests {
    @Test("answers exactly the requested fields, and names a missing one")
    func answersRequestedFields() {
        let provider = StaticCredentials(["username": "alice", "password": "pw-alice", "otp": "1"])
        #expect(provider.provideCredentials(interaction(["username"])).credentials == ["username": "alice"])
        #expect(provider.provideCredentials(interaction(["pin"])).error == CredentialProviderError.make(.missingValue, "no value for field 'pin' of user 'alice' of tenant 'demo'"))
        #expect(provider.description == "StaticCredentials(fields: [\"otp\", \"password\", \"username\"])")
    }
}

@Suite("IdpSdkProvideCredentialsResult.answering")
struct AnsweringTests {
    @Test("hands over values that are exactly the asked fields, picks the asked ones from more, and names a missing one")
    func answersExactlyTheAskedFields() {
        let two = ["username": "alice", "password": "pw"]
        #expect(IdpSdkProvideCredentialsResult.answering(interaction(["password", "username"]), from: two).credentials == two)
        #expect(IdpSdkProvideCredentialsResult.answering(interaction(["username"]), from: two).credentials == ["username": "alice"])
        // As many ids as values, but a repeated id: not the same set, so the unasked password is not sent.
        #expect(IdpSdkProvideCredentialsResult.answering(interaction(["username", "username"]), from: two).credentials == ["username": "alice"])
        #expect(IdpSdkProvideCredentialsResult.answering(interaction(["username", "otp"]), from: two).error
            == CredentialProviderError.make(.missingValue, "no value for field 'otp' of user 'alice' of tenant 'demo'"))
        #expect(IdpSdkProvideCredentialsResult.answering(interaction([]), from: [:]).credentials == [:])
    }
}

@Suite("CredentialStore")
struct CredentialStoreTests {
    @Test("answers logins by user id, activations by bound trace, and an unknown user with noCredentials")
    func lookups() {
        let store = CredentialStore()
        store.set(["username": "alice", "password": "pw-alice"], userId: "alice", tenantId: "demo")
        #expect(store.provideCredentials(interaction(["username", "password"])).credentials == ["username": "alice", "password": "pw-alice"])
        let trace = TraceParent.random()
        #expect(store.provideCredentials(interaction(["username"], userId: nil, traceParent: trace.description)).error?.credentialProviderCode == .noCredentials)
        store.bind(traceId: trace.traceId, toUser: "alice", tenantId: "demo")
        #expect(store.provideCredentials(interaction(["username"], userId: nil, traceParent: trace.description)).credentials == ["username": "alice"])
        store.unbind(traceId: trace.traceId)
        store.remove(userId: "alice", tenantId: "demo")
        #expect(store.provideCredentials(interaction(["username"])).error == CredentialProviderError.make(.noCredentials, "no credentials for user 'alice' of tenant 'demo'"))
        #expect(!store.description.contains("pw-alice"))
    }

    @Test("is updated from an OS thread while 8 OS threads read it; every read sees a whole entry")
    func updatesWhileReading() async {
        let store = CredentialStore()
        store.set(["username": "alice", "password": "v0"], userId: "alice", tenantId: "demo")
        let torn = LockedValue<Int>(0)
        await onOSThreads(9) { thread in
            if thread == 8 {
                for version in 1...2_000 {
                    store.set(["username": "alice", "password": "v\(version)", "version": "v\(version)"], userId: "alice", tenantId: "demo")
                    if version % 100 == 0 { store.remove(userId: "bob", tenantId: "demo") } else { store.set(["username": "bob"], userId: "bob", tenantId: "demo") }
                }
                return
            }
            for _ in 0..<2_000 {
                let answer = store.provideCredentials(interaction(["password", "version"]))
                // Either the first entry (no version yet) or one whole later entry.
                if let credentials = answer.credentials, credentials["password"] != credentials["version"] { torn.withLock { $0 += 1 } }
            }
        }
        #expect(torn.withLock { $0 } == 0)
    }
}

@Suite("MultiStepProvider")
struct MultiStepProviderTests {
    @Test("tracks step and attempt per flow, and tries the next candidate after a rejection")
    func stepsAndCandidates() async {
        let bench = Bench(users: ["alice": "right"])
        let seen = LockedValue<[MultiStepProvider.FlowState]>([])
        let candidates = MultiStepProvider.candidates { _ in ["username": ["alice"], "password": ["wrong", "right"]] }
        let provider = MultiStepProvider { data, state in
            seen.withLock { $0.append(state) }
            return candidates.provideCredentials(data)
        }
        let result = await bench.login("alice", provider)
        #expect(!result.hasError())
        #expect(seen.withLock { $0.map(\.step) } == [1, 1])
        #expect(seen.withLock { $0.map(\.attempt) } == [1, 2])
        #expect(seen.withLock { $0.map(\.rejections) } == [0, 1])
        // The provider forgets a flow when the engine reports it ended, just after its completion.
        #expect(await eventually { provider.trackedFlows.current == 0 })
    }

    @Test("hands each call the fields its flow asked before it, and counts steps, attempts and rejections")
    func flowStatePerCall() {
        let seen = LockedValue<[MultiStepProvider.FlowState]>([])
        let provider = MultiStepProvider(maximumRejections: 5) { data, state in
            seen.withLock { $0.append(state) }
            return .init(credentials: answeringX(data))
        }
        let calls: [(fields: [String], rejected: Bool)] = [
            (["username"], false), (["username"], true), (["username"], false), (["password"], false),
            (["username", "otp"], false), (["otp", "otp"], true), (["pin", "pin"], false),
        ]
        for call in calls { _ = provider.provideCredentials(interaction(call.fields, flow: 7, rejected: call.rejected)) }
        let states = seen.withLock { $0 }
        #expect(states.map(\.answeredFields) == [
            [], ["username"], ["username"], ["username"], ["username", "password"], ["username", "password", "otp"],
            ["username", "password", "otp"],
        ])
        #expect(states.map(\.calls) == Array(1...7))
        #expect(states.map(\.step) == [1, 1, 1, 2, 3, 3, 4])
        #expect(states.map(\.attempt) == [1, 2, 3, 1, 1, 2, 1])
        #expect(states.map(\.rejections) == [0, 1, 1, 1, 1, 2, 2])
        // A second flow starts from nothing, and a call with a repeated id asks that field once.
        _ = provider.provideCredentials(interaction(["pin", "pin"], flow: 8))
        _ = provider.provideCredentials(interaction(["pin"], flow: 8))
        #expect(seen.withLock { $0.suffix(2).map(\.answeredFields) } == [[], ["pin"]])
        #expect(seen.withLock { $0.suffix(2).map(\.step) } == [1, 1])
        #expect(provider.trackedFlows.current == 2)
        provider.flowDidEnd(IdpSdkFlowID(rawValue: 7), result: IdpSdkResult(authorizationCode: "c"))
        provider.flowDidEnd(IdpSdkFlowID(rawValue: 7), result: IdpSdkResult(authorizationCode: "c"))
        #expect(provider.trackedFlows.current == 1)
    }

    @Test("ends the flow with answersExhausted when every candidate was rejected")
    func exhausted() async {
        let bench = Bench(users: ["alice": "right"])
        let provider = MultiStepProvider.candidates { _ in ["username": ["alice"], "password": ["wrong", "also-wrong"]] }
        let result = await bench.login("alice", provider)
        #expect(result.idpSdkError == CredentialProviderError.make(.answersExhausted, "all 2 candidates for field 'password' were rejected"))
    }

    /// A million flows (100,000 under ThreadSanitizer, which makes each lock ~20 times slower),
    /// on an OS thread rather than the cooperative pool.
    @Test("keeps no state after a million flows end, and evicts the state of flows never reported ended")
    func boundedState() async {
        // The answer is built field by field: the generic `Dictionary(uniqueKeysWithValues:)` would
        // be most of what a call costs under ThreadSanitizer.
        let provider = MultiStepProvider { data, _ in .init(credentials: answeringX(data)) }
        let flows: UInt64 = ThreadSanitizer.isActive ? 100_000 : 1_000_000
        await OSThreads.run {
            for flow in 1...flows {
                _ = provider.provideCredentials(interaction(["username"], flow: flow))
                provider.flowDidEnd(IdpSdkFlowID(rawValue: flow), result: IdpSdkResult(authorizationCode: "c"))
            }
        }
        #expect(provider.trackedFlows.current == 0)
        // Each shard held one flow at most; the peak adds the shards' own peaks.
        #expect((1...32).contains(provider.trackedFlows.peak))

        let forgetful = MultiStepProvider(stateLifetime: .zero) { data, _ in .init(credentials: answeringX(data)) }
        await OSThreads.run {
            for flow in 1...10_000 as ClosedRange<UInt64> { _ = forgetful.provideCredentials(interaction(["username"], flow: flow)) }
        }
        // Each call looks at two of its shard's flows: with no lifetime, nothing outlives a call.
        #expect(forgetful.trackedFlows.current == 0)
    }
}

@Suite("AsyncCredentialBridge")
struct AsyncCredentialBridgeTests {
    @Test("answers from the async closure, on an SDK thread that waits for it")
    func answers() async {
        let bench = Bench()
        let bridge = AsyncCredentialBridge(timeout: .seconds(600)) { data in
            try await Task.sleep(for: .milliseconds(10))
            return ["username": "alice", "password": "pw-alice"].filter { data.inputFieldIds.contains($0.key) }
        }
        let result = await bench.login("alice", bridge)
        #expect(!result.hasError(), "\(result)")
    }

    @Test("times out, passes a thrown IdpSdkError through, and wraps any other error — each distinct")
    func distinctErrors() async {
        let bench = Bench()
        let slow = AsyncCredentialBridge(timeout: .milliseconds(50)) { _ in
            try await Task.sleep(for: .seconds(10))
            return [:]
        }
        #expect(await bench.login("alice", slow).idpSdkError == CredentialProviderError.make(.timedOut, "AsyncCredentialBridge got no answer within 0.05 seconds"))

        let declined = IdpSdkError("MyApp", 3, "the user declined")
        let declining = AsyncCredentialBridge(timeout: .seconds(600)) { _ in throw declined }
        #expect(await bench.login("alice", declining).idpSdkError == declined)

        struct PromptBroke: Error {}
        let broken = AsyncCredentialBridge(timeout: .seconds(600)) { _ in throw PromptBroke() }
        #expect(await bench.login("alice", broken).idpSdkError?.credentialProviderCode == .answerFailed)
    }

    @Test("stops waiting with cancelled when the flow is cancelled, and the flow completes once with cancelled")
    func cancelledFlow() async throws {
        let bench = Bench()
        let bridge = AsyncCredentialBridge(timeout: .seconds(600)) { _ in
            try await Task.sleep(for: .seconds(600))
            return [:]
        }
        let recording = RecordingProvider(bridge)
        let verifier = PKCE.makeVerifier()
        let completions = LockedValue<[IdpSdkResult]>([])
        let handle = bench.sdk.getAuthorizationCode(
            withAstClientData: AstClientDataInfo("data", IdpServer.unassignedAstClientId, PKCE.challenge(for: verifier), "S256"),
            clientId: "KssIdpLogin", interactionInterface: recording, userId: "alice", traceParent: nil) { result in
                completions.withLock { $0.append(result) }
            }
        #expect(await eventually { bridge.waiting == 1 }, "the bridge never started waiting")
        handle.cancel()
        #expect(await eventually { !recording.calls.isEmpty }, "the bridge never returned")
        #expect(recording.calls.first?.error == CredentialProviderError.make(.cancelled, "the flow ended while AsyncCredentialBridge waited for its answer"))
        // The cancel hands the completion to one SDK thread while the provider's thread, once the
        // bridge returns, tells the observer the flow ended: the two come in either order.
        #expect(await eventually { !recording.endedFlows.isEmpty }, "the flow never ended")
        #expect(await eventually { completions.withLock { !$0.isEmpty } }, "the flow never completed")
        #expect(completions.withLock { $0.map { $0.idpSdkError?.code } } == [.cancelled])
        #expect(bridge.waiting == 0)
    }

    @Test("refuses instead of blocking when called from inside a Swift task")
    func refusesInsideTask() async {
        let bridge = AsyncCredentialBridge(timeout: .seconds(5)) { _ in ["username": "alice"] }
        let result = bridge.provideCredentials(interaction(["username"]))
        #expect(result.error?.credentialProviderCode == .calledWhereBlockingIsUnsafe)
        #expect(bridge.waiting == 0)
    }
}

@Suite("VaultProvider")
struct VaultProviderTests {
    @Test("answers from the actor, names a user it lacks, refuses inside a task and for activations")
    func vault() async throws {
        let bench = Bench()
        let vault = CredentialVault()
        await vault.store(["username": "alice", "password": "pw-alice"], userId: "alice", tenantId: "demo")
        let provider = VaultProvider(vault: vault, timeout: .seconds(600))
        #expect(!(await bench.login("alice", provider)).hasError())
        #expect(await bench.login("bob", provider).idpSdkError == CredentialProviderError.make(.noCredentials, "no credentials for user 'bob' of tenant 'demo'"))
        #expect(provider.provideCredentials(interaction(["username"])).error?.credentialProviderCode == .calledWhereBlockingIsUnsafe)
        #expect(await bench.login(nil, provider, clientId: "KssIdpEnrollment").idpSdkError?.credentialProviderCode == .noCredentials)
    }
}

@Suite("RecordingProvider and FieldMappingProvider")
struct WrapperTests {
    @Test("the recording shows each step on an SDK thread, without values")
    func recording() async {
        let bench = Bench()
        let recording = RecordingProvider(StaticCredentials(["username": "alice", "password": "pw-alice"]))
        let result = await bench.login("alice", recording)
        #expect(!result.hasError())
        let calls = recording.calls
        #expect(calls.count == 1)
        #expect(calls[0].fieldIds == ["username", "password"])
        #expect(calls[0].threadName.hasPrefix("IdpSdk-"))
        #expect(await eventually { recording.endedFlows[result.flowId!] != nil }, "the flow never ended")
        #expect(recording.endedFlows[result.flowId!]?.hasError() == false)
        #expect(!recording.description.contains("pw-alice"))
    }

    @Test("field mapping serves a custom client from a provider that knows the standard ids")
    func mapping() async throws {
        let bench = Bench(users: [:])
        try bench.idp.addClient(IdpClientConfiguration(clientId: "Corp", purpose: .login, steps: [[
            IdpFormField(id: "corp-user", role: .username), IdpFormField(id: "corp-secret", role: .password),
        ]]), tenant: "demo")
        try bench.idp.addUser("carl", tenant: "demo", password: "pw-carl")
        let store = CredentialStore()
        store.set(["username": "carl", "password": "pw-carl"], userId: "carl", tenantId: "demo")
        let mapped = FieldMappingProvider(store, mapping: ["corp-user": "username", "corp-secret": "password"])
        #expect(!(await bench.login("carl", mapped, clientId: "Corp")).hasError())
        #expect(await bench.login("carl", store, clientId: "Corp").idpSdkError?.credentialProviderCode == .missingValue)
    }
}
