/// The result of an authorization request, read from the redirect back to the client
/// (RFC 6749 §4.1.2 success, §4.1.2.1 error).
///
/// ```swift
/// let redirect = try AuthorizationRedirect.parse(
///     location: "https://kobil/OpenIdRedirectUri#code=abc&state=xyz",
///     expectedRedirectURI: "https://kobil/OpenIdRedirectUri")
/// redirect.code // "abc"
/// ```
public struct AuthorizationRedirect: Sendable, Equatable {
    /// The authorization code; always `nil` when ``error`` is set.
    public var code: String?
    /// The `state` echoed from the request, which the client must compare with its own.
    public var state: String?
    /// The error code, e.g. `access_denied`.
    public var error: String?
    /// The human-readable `error_description`.
    public var errorDescription: String?
    /// The `error_uri` (RFC 6749 §4.1.2.1): a page about the error.
    public var errorURI: String?
    /// The OpenID Connect Session Management `session_state`.
    public var sessionState: String?

    /// The longest location, in UTF-8 bytes, that ``parse(location:expectedRedirectURI:expectedState:)``
    /// reads; longer ones are refused to bound the work a hostile server can cause.
    public static let maximumLength = 8192

    /// Creates a redirect result.
    /// - Parameters:
    ///   - code: The authorization code.
    ///   - state: The echoed state.
    ///   - error: The error code.
    ///   - errorDescription: The error description.
    ///   - errorURI: The URI of a page about the error.
    ///   - sessionState: The session state.
    public init(
        code: String? = nil, state: String? = nil, error: String? = nil,
        errorDescription: String? = nil, errorURI: String? = nil, sessionState: String? = nil
    ) {
        self.code = code
        self.state = state
        self.error = error
        self.errorDescription = errorDescription
        self.errorURI = errorURI
        self.sessionState = sessionState
    }

    /// Reads the parameters of a redirect `Location`.
    ///
    /// They come from the fragment when it is non-empty (`response_mode=fragment`), otherwise
    /// from the query; values are percent-decoded with `+` as space. Unknown parameters are
    /// ignored. When both `code` and `error` are present the result is the error, with no code,
    /// so a confused server cannot make the client redeem a code it reported as failed.
    /// - Parameters:
    ///   - location: The absolute URI the IDP redirected to.
    ///   - expectedRedirectURI: The registered redirect URI; when given, the location without
    ///     query and fragment must equal it exactly.
    ///   - expectedState: The `state` the request sent; when given, the redirect must echo it
    ///     exactly (RFC 6749 §10.12: a redirect without it may be forged).
    /// - Returns: The parameters.
    /// - Throws: ``AuthorizationRedirectError`` naming the problem.
    public static func parse(
        location: String, expectedRedirectURI: String?, expectedState: String? = nil
    ) throws(AuthorizationRedirectError) -> AuthorizationRedirect {
        let bytes = Array(location.utf8)
        guard !bytes.isEmpty else { throw AuthorizationRedirectError(.empty) }
        guard bytes.count <= maximumLength else { throw AuthorizationRedirectError(.tooLong(bytes.count)) }
        guard isAbsoluteURI(bytes) else { throw AuthorizationRedirectError(.malformedURL) }

        let hash = bytes.firstIndex(of: UInt8(ascii: "#"))
        let beforeFragment = hash ?? bytes.count
        let question = bytes[..<beforeFragment].firstIndex(of: UInt8(ascii: "?"))
        let baseEnd = question ?? beforeFragment
        if let expectedRedirectURI, !expectedRedirectURI.utf8.elementsEqual(bytes[..<baseEnd]) {
            let base = String(decoding: bytes[..<baseEnd], as: UTF8.self)
            throw AuthorizationRedirectError(.redirectURIMismatch(expected: expectedRedirectURI, actual: base))
        }

        let fragment = hash.map { bytes[($0 + 1)...] } ?? []
        let query = question.map { bytes[($0 + 1)..<beforeFragment] } ?? []
        let parameters = try decodeParameters(fragment.isEmpty ? query : fragment)

        let code = nonEmpty(parameters["code"])
        let error = nonEmpty(parameters["error"])
        guard code != nil || error != nil else { throw AuthorizationRedirectError(.missingCode) }
        if let expectedState, parameters["state"] != expectedState { throw AuthorizationRedirectError(.stateMismatch) }
        return AuthorizationRedirect(
            code: error == nil ? code : nil,
            state: parameters["state"],
            error: error,
            errorDescription: parameters["error_description"],
            errorURI: parameters["error_uri"],
            sessionState: parameters["session_state"]
        )
    }

    /// Splits `name=value&…`, decoding both sides and refusing repeated names.
    private static func decodeParameters(_ text: ArraySlice<UInt8>) throws(AuthorizationRedirectError) -> FormParameters {
        var parameters = FormParameters()
        for segment in text.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = segment.firstIndex(of: UInt8(ascii: "="))
            let rawName = segment[..<(equals ?? segment.endIndex)]
            let rawValue = equals.map { segment[($0 + 1)...] } ?? []
            guard let name = FormURLEncoding.decodeComponent(rawName), let value = FormURLEncoding.decodeComponent(rawValue) else {
                throw AuthorizationRedirectError(.invalidEncoding(String(decoding: rawName, as: UTF8.self)))
            }
            guard parameters.append(name: name, value: value) else { throw AuthorizationRedirectError(.duplicateParameter(name)) }
        }
        return parameters
    }

    /// Whether the bytes form an absolute URI as far as this parser relies on: a scheme
    /// (RFC 3986 §3.1) and something after it, only visible ASCII, and at most one `#`.
    private static func isAbsoluteURI(_ bytes: [UInt8]) -> Bool {
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
              bytes.count(where: { $0 == UInt8(ascii: "#") }) <= 1,
              let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
              colon > 0, colon + 1 < bytes.count,
              isLetter(bytes[0])
        else { return false }
        return bytes[1..<colon].allSatisfy { byte in
            isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}
