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
        // The location's own UTF-8 storage, read in place (withUTF8 makes a bridged string
        // native); the error comes out as a value, as withUTF8 does not keep a thrown error's type.
        var location = location
        let read = location.withUTF8 { bytes in
            Result { () throws(AuthorizationRedirectError) in try parameters(of: bytes, expectedRedirectURI: expectedRedirectURI) }
        }
        return try redirect(from: read.get(), expectedState: expectedState)
    }

    /// The parameters of the location `bytes`, checked as ``parse(location:expectedRedirectURI:expectedState:)``
    /// checks them, in its order: length, form, redirect URI, then each parameter in turn.
    private static func parameters(
        of bytes: UnsafeBufferPointer<UInt8>, expectedRedirectURI: String?
    ) throws(AuthorizationRedirectError) -> FormParameters {
        guard !bytes.isEmpty else { throw AuthorizationRedirectError(.empty) }
        guard bytes.count <= maximumLength else { throw AuthorizationRedirectError(.tooLong(bytes.count)) }
        guard let hash = absoluteURIFragmentMark(bytes) else { throw AuthorizationRedirectError(.malformedURL) }

        let beforeFragment = hash < 0 ? bytes.count : hash
        let question = ByteScan.firstIndex(of: UInt8(ascii: "?"), in: bytes, from: 0, to: beforeFragment)
        let baseEnd = question
        if let expectedRedirectURI, !Self.bytes(bytes, upTo: baseEnd, equal: expectedRedirectURI) {
            let base = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<baseEnd]), as: UTF8.self)
            throw AuthorizationRedirectError(.redirectURIMismatch(expected: expectedRedirectURI, actual: base))
        }

        // A non-empty fragment, else the query (empty when there is none).
        let fragment = hash < 0 ? bytes.count..<bytes.count : (hash + 1)..<bytes.count
        let query = question < beforeFragment ? (question + 1)..<beforeFragment : beforeFragment..<beforeFragment
        return try decodeParameters(bytes, range: fragment.isEmpty ? query : fragment)
    }

    /// Whether the first `count` bytes are `text`'s UTF-8.
    private static func bytes(_ bytes: UnsafeBufferPointer<UInt8>, upTo count: Int, equal text: String) -> Bool {
        var text = text
        return text.withUTF8 { expected in
            guard expected.count == count else { return false }
            for index in 0..<count where expected[index] != bytes[index] { return false }
            return true
        }
    }

    /// The redirect the parameters describe, or why there is none.
    private static func redirect(from parameters: FormParameters, expectedState: String?) throws(AuthorizationRedirectError) -> AuthorizationRedirect {
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

    /// Splits `name=value&…` (the bytes in `range`), decoding both sides and refusing repeated
    /// names; empty segments are skipped.
    private static func decodeParameters(_ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>) throws(AuthorizationRedirectError) -> FormParameters {
        // Room for every piece, made once (a redirect carries two to four); a location of many
        // empty pieces gets no more than the pairs kept before the set of names takes over.
        var pieces = 0
        var amp = range.isEmpty ? range.upperBound : range.lowerBound - 1
        while amp < range.upperBound {
            pieces += 1
            amp = ByteScan.firstIndex(of: UInt8(ascii: "&"), in: bytes, from: amp + 1, to: range.upperBound)
        }
        var parameters = FormParameters(minimumCapacity: min(pieces, FormParameters.indexedFrom))
        var start = range.lowerBound
        while start < range.upperBound {
            let end = ByteScan.firstIndex(of: UInt8(ascii: "&"), in: bytes, from: start, to: range.upperBound)
            if end > start {
                let equals = ByteScan.firstIndex(of: UInt8(ascii: "="), in: bytes, from: start, to: end)
                let name = start..<equals, value = equals < end ? (equals + 1)..<end : end..<end
                guard let decodedName = FormURLEncoding.decodeComponent(bytes, range: name),
                      let decodedValue = FormURLEncoding.decodeComponent(bytes, range: value) else {
                    throw AuthorizationRedirectError(.invalidEncoding(String(decoding: UnsafeBufferPointer(rebasing: bytes[name]), as: UTF8.self)))
                }
                guard parameters.append(name: decodedName, value: decodedValue) else { throw AuthorizationRedirectError(.duplicateParameter(decodedName)) }
            }
            start = end + 1
        }
        return parameters
    }

    /// Whether the bytes form an absolute URI as far as this parser relies on: a scheme
    /// (RFC 3986 §3.1) and something after it, only visible ASCII, and at most one `#`. Returns
    /// the offset of the `#`, -1 when there is none, or `nil` when the bytes are not such a URI.
    private static func absoluteURIFragmentMark(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let count = bytes.count
        guard ByteScan.isVisibleASCII(bytes) else { return nil }
        var hash = ByteScan.firstIndex(of: UInt8(ascii: "#"), in: bytes, from: 0, to: count)
        if hash < count {
            guard ByteScan.firstIndex(of: UInt8(ascii: "#"), in: bytes, from: hash + 1, to: count) == count else { return nil }
        } else {
            hash = -1
        }
        let colon = ByteScan.firstIndex(of: UInt8(ascii: ":"), in: bytes, from: 0, to: count)
        guard colon > 0, colon + 1 < count, isLetter(bytes[0]) else { return nil }
        for index in 1..<colon {
            let byte = bytes[index]
            guard isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") else { return nil }
        }
        return hash
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}
