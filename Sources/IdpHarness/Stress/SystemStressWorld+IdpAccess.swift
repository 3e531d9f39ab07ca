import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpServer

extension SystemStress.World {
    /// The IDP's decisions on `user`, once every decision up to the last is in its audit log. A
    /// decision's entries are appended just after it is made, so a free run can read in between
    /// (a gap in the numbers); under control nobody else runs while a participant reads. Gives up
    /// after 10 s and returns what is there.
    func settledDecisions(of user: String) -> [AuditEntry] {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let decisions = server.userDecisions(user, tenant: Self.tenant)
            let numbers = Set(decisions.compactMap(\.userDecision))
            if UInt64(numbers.count) == (numbers.max() ?? 0) || ContinuousClock.now >= deadline { return decisions }
            Thread.sleep(forTimeInterval: 0.000_1)
        }
    }

    /// When the IDP granted each refresh of a trace, oldest first.
    func refreshes(trace: String) -> [Date] { server.auditLog(traceId: trace).filter { $0.event == .tokensRefreshed }.map(\.time).sorted() }

    /// Posts `code` to the token endpoint with a verifier that is not the one its challenge was
    /// made from; returns the HTTP status.
    func redeemDirectly(_ code: String, clientId: String, trace: TraceParent) -> Int {
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/x-www-form-urlencoded")
        headers.set("traceparent", trace.description)
        let form = FormURLEncoding.encode([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://kobil/OpenIdRedirectUri"),
                                           ("client_id", clientId), ("code_verifier", PKCE.makeVerifier())])
        let response = server.handle(HTTPRequest(method: "POST", target: "/auth/realms/\(Self.tenant)/protocol/openid-connect/token",
                                                 headers: headers, body: Array(form.utf8)))
        return response.status
    }
}
