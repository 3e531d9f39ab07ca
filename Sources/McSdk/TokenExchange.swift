import Foundation
import IdpPrimitives
import IdpWireFormats

/// The MC's token requests: code and verifier for tokens (RFC 6749 §4.1.3, RFC 7636 §4.5), and
/// the refresh-token grant (RFC 6749 §6) with a refresh or an offline token.
enum TokenExchange {
    struct Failure: Error {
        let status: KSMEventStatusType
        let description: String
    }

    /// What a request needs besides its form: the MasterController that sends it (its
    /// configuration, and its listeners, told of a lost connection), the trace it belongs to and
    /// the path of the tenant's token endpoint.
    ///
    /// The MC is held strongly: the event or the refresh that sends a request keeps the MC alive
    /// until the answer is in anyway, and reading its configuration in place copies nothing.
    struct Context: Sendable {
        let controller: MasterController
        let trace: TraceContext
        /// `/auth/realms/<tenant, percent-encoded>/protocol/openid-connect/token`.
        let tokenPath: String

        /// Tells the MC's listeners of `state` (``KSMServerConnectionEvent``); `NOT_REACHABLE`
        /// starts the automated restart.
        func connection(_ state: KSMConnectionState) {
            let controller = controller
            controller.feed.post(KSMServerConnectionEvent(connectionState: state))
            if state == .NOT_REACHABLE {
                controller.startTask(Seam("mc.automatedRestart", trace: trace.seamTrace)) { await controller.automatedRestart() }
            }
        }
    }

    /// What a refresh grant brought: a new access token and the rotated token of the presented kind.
    struct Refreshed: Sendable {
        let accessToken: String
        let rotatedToken: String
        let accessTokenExpiresAt: Date
    }

    /// Redeems `code` for tokens. `knownAstClientId`: the device's AST client id as the MC holds it;
    /// a token answer naming the same id keeps that string rather than make another.
    static func run(code: String, clientId: String, authorization: PendingAuthorization, knownAstClientId: String, context: Context) async -> Result<McTokenSet, Failure> {
        let body = codeGrantBody(code: code, redirectUri: context.controller.configuration.redirectUri, clientId: clientId,
                                 verifier: authorization.verifier)
        let answer = await post(body: body, astClientData: authorization.clientData, context: context)
        let json: TokenResponseBody
        switch answer {
        case .failure(let failure): return .failure(Failure(status: .kCannotAcquireTokenData, description: failure.errorDescription))
        case .success(let (status, body)) where status != 200:
            let error = body.string("error") ?? "http_\(status)"
            let description = body.string("error_description") ?? ""
            return .failure(Failure(status: .kCannotAcquireTokenData, description: "the IDP refused the code: \(error): \(description)"))
        case .success(let (_, body)): json = body
        }
        guard let access = json.string("access_token"), let refresh = json.string("refresh_token"),
              let offline = json.string("offline_token"), let userId = json.string("user_id"),
              let expiresIn = json.int("expires_in") else {
            return .failure(Failure(status: .kCannotAcquireTokenData, description: "the IDP's token response lacks a token or the user id"))
        }
        return .success(McTokenSet(
            accessToken: access, refreshToken: refresh, offlineToken: offline, userId: userId,
            astClientId: json.string("ast_client_id", reusing: knownAstClientId) ?? IdpWire.unassignedAstClientId,
            clientId: clientId,
            accessTokenExpiresAt: context.controller.configuration.clock.now().addingTimeInterval(TimeInterval(expiresIn))
        ))
    }

