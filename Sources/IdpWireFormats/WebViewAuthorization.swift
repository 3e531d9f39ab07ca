/// The web-view (TWV) authorization request of `000_*.txt`: the URL an app loads in its web view
/// to register or log a user in at the IDP, and the headers that must come with it.
///
/// ```swift
/// let request = try WebViewAuthorizationRequest(
///     baseURL: "https://idp.example.test", realm: "maverimport", userType: .newUser,
///     redirectURI: "https://kobil/OpenIdRedirectUri",
///     astClientData: ast.clientData, astClientId: ast.astClientId,
///     codeChallenge: ast.codeChallenge, codeChallengeMethod: ast.codeChallengeMethod)
/// // request.url: …/auth/realms/maverimport/protocol/openid-connect/auth?client_id=IDPRegistration&…
/// // request.headers: X-KOBIL-ASTCLIENTDATA only (a new user has no AST client id yet)
/// ```
///
/// Parameters, in the documents' order: `client_id`, `redirect_uri`, `scope=openid`,
/// `response_type=code`, `response_mode=fragment`, `nonce`, `code_challenge`,
/// `code_challenge_method`, then `state` if given. The header rule: a new user sends
/// `X-KOBIL-ASTCLIENTDATA` only; an existing user and a subsequent login send it together with
/// `X-KOBIL-ASTCLIENTID`.
public struct WebViewAuthorizationRequest: Sendable, Equatable {
    /// Who the web view is for; each has its own IDP client.
    public enum UserType: String, Sendable, CaseIterable {
        /// Not registered yet: registers, then activates (`IDPRegistration`).
        case newUser
        /// Registered, installing the app again (`IDPLogin`).
        case existingUser
        /// Logged in before; a new session or an expired token (`IDPSubsequentLogin`).
        case loginUser

        /// The documents' client id for this user type.
        public var clientId: String {
            switch self {
            case .newUser: "IDPRegistration"
            case .existingUser: "IDPLogin"
            case .loginUser: "IDPSubsequentLogin"
            }
        }
    }

    /// The URL to load.
    public let url: String
    /// The headers to send with it.
    public let headers: HTTPHeaders
    /// The nonce in the URL (to compare with the ID token's).
    public let nonce: String
    /// The state in the URL, if one was given (to compare with the redirect's).
    public let state: String?

