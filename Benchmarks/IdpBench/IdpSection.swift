import BenchSupport
import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpServer

/// The IDP's own hot path, each operation against a Mutex-protected dictionary lookup measured in
/// the same run: what serving, reading and answering one form step costs next to the cheapest
/// synchronized operation.
///
/// Rows go into the report's floors with the prefix `FloorRow.idpPrefix`; the text and markdown renderings
/// show them in their own table with the ratio to the floor.
func runIdpSection(_ options: Options, progress: Progress) throws(BenchFailure) -> [FloorRow] {
    let rig = try IdpStepRig(users: 1_024)
    // The providers section's floor, measured again here, in this section's runs.
    let floor = floors(HotPathData(userCount: 1_000, seed: options.seed)).first { $0.name == idpFloorName }!
    let page = rig.loginForm
    let cells: [(name: String, makeOperation: (Int) -> @Sendable (Int) -> Int)] = [
        (idpFloorName, floor.makeOperation),
        ("one form render (KssIdpLogin step 1)", { _ in
            let idp = rig.idp
            return { _ in idp.renderStepForm(tenant: IdpStepRig.tenant, clientId: "KssIdpLogin", step: 0, sessionCode: "bench-session")?.body.count ?? 0 }
        }),
        ("one form parse (XHTMLForm.parse, the same page)", { _ in
            { _ in (try? XHTMLForm.parse(page))?.inputs.count ?? 0 }
        }),
        ("one SecureRandom.token()", { _ in
            { _ in SecureRandom.token().utf8.count }
        }),
        ("one authorize + authenticate step (login to a code)", { thread in
            { call in rig.login(user: (thread * 7_919 + call) & 1_023) }
        }),
    ]
    let threadCounts = options.threads.filter { $0 <= 2 }.isEmpty ? [1] : options.threads.filter { $0 <= 2 }
    guard rig.login(user: 0) == 302 else { throw BenchFailure("idp: a login step did not end in a redirect with a code") }
    var rows: [FloorRow] = []
    for threads in threadCounts {
        var runs = Array(repeating: [RaceResult](), count: cells.count)
        for round in 0..<options.rounds {
            for (index, cell) in cells.enumerated() {
                progress.report("idp: \(threads) thread\(threads == 1 ? "" : "s"), round \(round + 1)/\(options.rounds), \(cell.name)")
                runs[index].append(race(threads: threads, seconds: options.secondsPerProviderCell, makeOperation: cell.makeOperation))
            }
        }
        for (index, results) in runs.enumerated() {
            let median = results.median(by: \.nanosecondsPerOperation)
            rows.append(FloorRow(name: FloorRow.idpPrefix + cells[index].name, threads: threads, nsPerOp: median.nanosecondsPerOperation,
                                 ops: results.reduce(0) { $0 + $1.operations }))
        }
    }
    return rows
}

/// An IDP with active users, driven through `handle(_:)` as the transport would.
final class IdpStepRig: Sendable {
    static let tenant = "idp-bench"
    let idp = IdpServer(configuration: .init(auditLogCapacity: 4_096))
    private let users: [(name: String, password: String)]
    private let authorize: HTTPRequest
    /// The PKCE verifier of `authorize`'s challenge, for the token request.
    private let verifier: String
    /// Step 1 of `KssIdpLogin` as the IDP serves it.
    let loginForm: String
    /// Each user's authorize request as the engine sends it for a login (``loginWithTokens(user:)``).
    private let loginAuthorize: [HTTPRequest]
    /// The AST client data and the traceparent the MasterController's requests carry.
    private let astClientData = SecureRandom.token(byteCount: 32)
    private let traceParent = TraceParent.randomHeader()

