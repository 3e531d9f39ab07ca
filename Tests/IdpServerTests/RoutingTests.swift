import Foundation
import IdpWireFormats
import Testing
@testable import IdpServer

/// `IdpServer.route`, which cuts a request target by bytes, against the routing by Characters
/// that `handle` answered with before: a prefix compared as text, the tenant up to the next `/`,
/// the rest compared to each endpoint's path as text.
@Suite("IdpServer routing")
struct RoutingTests {
    static func characterRoute(_ target: String) -> (tenant: String, endpoint: IdpServer.Endpoint?)? {
        let path = target[..<(target.utf8.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex)]
        let prefix = "/auth/realms/"
        guard path.hasPrefix(prefix), let slash = path.utf8.dropFirst(prefix.utf8.count).firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let tenant = String(path[path.utf8.index(path.startIndex, offsetBy: prefix.utf8.count)..<slash])
        let rest = path[path.utf8.index(after: slash)...]
        switch rest {
        case "protocol/openid-connect/auth": return (tenant, .authorize)
        case "login-actions/authenticate": return (tenant, .authenticate)
        case "protocol/openid-connect/token": return (tenant, .token)
        default: return (tenant, nil)
        }
    }

    @Test("targets of every shape route as their Characters do")
    func routesAsCharacters() {
        let tenants = ["demo", "", "dé", "\u{301}x", "e\u{301}", "\u{212A}", "a b", "x\r\n"]
        let rests = ["protocol/openid-connect/auth", "login-actions/authenticate", "protocol/openid-connect/token",
                     "protocol/openid-connect/auth/", "protocol/openid-connect/autH", "protocol/openid-connect/auth\u{301}",
                     "\u{301}login-actions/authenticate", "login-actions/authenticat", "", "protocol/openid-connect/to\u{212A}en"]
        var targets = ["", "/", "/auth/realms/", "/auth/realms/demo", "/auth/realms/demo?x=/y", "/auth/realms?/demo/x", "/auth/realm/demo/x",
                       "/Auth/realms/demo/protocol/openid-connect/auth", "/auth/realms/\u{301}/protocol/openid-connect/auth"]
        for tenant in tenants {
            for rest in rests {
                for query in ["", "?", "?a=1&b=/c", "?protocol/openid-connect/auth"] {
                    targets.append("/auth/realms/\(tenant)/\(rest)\(query)")
                }
            }
        }
        for target in targets {
            let routed = IdpServer.route(target), expected = Self.characterRoute(target)
            #expect(routed?.tenant == expected?.tenant && routed?.endpoint == expected?.endpoint, "\(target.debugDescription)")
            #expect((routed == nil) == (expected == nil), "\(target.debugDescription)")
        }
    }

    @Test("an endpoint asked with the wrong method is refused with 405, an unknown path with 404")
    func methodsAndPaths() {
        let server = IdpServer()
        let cases: [(String, String, Int)] = [
            ("POST", "/auth/realms/demo/protocol/openid-connect/auth", 405), ("GET", "/auth/realms/demo/login-actions/authenticate", 405),
            ("GET", "/auth/realms/demo/protocol/openid-connect/token?a=b", 405), ("GET", "/auth/realms/demo/protocol/openid-connect/nothing", 404),
            ("GET", "/realms/demo/protocol/openid-connect/auth", 404), ("POST", "/auth/realms/\u{301}x/protocol/openid-connect/token", 404),
        ]
        for (method, target, status) in cases {
            let response = server.handle(HTTPRequest(method: method, target: target))
            #expect(response.status == status, "\(method) \(target)")
        }
    }
}
