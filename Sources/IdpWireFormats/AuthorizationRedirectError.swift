/// Why the redirect that ends an authorization request could not be used.
public struct AuthorizationRedirectError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong with the `Location`.
    public enum Reason: Sendable, Equatable {
        /// The location is empty.
        case empty
        /// The location has this many bytes, more than ``AuthorizationRedirect/maximumLength``.
        case tooLong(Int)
        /// The location is not an absolute URI: no scheme, a space, a control or non-ASCII
        /// character, or a second `#`.
        case malformedURL
        /// The location, without query and fragment, is not the registered redirect URI.
        case redirectURIMismatch(expected: String, actual: String)
        /// This parameter appears more than once (RFC 6749 §3.1 forbids it).
        case duplicateParameter(String)
        /// Neither `code` nor `error` is present (or both are empty).
        case missingCode
        /// The parameter of this (raw) name has a malformed percent-escape or is not UTF-8.
        case invalidEncoding(String)
        /// The `state` is missing or is not the one the request sent.
        case stateMismatch
    }

    /// What was wrong.
    public let reason: Reason

    /// Creates an error.
    /// - Parameter reason: What was wrong.
    public init(_ reason: Reason) {
        self.reason = reason
    }

    /// A message naming the problem. Parameter values are never quoted, since one may be an
    /// authorization code.
    public var description: String {
        let problem = switch reason {
        case .empty: "location is empty"
        case .tooLong(let length): "location is \(length) bytes, more than the \(AuthorizationRedirect.maximumLength) allowed"
        case .malformedURL: "location is not an absolute URI"
        case .redirectURIMismatch(let expected, let actual): "redirect URI '\(actual)' is not the expected '\(expected)'"
        case .duplicateParameter(let name): "parameter '\(name)' appears more than once"
        case .missingCode: "neither 'code' nor 'error' is present"
        case .invalidEncoding(let name): "parameter '\(name)' is not validly percent-encoded UTF-8"
        case .stateMismatch: "state is missing or is not the one the request sent"
        }
        return "invalid authorization redirect: \(problem)"
    }
}