    init(users count: Int) throws(BenchFailure) {
        users = (0..<count).map { ("step-user-\($0)", "step-password-\($0)") }
        let verifier = PKCE.makeVerifier()
        self.verifier = verifier
        do {
            try idp.addTenant(Self.tenant)
            for user in users { try idp.addUser(user.name, tenant: Self.tenant, password: user.password) }
        } catch {
            throw BenchFailure("idp: setup: \(error)")
        }
        let query = FormURLEncoding.encode([
            ("client_id", "KssIdpLogin"), ("redirect_uri", IdpClientConfiguration.defaultRedirectURI), ("response_type", "code"),
            ("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", PKCE.methodS256),
        ])
        var headers = HTTPHeaders()
        headers.set("X-KOBIL-ASTCLIENTDATA", "idp-bench")
        authorize = HTTPRequest(method: "GET", target: "/auth/realms/\(Self.tenant)/protocol/openid-connect/auth?\(query)", headers: headers)
        loginForm = idp.handle(authorize).bodyText ?? ""
        let challenge = PKCE.challenge(for: verifier)
        loginAuthorize = users.map { [astClientData] user in
            let query = FormURLEncoding.encode([
                ("client_id", "KssIdpLogin"), ("redirect_uri", IdpClientConfiguration.defaultRedirectURI), ("scope", "openid"),
                ("response_type", "code"), ("response_mode", "fragment"), ("nonce", SecureRandom.token(byteCount: 16)),
                ("code_challenge", challenge), ("code_challenge_method", PKCE.methodS256), ("login_hint", user.name),
            ])
            var headers = HTTPHeaders()
            headers.set("Accept", "application/xhtml+xml")
            headers.set("X-KOBIL-ASTCLIENTDATA", astClientData)
            return HTTPRequest(method: "GET", target: "/auth/realms/\(Self.tenant)/protocol/openid-connect/auth?\(query)", headers: headers)
        }
    }

    /// One login of `user`: the authorize request (step 1 served) and its answer (a code issued).
    /// Returns the answer's status, 302 when a code was issued.
    func login(user index: Int) -> Int {
        let page = idp.handle(authorize)
        // The action, found as a client that knows the page would: after `action="`.
        guard let action = Self.action(in: page.body) else { return -1 }
        let user = users[index % users.count]
        let body = FormURLEncoding.encode([("username", user.name), ("password", user.password)])
        return idp.handle(HTTPRequest(method: "POST", target: action, body: Array(body.utf8))).status
    }

    /// The requests of one whole login of `user`, with the parameters and headers the engine and
    /// the MasterController send: the authorize request (with the user as `login_hint`), the
    /// credentials (a code issued), and the token request (the code redeemed). Returns the token
    /// answer's status, 200 when tokens were issued.
    func loginWithTokens(user index: Int) -> Int {
        let page = idp.handle(loginAuthorize[index % users.count])
        guard let action = Self.action(in: page.body) else { return -1 }
        let user = users[index % users.count]
        var formHeaders = HTTPHeaders()
        formHeaders.set("Content-Type", "application/x-www-form-urlencoded")
        formHeaders.set("Accept", "application/xhtml+xml")
        let body = FormURLEncoding.encode([("username", user.name), ("password", user.password)])
        let answer = idp.handle(HTTPRequest(method: "POST", target: action, headers: formHeaders, body: Array(body.utf8)))
        guard answer.status == 302, let location = answer.headers["Location"],
              let code = (try? AuthorizationRedirect.parse(location: location, expectedRedirectURI: nil))?.code else { return -2 }
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/x-www-form-urlencoded")
        headers.set("traceparent", traceParent)
        headers.set("X-KOBIL-ASTCLIENTDATA", astClientData)
        let form = FormURLEncoding.encode([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", IdpClientConfiguration.defaultRedirectURI),
                                           ("client_id", "KssIdpLogin"), ("code_verifier", verifier)])
        return idp.handle(HTTPRequest(method: "POST", target: "/auth/realms/\(Self.tenant)/protocol/openid-connect/token",
                                      headers: headers, body: Array(form.utf8))).status
    }

    /// The form's action, found as a client that knows the page would: after `action="`, with
    /// the one entity the IDP writes there (`&amp;`) decoded. A byte scan, so the figure is the
    /// IDP's, not the search's.
    private static func action(in body: [UInt8]) -> String? {
        let marker = Array("action=\"".utf8)
        var index = 0
        while index + marker.count <= body.count {
            if body[index] == marker[0], body[index..<(index + marker.count)].elementsEqual(marker) { break }
            index += 1
        }
        guard index + marker.count <= body.count else { return nil }
        var action: [UInt8] = []
        index += marker.count
        while index < body.count, body[index] != UInt8(ascii: "\"") {
            if body[index] == UInt8(ascii: "&"), body[index..<min(body.count, index + 5)].elementsEqual("&amp;".utf8) {
                action.append(UInt8(ascii: "&"))
                index += 5
            } else {
                action.append(body[index])
                index += 1
            }
        }
        return String(decoding: action, as: UTF8.self)
    }
}

/// The floor every IDP figure is set against.
let idpFloorName = "Mutex + dictionary lookup"
