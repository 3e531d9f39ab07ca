import Foundation
import IdpPrimitives
import IdpServer

/// The MC's token requests: code and verifier for tokens (RFC 6749 §4.1.3, RFC 7636 §4.5), and
/// the refresh-token grant (RFC 6749 §6) with a refresh or an offline token.
enum TokenExchange {
    struct Failure: Error {
        let status: KSMEventStatusType
        let description: String
    }

    /// What a refresh grant brought: a new access token and the rotated token of the presented kind.
    struct Refreshed: Sendable {
        let accessToken: String
        let rotatedToken: String
        let accessTokenExpiresAt: Date
    }

    static func run(code: String, clientId: String, tenantId: String, authorization: PendingAuthorization, configuration: MasterController.Configuration) async -> Result<McTokenSet, Failure> {
        let answer = await post([
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", configuration.redirectUri),
            ("client_id", clientId),
            ("code_verifier", authorization.verifier),
        ], tenantId: tenantId, astClientData: authorization.clientData, configuration: configuration)
        let json: [String: Any]
        switch answer {
        case .failure(let failure): return .failure(Failure(status: failure.status, description: failure.errorDescription))
        case .success(let (status, body)) where status != 200:
            let error = body["error"] as? String ?? "http_\(status)"
            let description = body["error_description"] as? String ?? ""
            return .failure(Failure(status: .kCannotAcquireAccessTokenForAuthorizationCode, description: "the IDP refused the code: \(error): \(description)"))
        case .success(let (_, body)): json = body
        }
        guard let access = json["access_token"] as? String, let refresh = json["refresh_token"] as? String,
              let offline = json["offline_token"] as? String, let userId = json["user_id"] as? String,
              let expiresIn = json["expires_in"] as? Int else {
            return .failure(Failure(status: .kCannotAcquireAccessTokenForAuthorizationCode, description: "the IDP's token response lacks a token or the user id"))
        }
        return .success(McTokenSet(
            accessToken: access, refreshToken: refresh, offlineToken: offline, userId: userId,
            astClientId: json["ast_client_id"] as? String ?? IdpServer.unassignedAstClientId,
            clientId: clientId,
            accessTokenExpiresAt: configuration.clock.now().addingTimeInterval(TimeInterval(expiresIn))
        ))
    }

    /// Exchanges `token` (a refresh or an offline token) for a new access token and its rotated
    /// successor.
    static func refresh(_ token: String, clientId: String, tenantId: String, configuration: MasterController.Configuration) async -> Result<Refreshed, McTokenError> {
        let answer = await post([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", clientId)],
                                tenantId: tenantId, astClientData: nil, configuration: configuration)
        let json: [String: Any]
        switch answer {
        case .failure(let failure): return .failure(failure)
        case .success(let (status, body)) where status != 200:
            let error = body["error"] as? String ?? "http_\(status)"
            if let lockout = LockoutInformation(error: error, lockedUntil: body["locked_until"] as? String) {
                return .failure(.locked(lockout))
            }
            let description = body["error_description"] as? String ?? ""
            return .failure(McTokenError(.refused(error), status: .kLoginRequired, "the IDP refused the refresh: \(error): \(description)"))
        case .success(let (_, body)): json = body
        }
        guard let access = json["access_token"] as? String, let rotated = json["refresh_token"] as? String,
              let expiresIn = json["expires_in"] as? Int else {
            return .failure(McTokenError(.protocolError, status: .kCannotAcquireTokenData, "the IDP's refresh response lacks a token"))
        }
        return .success(Refreshed(accessToken: access, rotatedToken: rotated,
                                  accessTokenExpiresAt: configuration.clock.now().addingTimeInterval(TimeInterval(expiresIn))))
    }

    /// POSTs a form to the tenant's token endpoint; the HTTP status and the JSON body.
    private static func post(_ form: [(String, String)], tenantId: String, astClientData: String?, configuration: MasterController.Configuration) async -> Result<(Int, [String: Any]), McTokenError> {
        let transport: any Transport
        if let configured = configuration.transport {
            transport = configured
        } else {
            switch IdpNetwork.shared.connect(to: configuration.idpUrl, certificateChain: configuration.certificateChain) {
            case .success(let found): transport = found
            case .failure(let error): return .failure(McTokenError(.unreachable, status: .kNotReachable, error.description))
            }
        }
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/x-www-form-urlencoded")
        if let astClientData { headers.set("X-KOBIL-ASTCLIENTDATA", astClientData) }
        let request = HTTPRequest(
            method: "POST",
            target: "/auth/realms/\(FormURLEncoding.percentEncode(tenantId))/protocol/openid-connect/token",
            headers: headers, body: Array(FormURLEncoding.encode(form).utf8)
        )
        switch await transport.send(request) {
        case .success(let response):
            let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
            return .success((response.status, json))
        case .failure(let error):
            return .failure(McTokenError(.unreachable, status: error.kind == .connectionLost ? .kConnectionLost : .kNotReachable, error.description))
        }
    }
}
