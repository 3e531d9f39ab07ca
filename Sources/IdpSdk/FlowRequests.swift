import Foundation
import IdpPrimitives
import IdpWireFormats

/// The HTTP side of a flow: building requests and reading the IDP's answers. Pure functions.
enum FlowRequests {
    /// What an IDP answer means for the flow.
    enum Interpretation {
        case form(XHTMLForm)
        case finished(Result<String, IdpSdkError>)
    }

    static func authorize(_ context: FlowContext, astClientData: AstClientDataInfo, template: AuthorizeTemplate) -> HTTPRequest {
        let target = authorizeTarget(template: template, clientId: context.clientId, userId: context.userId,
                                     codeChallenge: astClientData.codeChallenge, codeChallengeMethod: astClientData.codeChallengeMethod)
        let astClientId = astClientData.astClientId
        let sendsAstClientId = IdpWire.isAssigned(astClientId: astClientId)
        // Room for exactly its fields: a flow parked at the IDP keeps its request.
        var headers = HTTPHeaders(minimumCapacity: 2 + (sendsAstClientId ? 1 : 0) + (context.traceParent != nil ? 1 : 0) + (context.traceRestarted ? 1 : 0))
        headers.add("Accept", "application/xhtml+xml")
        headers.add("X-KOBIL-ASTCLIENTDATA", astClientData.clientData)
        if sendsAstClientId { headers.add("X-KOBIL-ASTCLIENTID", astClientId) }
        if let traceParent = context.traceParent { headers.add("traceparent", traceParent) }
        if context.traceRestarted { headers.add("tracestate", TraceParent.restartedTraceState) }
        return HTTPRequest(method: "GET", target: target, headers: headers)
    }

    /// The authorize request's target: the template's path, then `client_id`, the template's shared
    /// parameters, a new `nonce` (16 random bytes), `code_challenge`, `code_challenge_method` and,
    /// for a login, `login_hint`, each encoded as ``FormURLEncoding/encode(_:)`` encodes a pair;
    /// measured first, then written once into the string's own storage.
    static func authorizeTarget(template: AuthorizeTemplate, clientId: String, userId: String?, codeChallenge: String,
                                codeChallengeMethod: String) -> String {
        typealias Form = FormURLEncoding
        let nonceBytes = 16
        var length = template.beforeClient.utf8.count + Form.componentLength(clientId) + template.beforeNonce.utf8.count
            + SecureRandom.tokenLength(byteCount: nonceBytes) + AuthorizeTemplate.challengeKey.utf8.count + Form.componentLength(codeChallenge)
            + AuthorizeTemplate.methodKey.utf8.count + Form.componentLength(codeChallengeMethod)
        if let userId { length += AuthorizeTemplate.loginHintKey.utf8.count + Form.componentLength(userId) }
        return String(unsafeUninitializedCapacity: length) { buffer in
            var offset = Form.write(verbatim: template.beforeClient, into: buffer, at: 0)
            offset = Form.write(component: clientId, into: buffer, at: offset)
            offset = Form.write(verbatim: template.beforeNonce, into: buffer, at: offset)
            // A token is URL-safe Base 64, which form encoding leaves as it is.
            offset = SecureRandom.writeToken(byteCount: nonceBytes, into: buffer, at: offset)
            offset = Form.write(verbatim: AuthorizeTemplate.challengeKey, into: buffer, at: offset)
            offset = Form.write(component: codeChallenge, into: buffer, at: offset)
            offset = Form.write(verbatim: AuthorizeTemplate.methodKey, into: buffer, at: offset)
            offset = Form.write(component: codeChallengeMethod, into: buffer, at: offset)
            if let userId {
                offset = Form.write(verbatim: AuthorizeTemplate.loginHintKey, into: buffer, at: offset)
                offset = Form.write(component: userId, into: buffer, at: offset)
            }
            return offset
        }
    }

    /// What a service's authorize requests share, encoded once when the service is made: the path
    /// up to the client's id, and the parameters between it and the flow's own (the redirect URI,
    /// scope, response type and mode).
    struct AuthorizeTemplate: Sendable {
        /// `/auth/realms/<tenant>/protocol/openid-connect/auth?client_id=`
        let beforeClient: String
        /// `&redirect_uri=…&scope=openid&response_type=code&response_mode=fragment&nonce=`
        let beforeNonce: String

        static var challengeKey: String { "&code_challenge=" }
        static var methodKey: String { "&code_challenge_method=" }
        static var loginHintKey: String { "&login_hint=" }

