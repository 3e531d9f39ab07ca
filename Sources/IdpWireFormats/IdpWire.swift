/// The values both ends of the IDP protocol must spell alike: the in-process IDP (`IdpServer`)
/// writes them and the client modules (`IdpSdk`, `McSdk`) read them.
///
/// They live here, below both, so that a client never imports the server to learn a constant.
///
/// ```swift
/// let astClientId = store.deviceAstClientId ?? IdpWire.unassignedAstClientId
/// ```
package enum IdpWire {
    /// The all-zero AST client id of a device that has no user yet.
    package static let unassignedAstClientId = "00000000-0000-0000-0000-000000000000"

    /// Whether `astClientId` names an activated device: it holds a character other than `0` and
    /// `-` (a device with no user yet has an id of zeros and dashes). Read byte by byte, in the
    /// string's own UTF-8 storage (the utf8 view's generic `contains` steps through an iterator).
    package static func isAssigned(astClientId: String) -> Bool {
        var text = astClientId
        return text.withUTF8 { bytes in
            for index in 0..<bytes.count where bytes[index] != UInt8(ascii: "0") && bytes[index] != UInt8(ascii: "-") { return true }
            return false
        }
    }

    /// The grant type of RFC 8693 token exchange.
    package static let tokenExchangeGrantType = "urn:ietf:params:oauth:grant-type:token-exchange"

    /// The OAuth error code when a token exchange names the login client as audience (the
    /// exchanged token would carry the 'ast-client' role); the MC reports it as error code
    /// 800000287.
    package static let astClientRoleErrorCode = "ast_client_role_in_audience"

    /// The `error` codes of the authorization endpoint's error redirects and pages that a client
    /// tells apart (the lockout codes are ``LockoutInformation/temporaryErrorCode`` and
    /// ``LockoutInformation/permanentErrorCode``).
    package enum FlowError {
        /// The realm named in the request does not exist (an error page, HTTP 404).
        package static let unknownTenant = "unknown_tenant"
        /// The `client_id` is not a client of the realm (an error page, HTTP 400).
        package static let unknownClient = "unknown_client"
        /// `login_hint` names a user who is not enrolled.
        package static let userNotEnrolled = "user_not_enrolled"
        /// A step was answered wrongly as often as the client allows.
        package static let tooManyAttempts = "too_many_attempts"
        /// The activation code has expired.
        package static let activationCodeExpired = "activation_code_expired"
        /// The password-reset code has expired.
        package static let resetCodeExpired = "reset_code_expired"
        /// The login session has expired.
        package static let sessionExpired = "session_expired"
        /// The login session is unknown or has ended.
        package static let invalidSession = "invalid_session"
    }
}
