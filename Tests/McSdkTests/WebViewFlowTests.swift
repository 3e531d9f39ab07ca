// The web-view (TWV) activation of seeds/000: the app builds the IDP's authorization URL and headers
// with the documents' Swift sample — compiled as printed, in Swift 5 mode, in
// Tests/DocumentSamples/Seed000WebView (Swift 6 refuses it: see the IdpSdk article "Getting started with the documents' samples") — loads it in a web view
// (here WebViewSimulator), reads the code from the redirect and hands it to the MasterController.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IdpPrimitives
import IdpWireFormats
import IdpServer
import McSdk
import StackTestSupport
@testable import Seed000WebViewSample
import Testing


/// An IDP with the sample's realm, a web view that reaches it whatever host the URL names (so the
/// sample's fixed base URL serves every test), and devices whose MasterController reaches it at a
/// URL of this test's own. The IDP and the devices share a clock that moves only when a test moves
/// it, so no code or token expires while a loaded machine keeps a test waiting.
private struct TWVBench {
    let clock = ManualClock()
    let idp: IdpServer
    let tenant = MaverickWebPageHelper.END_POINT
    let webView: WebViewSimulator
    let mcUrl = "https://idp-twv-\(UUID().uuidString.lowercased()).test"

    init() {
        idp = IdpServer(configuration: .init(clock: clock))
        try! idp.addTenant(tenant)
        IdpNetwork.shared.register(idp, at: mcUrl)
        webView = WebViewSimulator(transport: InProcessTransport(server: idp))
    }

    /// A started device.
    func device() async -> MaverickActivation {
        let activation = MaverickActivation(MasterController(configuration: .init(idpUrl: mcUrl, clock: clock)))
        _ = await activation.masterControllerAdapter.receive(KSMStartEvent())
        return activation
    }

    func astData(_ activation: MaverickActivation, userId: String = "") async -> KSMGetAstClientDataResultEvent {
        await Self.delivered { deliver in
            activation.getAstClientData(userIdentifer: KsUserIdentifier(tenantId: tenant, userId: userId)) { deliver($0) }
        }
    }

    func setCode(_ activation: MaverickActivation, _ type: MaverickClientIdType, _ code: String, userId: String = "") async -> KSMSetAuthorisationCodeResultEvent {
        await Self.delivered { deliver in
            activation.setAuthorizationCode(userType: type, authorizationCode: code, userIdentifer: KsUserIdentifier(tenantId: tenant, userId: userId)) {
                deliver($0)
            }
        }
    }

    /// The value the sample's completion handler delivers. It is handed over under a lock as well
    /// as through the continuation: ThreadSanitizer does not always see the ordering a
    /// continuation gives (one resumed while its task is still suspending), and then reports the
    /// event's fields, written on the MC's thread, as raced with the test's reads.
    static func delivered<Event: Sendable>(_ start: (@escaping @Sendable (Event) -> Void) -> Void) async -> Event {
        let box = LockedValue<Event?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            start { event in
                box.withLock { $0 = event }
                continuation.resume()
            }
        }
        return box.withLock { $0! }
    }

    /// Loads the sample's request in the web view, typing `username` and `password` into every form.
    func load(_ request: URLRequest, username: String, password: String) async throws -> String {
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.set(name, value) }
        return try await webView.load(request.url!.absoluteString, headers: headers, until: redirectUrl) { form in
            Dictionary(uniqueKeysWithValues: form.visibleInputs.map { ($0.id, $0.type == "password" ? password : username) })
        }
    }
}

@Suite("The web-view (TWV) flow of seeds/000 and 004")
struct WebViewFlowTests {
    @Test("the documents' sample registers a new user in the web view, the MC activates with the code, and the user then logs in as existing and subsequent user")
    func sampleRegistrationThenLogins() async throws {
        let bench = TWVBench()
        let activation = await bench.device()

        // A new user: only X-KOBIL-ASTCLIENTDATA.
        let astData = await bench.astData(activation)
        let url = MaverickWebPageHelper.getMaverickWebpageUrlFor(clientId: MaverickClientIdType.newUser.clientId, astData: astData)
        let request = try #require(MaverickWebViewUrlRequest.getUrlRequest(userType: .newUser, url: url, astData: astData))
        #expect(request.value(forHTTPHeaderField: "X-KOBIL-ASTCLIENTDATA") == astData.clientData)
        #expect(request.value(forHTTPHeaderField: "X-KOBIL-ASTCLIENTID") == nil)
        let location = try await bench.load(request, username: "maria", password: "maria-s3cret")
        let redirect = try AuthorizationRedirect.parse(location: location, expectedRedirectURI: redirectUrl)
        let code = try #require(redirect.code)
        let activated = await bench.setCode(activation, .newUser, code)
        #expect(activated.status == .kOk)
        #expect(bench.idp.user("maria", tenant: bench.tenant)?.status == .active)

        // The same user later: both headers, the device's AST client id now assigned.
        for type in [MaverickClientIdType.loginUser, .existingUser] {
            let astData = await bench.astData(activation, userId: "maria")
            #expect(astData.clientId != IdpServer.unassignedAstClientId)
            let url = MaverickWebPageHelper.getMaverickWebpageUrlFor(clientId: type.clientId, astData: astData)
            let request = try #require(MaverickWebViewUrlRequest.getUrlRequest(userType: type, url: url, astData: astData))
            #expect(request.value(forHTTPHeaderField: "X-KOBIL-ASTCLIENTID") == astData.clientId)
            let location = try await bench.load(request, username: "maria", password: "maria-s3cret")
            let code = try #require(try AuthorizationRedirect.parse(location: location, expectedRedirectURI: redirectUrl).code)
            #expect(await bench.setCode(activation, type, code, userId: "maria").status == .kOk)
        }
    }

