import IdpPrimitives
import IdpSdk
import McSdk
import StackTestSupport
import Testing

@Suite("A login's phases, as idp-bench splits it")
struct LoginPhaseTests {
    let idp = TestIDP()

    /// One login of `userId` through the three documented steps, with the caller's phases noted
    /// in `recorder` as idp-bench notes them.
    func login(_ userId: String, password: String, on mc: MasterController, noting recorder: PhaseRecorder?) async -> KSMEventStatusType {
        let user = KsUserIdentifier(tenantId: idp.tenant, userId: userId)
        recorder?.note(.started)
        let ast = await mc.receive(KSMGetAstClientDataEvent(userIdentifier: user)) as! KSMGetAstClientDataResultEvent
        recorder?.note(.astClientDataReturned)
        let result = await idp.sdk().getAuthorizationCode(withAstClientData: AstClientDataInfo(astClientData: ast), clientId: "KssIdpLogin",
                                                          interactionInterface: TableProvider(["username": userId, "password": password]),
                                                          userId: userId, traceParent: nil)
        recorder?.note(.codeReturned)
        guard let code = result.authorizationCode else { return .kCannotAcquireAuthorizationCode }
        let set = await mc.receive(KSMSetAuthorisationCodeEvent(userIdentifier: user, authenticationMode: .no, authorisationCode: code,
                                                                clientId: "KssIdpLogin")) as! KSMSetAuthorisationCodeResultEvent
        recorder?.note(.tokensStored)
        return set.status
    }

    @Test("a login with a recorder bound passes every phase once, in order")
    func everyPhaseInOrder() async {
        let mc = idp.masterController()
        #expect(await idp.activate("uma", password: "pw-uma", on: mc) == .kOk)
        let recorder = PhaseRecorder()
        let status = await PhaseRecorder.withRecording(recorder) { await login("uma", password: "pw-uma", on: mc, noting: recorder) }
        #expect(status == .kOk)
        let times = LoginPhase.allCases.map { recorder.time(of: $0) }
        for (phase, time) in zip(LoginPhase.allCases, times) { #expect(time != nil, "phase \(phase) was not noted") }
        let noted = times.compactMap { $0 }
        #expect(noted == noted.sorted(), "the phases were noted out of order: \(Array(zip(LoginPhase.allCases, times)))")
    }

    @Test("a phase keeps the first time it was noted")
    func firstTimeKept() async throws {
        let recorder = PhaseRecorder()
        #expect(recorder.time(of: .formRead) == nil)
        recorder.note(.formRead)
        let first = try #require(recorder.time(of: .formRead))
        recorder.note(.formRead)
        #expect(recorder.time(of: .formRead) == first)
    }
}
