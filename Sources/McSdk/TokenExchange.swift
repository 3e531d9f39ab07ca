import Foundation
import IdpPrimitives
import IdpServer

/// The MC's token request: code and verifier for tokens (RFC 6749 §4.1.3, RFC 7636 §4.5).
enum TokenExchange {
    struct Failure: Error {
        let status: KSMEventStatusType
        let description: String
    }

    static func run(code: String, clientId: String, tenantId: String, authorization: PendingAuthorization, configuration: MasterController.Configuration) async -> Result<McTokenSet, Failure> {
        let transport: any Transport
        if let configured = configuration.transport {
            transport = configured
        } else {
            switch IdpNetwork.shared.connect(to: configuration.idpUrl, certificateChain: configuration.certificateChain) {
            case .success(let found): transport = found
            case .failure(let error): return .failure(Failure(status: .kNotReachable, description: error.description))
            }
        }
        let body = FormURLEncoding.encode([
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", configuration.redirectUri),
            ("client_id", clientId),
            ("code_verifier", authorization.verifier),
        ])
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/x-www-form-urlencoded")
        headers.set("X-KOBIL-ASTCLIENTDATA", authorization.clientData)
        let request = HTTPRequest(
            method: "POST",
            target: "/auth/realms/\(FormURLEncoding.percentEncode(tenantId))/protocol/openid-connect/token",
            headers: headers, body: Array(body.utf8)
        )
        let response: HTTPResponse
        switch await transport.send(request) {
        case .success(let answer): response = answer
        case .failure(let error):
            return .failure(Failure(status: error.kind == .connectionLost ? .kConnectionLost : .kNotReachable, description: error.description))
        }
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        guard response.status == 200 else {
            let error = json["error"] as? String ?? "http_\(response.status)"
            let description = json["error_description"] as? String ?? ""
            return .failure(Failure(status: .kCannotAcquireAccessTokenForAuthorizationCode, description: "the IDP refused the code: \(error): \(description)"))
        }
        guard let access = json["access_token"] as? String, let refresh = json["refresh_token"] as? String,
              let offline = json["offline_token"] as? String, let userId = json["user_id"] as? String,
              let expiresIn = json["expires_in"] as? Int else {
            return .failure(Failure(status: .kCannotAcquireAccessTokenForAuthorizationCode, description: "the IDP's token response lacks a token or the user id"))
        }
        return .success(McTokenSet(
            accessToken: access, refreshToken: refresh, offlineToken: offline, userId: userId,
            astClientId: json["ast_client_id"] as? String ?? IdpServer.unassignedAstClientId,
            accessTokenExpiresAt: Date().addingTimeInterval(TimeInterval(expiresIn))
        ))
    }
}