    /// The code grant's form, `grant_type=authorization_code`, `code`, `redirect_uri`, `client_id`
    /// and `code_verifier`, encoded as ``FormURLEncoding/encodeBytes(_:)`` encodes those pairs:
    /// measured first, then written once into the body's own storage, with no array of pairs
    /// between.
    static func codeGrantBody(code: String, redirectUri: String, clientId: String, verifier: String) -> [UInt8] {
        typealias Form = FormURLEncoding
        let grant = "grant_type=authorization_code&code=", redirectKey = "&redirect_uri=", clientKey = "&client_id="
        let verifierKey = "&code_verifier="
        let length = grant.utf8.count + Form.componentLength(code) + redirectKey.utf8.count + Form.componentLength(redirectUri)
            + clientKey.utf8.count + Form.componentLength(clientId) + verifierKey.utf8.count + Form.componentLength(verifier)
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            var offset = Form.write(verbatim: grant, into: buffer, at: 0)
            offset = Form.write(component: code, into: buffer, at: offset)
            offset = Form.write(verbatim: redirectKey, into: buffer, at: offset)
            offset = Form.write(component: redirectUri, into: buffer, at: offset)
            offset = Form.write(verbatim: clientKey, into: buffer, at: offset)
            offset = Form.write(component: clientId, into: buffer, at: offset)
            offset = Form.write(verbatim: verifierKey, into: buffer, at: offset)
            count = Form.write(component: verifier, into: buffer, at: offset)
        }
    }

    /// Exchanges `token` (a refresh or an offline token) for a new access token and its rotated
    /// successor.
    static func refresh(_ token: String, clientId: String, context: Context) async -> Result<Refreshed, McTokenError> {
        let answer = await post(body: FormURLEncoding.encodeBytes([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", clientId)]),
                                astClientData: nil, context: context)
        let json: TokenResponseBody
        switch answer {
        case .failure(let failure): return .failure(failure)
        case .success(let (status, body)) where status != 200:
            let error = body.string("error") ?? "http_\(status)"
            if let lockout = LockoutInformation(error: error, lockedUntil: body.string("locked_until")) {
                return .failure(.locked(lockout))
            }
            let description = body.string("error_description") ?? ""
            return .failure(McTokenError(.refused(error), status: .kLoginRequired, "the IDP refused the refresh: \(error): \(description)"))
        case .success(let (_, body)): json = body
        }
        guard let access = json.string("access_token"), let rotated = json.string("refresh_token"),
              let expiresIn = json.int("expires_in") else {
            return .failure(McTokenError(.protocolError, status: .kCannotAcquireTokenData, "the IDP's refresh response lacks a token"))
        }
        return .success(Refreshed(accessToken: access, rotatedToken: rotated,
                                  accessTokenExpiresAt: context.controller.configuration.clock.now().addingTimeInterval(TimeInterval(expiresIn))))
    }

    /// Why an exchange gave no token, as its result event.
    struct ExchangeRefusal: Error {
        let result: KSMExchangeIamTokenResultEvent
        init(status: KSMEventStatusType, errorCode: Int? = nil, errorDescription: String) {
            result = KSMExchangeIamTokenResultEvent(status: status, errorCode: errorCode, errorDescription: errorDescription)
        }
    }

    /// RFC 8693: the access token for a token for `audience`.
    static func exchange(_ accessToken: String, audience: String, clientId: String, context: Context) async -> Result<String, ExchangeRefusal> {
        let answer = await post(body: FormURLEncoding.encodeBytes([
            ("grant_type", IdpWire.tokenExchangeGrantType),
            ("subject_token", accessToken),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"),
            ("audience", audience),
            ("client_id", clientId),
        ]), astClientData: nil, context: context)
        switch answer {
        case .failure(let failure):
            return .failure(ExchangeRefusal(status: .kCannotAcquireTokenData, errorDescription: failure.errorDescription))
        case .success(let (status, body)) where status != 200:
            let error = body.string("error") ?? "http_\(status)"
            let description = "the IDP refused the exchange: \(error): \(body.string("error_description") ?? "")"
            if error == IdpWire.astClientRoleErrorCode {
                return .failure(ExchangeRefusal(status: .kFailed, errorCode: KSMExchangeIamTokenResultEvent.astClientRoleErrorCode, errorDescription: description))
            }
            return .failure(ExchangeRefusal(status: .kCannotAcquireTokenData, errorDescription: description))
        case .success(let (_, body)):
            guard let token = body.string("access_token"), !token.isEmpty else {
                return .failure(ExchangeRefusal(status: .kCannotAcquireTokenData, errorDescription: "the IDP's exchange response lacks the token"))
            }
            return .success(token)
        }
    }

    /// POSTs a form's encoded `body` to the tenant's token endpoint (``Context/tokenPath``); the HTTP status and the JSON body (see
    /// ``TokenResponseBody``: flat answers are read without `JSONSerialization`).
    ///
    /// A connection lost on the way is reported (`CONNECTION_LOST`) and the request sent once
    /// more; if that fails too, `NOT_REACHABLE` is reported (the MC then restarts itself).
    private static func post(body: consuming [UInt8], astClientData: String?, context: Context) async -> Result<(Int, TokenResponseBody), McTokenError> {
        let controller = context.controller
        let transport: any Transport
        if let configured = controller.configuration.transport {
            transport = configured
        } else {
            switch IdpNetwork.shared.connect(to: controller.configuration.idpUrl, certificateChain: controller.configuration.certificateChain) {
            case .success(let found): transport = found
            case .failure(let error): return .failure(McTokenError(.unreachable, status: .kCannotAcquireTokenData, error.description))
            }
        }
        var headers = HTTPHeaders(minimumCapacity: 2 + (context.trace.traceState.isEmpty ? 0 : 1) + (astClientData != nil ? 1 : 0))
        headers.add("Content-Type", "application/x-www-form-urlencoded")
        headers.add("traceparent", context.trace.traceParent)
        if !context.trace.traceState.isEmpty { headers.add("tracestate", context.trace.traceState) }
        if let astClientData { headers.add("X-KOBIL-ASTCLIENTDATA", astClientData) }
        let request = HTTPRequest(
            method: "POST",
            target: context.tokenPath,
            headers: headers, body: body
        )
        var retried = false
        let phases = PhaseRecorder.current
        while true {
            phases?.note(.tokenRequestSent)
            let answer = await transport.send(request)
            phases?.note(.tokenAnswered)
            switch answer {
            case .success(let response):
                return .success((response.status, TokenResponseBody(response.body)))
            case .failure(let error) where error.kind == .connectionLost && !retried:
                context.connection(.CONNECTION_LOST)
                retried = true
            case .failure(let error):
                if error.kind == .connectionLost { context.connection(.NOT_REACHABLE) }
                return .failure(McTokenError(.unreachable, status: .kCannotAcquireTokenData, error.description))
            }
        }
    }
}