        init(tenantId: String, redirectUri: String) {
            beforeClient = "/auth/realms/\(FormURLEncoding.percentEncode(tenantId))/protocol/openid-connect/auth?client_id="
            beforeNonce = "&" + FormURLEncoding.encode([
                ("redirect_uri", redirectUri), ("scope", "openid"), ("response_type", "code"), ("response_mode", "fragment"),
            ]) + "&nonce="
        }
    }

    /// The POST of `fields` and the form's hidden inputs to the form's action. `fields` becomes the
    /// body's pairs: room made for the hidden inputs too spares a copy.
    static func submit(form: XHTMLForm, fields: consuming [(String, String)], context: FlowContext) -> Result<HTTPRequest, IdpSdkError> {
        var target = form.action
        // A path (the usual case) needs no search for a scheme.
        if target.utf8.first != UInt8(ascii: "/"), let scheme = target.range(of: "://") {
            // An absolute action: keep its path; the transport already knows the host.
            let afterHost = target[scheme.upperBound...].firstIndex(of: "/") ?? target.endIndex
            target = String(target[afterHost...])
        }
        guard target.utf8.first == UInt8(ascii: "/"), form.method == "POST" else {
            return .failure(IdpSdkError(.protocolError, "the IDP's form has an unusable action '\(form.action)' or method \(form.method)"))
        }
        var body = fields
        let inputs = form.inputs
        for index in 0..<inputs.count where inputs[index].type == "hidden" { body.append((inputs[index].name, inputs[index].value ?? "")) }
        var headers = HTTPHeaders(minimumCapacity: context.traceParent != nil ? 3 : 2)
        headers.add("Content-Type", "application/x-www-form-urlencoded")
        headers.add("Accept", "application/xhtml+xml")
        if let traceParent = context.traceParent { headers.add("traceparent", traceParent) }
        return .success(HTTPRequest(method: "POST", target: target, headers: headers, body: FormURLEncoding.encodeBytes(body)))
    }

    static func interpret(_ response: HTTPResponse, context: FlowContext) -> Interpretation {
        switch response.status {
        case 200:
            func notReadable() -> Interpretation {
                .finished(.failure(IdpSdkError(.protocolError, "the IDP's page is not UTF-8 or larger than \(XHTMLForm.maximumSize) bytes")))
            }
            guard response.body.count <= XHTMLForm.maximumSize else { return notReadable() }
            do {
                // Read from the body's bytes: a page's text is made only to read an error notice.
                guard let form = try XHTMLForm.parse(body: response.body) else { return notReadable() }
                guard form.asksAnyField else {
                    return .finished(.failure(IdpSdkError(.protocolError, "the IDP's form for client '\(context.clientId)' asks no fields")))
                }
                return .form(form)
            } catch {
                if let text = response.bodyText, let notice = XHTMLForm.errorNotice(in: text) {
                    return .finished(.failure(idpError(code: notice.code ?? "unknown", message: notice.message)))
                }
                return .finished(.failure(IdpSdkError(.protocolError, "cannot read the IDP's form: \(error)")))
            }
        case 301, 302, 303, 307:
            guard let location = response.headers["Location"] else {
                return .finished(.failure(IdpSdkError(.protocolError, "the IDP redirected without a Location")))
            }
            do {
                let redirect = try AuthorizationRedirect.parse(location: location, expectedRedirectURI: context.shared.configuration.redirectUri)
                if let error = redirect.error {
                    if let lockout = LockoutInformation(error: error, lockedUntil: redirectParameter("locked_until", in: location)) {
                        return .finished(.failure(IdpSdkError(lockout: lockout, "\(error): \(redirect.errorDescription ?? lockout.description)")))
                    }
                    return .finished(.failure(idpError(code: error, message: redirect.errorDescription ?? error)))
                }
                guard let code = redirect.code else {
                    return .finished(.failure(IdpSdkError(.protocolError, "the IDP's redirect has no code")))
                }
                return .finished(.success(code))
            } catch {
                return .finished(.failure(IdpSdkError(.protocolError, "cannot read the IDP's redirect: \(error)")))
            }
        default:
            if let text = response.bodyText, let notice = XHTMLForm.errorNotice(in: text) {
                return .finished(.failure(idpError(code: notice.code ?? "http_\(response.status)", message: notice.message)))
            }
            return .finished(.failure(IdpSdkError(.protocolError, "the IDP answered HTTP \(response.status)")))
        }
    }

    /// A parameter of the redirect's fragment (or query) that ``AuthorizationRedirect`` does not
    /// model, such as a lock's `locked_until`; `nil` if absent or malformed.
    static func redirectParameter(_ name: String, in location: String) -> String? {
        guard let start = location.firstIndex(where: { $0 == "#" || $0 == "?" }) else { return nil }
        let pairs = try? FormURLEncoding.decode(String(location[location.index(after: start)...]))
        return pairs?.first { $0.name == name }?.value
    }