    @Test("the IDP enforces the header rule: a login client without X-KOBIL-ASTCLIENTID is refused with an error redirect")
    func headerRule() async throws {
        let bench = TWVBench()
        let activation = await bench.device()
        let astData = await bench.astData(activation)
        // The new-user request (client data only) sent to the login client.
        let url = MaverickWebPageHelper.getMaverickWebpageUrlFor(clientId: MaverickClientIdType.loginUser.clientId, astData: astData)
        let request = try #require(MaverickWebViewUrlRequest.getUrlRequest(userType: .newUser, url: url, astData: astData))
        let location = try await bench.load(request, username: "x", password: "y")
        let redirect = try AuthorizationRedirect.parse(location: location, expectedRedirectURI: redirectUrl)
        #expect(redirect.code == nil)
        #expect(redirect.error == "invalid_request")
        #expect(redirect.errorDescription == "client 'IDPSubsequentLogin' needs the X-KOBIL-ASTCLIENTID header of an activated device")
        // And the all-zeros id of a device without a user is no id either.
        #expect(throws: WebViewAuthorizationError("loginUser needs the AST client id of an activated device (X-KOBIL-ASTCLIENTID)")) {
            try WebViewAuthorizationRequest(baseURL: baseUrl, realm: bench.tenant, userType: .loginUser, redirectURI: redirectUrl,
                                            astClientData: astData.clientData, astClientId: astData.clientId,
                                            codeChallenge: astData.codeChallenge, codeChallengeMethod: "S256")
        }
    }

    @Test("a taken username is re-asked, wrong answers end in an error redirect with state, and the 004 token is read from cookie or title")
    func errorsAndTokens() async throws {
        let bench = TWVBench()
        try bench.idp.addUser("taken", tenant: bench.tenant, password: "taken-s3cret")
        let astData = await bench.astData(await bench.device())
        let request = try WebViewAuthorizationRequest(
            baseURL: baseUrl, realm: bench.tenant, userType: .newUser, redirectURI: redirectUrl, astClientData: astData.clientData,
            astClientId: astData.clientId, codeChallenge: astData.codeChallenge, codeChallengeMethod: astData.codeChallengeMethod, state: "st-42")
        let rejections = LockedValue<[String?]>([])
        let location = try await bench.webView.load(request.url, headers: request.headers, until: redirectUrl) { form in
            rejections.withLock { $0.append(form.errorCode) }
            return ["username": "taken", "password": "long-enough-1"]
        }
        // Asked three times (the client's attempts), rejected twice on the page, then the flow ends.
        #expect(rejections.withLock { $0 } == [nil, "username_taken", "username_taken"])
        let redirect = try request.parseRedirect(location, redirectURI: redirectUrl)
        #expect(redirect.error == "too_many_attempts")
        #expect(redirect.state == "st-42")
        #expect(throws: AuthorizationRedirectError(.stateMismatch)) {
            try AuthorizationRedirect.parse(location: location, expectedRedirectURI: redirectUrl, expectedState: "another")
        }

        #expect(WebViewToken.fromCookie("lang=en; OAUTH_TOKEN=abc.def-123; theme=dark") == "abc.def-123")
        #expect(WebViewToken.fromCookie("oauth_token=; x=1") == nil)
        #expect(WebViewToken.fromTitle("Success oauth_token=tok_9") == "tok_9")
        #expect(WebViewToken.fromTitle("Login") == nil)
    }

    @Test("300 concurrent web-view registrations, each on its own device, get distinct codes and activate")
    func concurrentRegistrations() async throws {
        let bench = TWVBench()
        let devices = 300
        let results = await withTaskGroup(of: (String?, KSMEventStatusType?).self) { group in
            for index in 0..<devices {
                group.addTask {
                    let activation = await bench.device()
                    let astData = await bench.astData(activation)
                    guard let request = try? WebViewAuthorizationRequest(
                        baseURL: baseUrl, realm: bench.tenant, userType: .newUser, redirectURI: redirectUrl,
                        astClientData: astData.clientData, astClientId: nil, codeChallenge: astData.codeChallenge,
                        codeChallengeMethod: astData.codeChallengeMethod, state: "device-\(index)"),
                          let location = try? await bench.webView.load(request.url, headers: request.headers, until: redirectUrl, fill: { _ in
                              ["username": "user-\(index)", "password": "password-\(index)"]
                          }),
                          let code = try? request.parseRedirect(location, redirectURI: redirectUrl).code
                    else { return (nil, nil) }
                    return (code, await bench.setCode(activation, .newUser, code).status)
                }
            }
            var all: [(String?, KSMEventStatusType?)] = []
            for await result in group { all.append(result) }
            return all
        }
        let codes = results.compactMap(\.0)
        #expect(codes.count == devices)
        #expect(Set(codes).count == devices)
        #expect(results.allSatisfy { $0.1 == .kOk })
        #expect((0..<devices).allSatisfy { bench.idp.user("user-\($0)", tenant: bench.tenant)?.status == .active })
    }
}