    /// Builds the request.
    /// - Parameters:
    ///   - baseURL: The IDP's base URL, `https://host[:port][/path]`, without query or fragment.
    ///   - realm: The realm (tenant), e.g. `maverimport`.
    ///   - userType: Which client, and which headers.
    ///   - redirectURI: The redirect URI registered for the client (an absolute URI).
    ///   - astClientData: From `KSMGetAstClientDataResultEvent.clientData`.
    ///   - astClientId: From `KSMGetAstClientDataResultEvent.astClientId`; required (and not the
    ///     zeros of a device without a user) for an existing user and a login, not sent for a new
    ///     user.
    ///   - codeChallenge: The MC's S256 PKCE challenge.
    ///   - codeChallengeMethod: Must be `S256`.
    ///   - nonce: The nonce; by default 32 random hex characters, as the sample's lowercased UUID
    ///     without dashes.
    ///   - state: An optional `state` to send and check on the redirect.
    ///   - traceParent: An optional W3C traceparent, sent as the `traceparent` header so the IDP's
    ///     audit log ties the web-view flow to the app's trace.
    /// - Throws: ``WebViewAuthorizationError`` naming the first bad argument.
    public init(
        baseURL: String, realm: String, userType: UserType, redirectURI: String,
        astClientData: String, astClientId: String?, codeChallenge: String, codeChallengeMethod: String,
        nonce: String? = nil, state: String? = nil, traceParent: String? = nil
    ) throws(WebViewAuthorizationError) {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        guard base.hasPrefix("https://") || base.hasPrefix("http://"), !base.contains("?"), !base.contains("#"),
              !base.contains(where: { $0.isWhitespace }), base.split(separator: "/").count >= 2 else {
            throw WebViewAuthorizationError("base URL '\(baseURL)' is not an http(s) URL without query and fragment")
        }
        guard !realm.isEmpty, realm.utf8.allSatisfy(\.isURIUnreserved) else {
            throw WebViewAuthorizationError("realm '\(realm)' is empty or not made of letters, digits and -._~")
        }
        guard (try? AuthorizationRedirect.parse(location: redirectURI + "#code=x", expectedRedirectURI: redirectURI)) != nil,
              !redirectURI.contains("#") else {
            throw WebViewAuthorizationError("redirect URI '\(redirectURI)' is not an absolute URI without fragment")
        }
        guard !astClientData.isEmpty, astClientData.utf8.count <= 4096, Self.isHeaderValue(astClientData) else {
            throw WebViewAuthorizationError("AST client data is empty, longer than 4096 bytes or not a valid header value")
        }
        guard PKCE.isValidS256Challenge(codeChallenge) else {
            throw WebViewAuthorizationError("code challenge is not an S256 challenge (43 base64url characters)")
        }
        guard codeChallengeMethod == PKCE.methodS256 else {
            throw WebViewAuthorizationError("code challenge method '\(codeChallengeMethod)' is not S256")
        }
        let nonce = nonce ?? Hex.encode(SecureRandom.bytes(16))
        guard !nonce.isEmpty, nonce.utf8.count <= 256 else { throw WebViewAuthorizationError("nonce is empty or longer than 256 bytes") }
        if let state, state.isEmpty || state.utf8.count > 1024 {
            throw WebViewAuthorizationError("state is empty or longer than 1024 bytes")
        }

        var headers = HTTPHeaders()
        headers.set("X-KOBIL-ASTCLIENTDATA", astClientData)
        if let traceParent {
            do {
                headers.set("traceparent", try TraceParent(parsing: traceParent).description)
            } catch {
                throw WebViewAuthorizationError("traceparent is malformed: \(error)")
            }
        }
        if userType != .newUser {
            // A device with no user yet has an id of zeros (and dashes): no id.
            guard let astClientId, IdpWire.isAssigned(astClientId: astClientId),
                  astClientId.utf8.count <= 256, Self.isHeaderValue(astClientId) else {
                throw WebViewAuthorizationError("\(userType.rawValue) needs the AST client id of an activated device (X-KOBIL-ASTCLIENTID)")
            }
            headers.set("X-KOBIL-ASTCLIENTID", astClientId)
        }
        var parameters = [
            ("client_id", userType.clientId), ("redirect_uri", redirectURI), ("scope", "openid"), ("response_type", "code"),
            ("response_mode", "fragment"), ("nonce", nonce), ("code_challenge", codeChallenge), ("code_challenge_method", codeChallengeMethod),
        ]
        if let state { parameters.append(("state", state)) }
        url = "\(base)/auth/realms/\(realm)/protocol/openid-connect/auth?" + FormURLEncoding.encode(parameters)
        self.headers = headers
        self.nonce = nonce
        self.state = state
    }

    /// Reads the redirect the web view ended on: the code, or the IDP's error.
    /// - Throws: ``AuthorizationRedirectError`` for a malformed redirect, one to another URI, or
    ///   one whose `state` is not this request's.
    public func parseRedirect(_ location: String, redirectURI: String) throws(AuthorizationRedirectError) -> AuthorizationRedirect {
        try AuthorizationRedirect.parse(location: location, expectedRedirectURI: redirectURI, expectedState: state)
    }

    /// Visible ASCII and spaces only: nothing that could end the header line.
    private static func isHeaderValue(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}

/// Why a web-view authorization request could not be built.
public struct WebViewAuthorizationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the request, as a sentence.
    public let description: String
    /// An error that says what is wrong with the request.
    /// - Parameter description: What is wrong; prefixed with "invalid web-view authorization request: ".
    public init(_ description: String) { self.description = "invalid web-view authorization request: " + description }
}

/// The token extraction of `004_*.txt`: after the login, the success page carries the token in a
/// cookie named `oauth_token`, or in its title.
public enum WebViewToken {
    /// The `oauth_token` value of a cookie string `NAME=VALUE[; NAME=VALUE]` (a `Cookie` header, or
    /// what `CookieManager.getCookie` returns); the name compares case-insensitively, as the
    /// sample's `equalsIgnoreCase`. `nil` when absent or empty.
    public static func fromCookie(_ cookie: String) -> String? {
        for pair in cookie.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let name = parts[0].trimmingSpaces()
            let value = parts[1].trimmingSpaces()
            if name.lowercased() == "oauth_token", !value.isEmpty { return String(value) }
        }
        return nil
    }

    /// The token in a page title of the form `oauth_token=VALUE` (optionally after other text and
    /// a space, as in `Success oauth_token=VALUE`). `nil` when the title carries none.
    public static func fromTitle(_ title: String) -> String? {
        guard let range = title.firstRange(of: "oauth_token=") else { return nil }
        let value = title[range.upperBound...].prefix { !$0.isWhitespace && $0 != ";" && $0 != "&" }
        return value.isEmpty ? nil : String(value)
    }
}

private extension Substring {
    func trimmingSpaces() -> Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