    /// The rejection the IDP attached to a re-served form, as `previousError`.
    static func rejection(in form: XHTMLForm) -> IdpSdkError? {
        guard form.errorMessage != nil || form.errorCode != nil else { return nil }
        return IdpSdkError(.credentialsRejected, "\(form.errorCode ?? "rejected"): \(form.errorMessage ?? "")")
    }

    /// An IDP error code (from an error page or a redirect) as an SDK error.
    static func idpError(code: String, message: String) -> IdpSdkError {
        typealias Wire = IdpWire.FlowError
        let mapped: IdpSdkError.Code = switch code {
        case Wire.unknownTenant: .unknownTenant
        case Wire.unknownClient: .unknownClient
        case Wire.userNotEnrolled: .userNotEnrolled
        case Wire.tooManyAttempts: .tooManyAttempts
        // An expired password-reset code is an expired one-time code in the ACTIVATION_CODE
        // field, which the forgot-password flow asks it in.
        case Wire.activationCodeExpired, Wire.resetCodeExpired: .activationCodeExpired
        case Wire.sessionExpired, Wire.invalidSession: .sessionExpired
        default: .authorizationRefused
        }
        return IdpSdkError(mapped, "\(code): \(message)")
    }

    static func error(for transportError: TransportError) -> IdpSdkError {
        switch transportError.kind {
        case .unreachable: IdpSdkError(.idpUnreachable, transportError.message)
        case .certificatePinning: IdpSdkError(.certificatePinning, transportError.message)
        case .connectionLost: IdpSdkError(.connectionLost, transportError.message)
        case .timedOut: IdpSdkError(.timedOut, transportError.message)
        }
    }
}

extension XHTMLForm {
    /// Whether any input is one a user fills in (``XHTMLForm/Input/isVisible``).
    var asksAnyField: Bool {
        for index in 0..<inputs.count where inputs[index].isVisible { return true }
        return false
    }
}

/// Checks a provider's credentials against the step's fields and builds the submission.
enum CredentialCheck {
    /// The submission of `credentials` for the step `data` asked from `form` (`data`'s fields are
    /// the form's visible inputs, in order), or the first thing wrong with them: a requested field
    /// missing, then (when the configuration rejects them) a field not requested, then, field by
    /// field, a value empty, too long or with a control character.
    static func submission(for credentials: [String: String], data: IdpSdkInteractionData, form: XHTMLForm, context: FlowContext) -> Result<HTTPRequest, IdpSdkError> {
        let maximumLength = context.shared.configuration.maximumFieldLength
        // Only an error names the step: the text is not built for a submission that passes.
        var whereAsked: String { "step \(data.step) of client '\(data.clientId)'" }
        // The body's pairs: the visible inputs' values, each looked up once, then the hidden inputs
        // (added by `submit`), in room made for all of them.
        let inputs = form.inputs
        var body: [(String, String)] = []
        body.reserveCapacity(inputs.count)
        for index in 0..<inputs.count where inputs[index].isVisible {
            guard let value = credentials[inputs[index].id] else {
                return .failure(IdpSdkError(.missingCredentialField, "credentials lack field '\(inputs[index].id)', which \(whereAsked) requested"))
            }
            body.append((inputs[index].name, value))
        }
        if context.shared.configuration.unrequestedFields == .reject {
            let requested = Set(data.inputFieldIds)
            for id in credentials.keys.sorted() where !requested.contains(id) {
                return .failure(IdpSdkError(.unexpectedCredentialField, "credentials name field '\(id)', which \(whereAsked) did not request (it asked \(data.inputFieldIds))"))
            }
        }
        var field = 0
        for index in 0..<inputs.count where inputs[index].isVisible {
            let value = body[field].1
            if value.isEmpty {
                return .failure(IdpSdkError(.emptyCredentialField, "field '\(inputs[index].id)' of \(whereAsked) is empty"))
            }
            let length = value.utf8.count
            if length > maximumLength {
                return .failure(IdpSdkError(.credentialFieldTooLong,
                                            "field '\(inputs[index].id)' of \(whereAsked) is \(length) bytes; at most \(maximumLength) are accepted"))
            }
            // By byte: every byte of a scalar above U+007F is at least 0x80.
            for byte in value.utf8 where byte < 0x20 || byte == 0x7F {
                return .failure(IdpSdkError(.invalidCredentialValue, "field '\(inputs[index].id)' of \(whereAsked) contains a control character"))
            }
            if context.shared.shouldHashPin && inputs[index].type == "password" { body[field].1 = Base64URL.encode(SHA256.hash(value)) }
            field += 1
        }
        return FlowRequests.submit(form: form, fields: consume body, context: context)
    }
}
