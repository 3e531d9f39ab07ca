/// One OAuth client of a tenant, with the XHTML form steps its login page asks, in order.
///
/// ```swift
/// let otpLogin = IdpClientConfiguration(
///     clientId: "CorpOtpLogin", purpose: .login,
///     steps: [[.init(id: "user", role: .username)],
///             [.init(id: "secret", role: .password), .init(id: "otp", role: .attribute("otp"))]])
/// try idp.addClient(otpLogin, tenant: "demo")
/// ```
public struct IdpClientConfiguration: Sendable, Equatable {
    /// What completing the flow does to the user.
    public enum Purpose: String, Sendable, Equatable {
        /// Activation: the user proves a one-time activation code and sets a password; the code
        /// is consumed and the user becomes active.
        case enrollment
        /// Login: an active user proves their password (and any custom attributes).
        case login
        /// Registration in a web view: a new user chooses a username and a password; completing
        /// the flow creates the user, active, with this device's AST client id. No activation code.
        case registration
        /// Change password: an active user proves their current password and chooses a new one;
        /// the new password is set when the last step passes.
        case changePassword
        /// Forgot password: an active user who cannot prove their password proves a one-time
        /// password-reset code (``IdpServer/issuePasswordResetCode(for:tenant:validFor:)``) instead
        /// and chooses a new password; the code is consumed when the last step passes.
        case forgotPassword
    }

    /// Whether the authorize request must carry `X-KOBIL-ASTCLIENTID` (the device's AST client id)
    /// next to `X-KOBIL-ASTCLIENTDATA`: the web-view clients of existing users and subsequent
    /// logins require it, a new user's registration has no id yet.
    public enum AstClientIdHeader: Sendable, Equatable {
        /// The header may be absent; when present, it is recorded.
        case optional
        /// An authorize request without the header is refused.
        case required
    }

    /// The `client_id` the SDK passes to `getAuthorizationCode`.
    public var clientId: String
    /// What the flow does.
    public var purpose: Purpose
    /// The form steps; each inner array is the set of fields one form asks.
    public var steps: [[IdpFormField]]
    /// How many answers one step accepts before the flow ends with `too_many_attempts`
    /// (a wrong answer re-serves the same step with the rejection attached).
    public var maxAttempts: Int
    /// The redirect URIs the client may use (exact match, RFC 6749 §3.1.2.3).
    public var redirectURIs: [String]
    /// Whether `X-KOBIL-ASTCLIENTID` must come with the authorize request.
    public var astClientIdHeader: AstClientIdHeader

    /// The redirect URI of the documents' samples, registered on every standard client.
    public static let defaultRedirectURI = "https://kobil/OpenIdRedirectUri"

    /// A client configuration.
    ///
    /// - Parameters:
    ///   - clientId: The `client_id` the SDK passes to `getAuthorizationCode`.
    ///   - purpose: What the flow does.
    ///   - steps: The form steps; each inner array is the set of fields one form asks.
    ///   - maxAttempts: How many answers one step accepts; 3 by default.
    ///   - redirectURIs: The redirect URIs the client may use; the documents' sample URI by
    ///     default.
    ///   - astClientIdHeader: Whether `X-KOBIL-ASTCLIENTID` must come with the authorize request;
    ///     optional by default.
    public init(
        clientId: String,
        purpose: Purpose,
        steps: [[IdpFormField]],
        maxAttempts: Int = 3,
        redirectURIs: [String] = [IdpClientConfiguration.defaultRedirectURI],
        astClientIdHeader: AstClientIdHeader = .optional
    ) {
        self.clientId = clientId
        self.purpose = purpose
        self.steps = steps
        self.maxAttempts = maxAttempts
        self.redirectURIs = redirectURIs
        self.astClientIdHeader = astClientIdHeader
    }

    /// `KssIdpEnrollment`: username, then activation code, then the desired password.
    public static let kssIdpEnrollment = IdpClientConfiguration(
        clientId: "KssIdpEnrollment",
        purpose: .enrollment,
        steps: [
            [IdpFormField(id: "username", label: "Username", role: .username)],
            [IdpFormField(id: "activation-code", label: "Activation code", role: .activationCode)],
            [IdpFormField(id: "password", label: "Choose a password", role: .newPassword)],
        ]
    )

    /// `KssIdpLogin`: username and password on one form.
    public static let kssIdpLogin = IdpClientConfiguration(
        clientId: "KssIdpLogin",
        purpose: .login,
        steps: [[
            IdpFormField(id: "username", label: "Username", role: .username),
            IdpFormField(id: "password", label: "Password", role: .password),
        ]]
    )

    /// `IDPRegistration`, the web-view (TWV) client for a new user (`000_*.txt`): username and a
    /// chosen password on one form; only `X-KOBIL-ASTCLIENTDATA` is sent.
    public static let idpRegistration = IdpClientConfiguration(
        clientId: "IDPRegistration",
        purpose: .registration,
        steps: [[
            IdpFormField(id: "username", label: "Choose a username", role: .username),
            IdpFormField(id: "password", label: "Choose a password", role: .newPassword),
        ]]
    )

    /// `IDPLogin`, the web-view client for an existing user on a new installation: username and
    /// password; `X-KOBIL-ASTCLIENTID` is required.
    public static let idpLogin = webViewLogin("IDPLogin")

    /// `IDPSubsequentLogin`, the web-view client for a later session of a logged-in user: username
    /// and password; `X-KOBIL-ASTCLIENTID` is required.
    public static let idpSubsequentLogin = webViewLogin("IDPSubsequentLogin")

    private static func webViewLogin(_ clientId: String) -> IdpClientConfiguration {
        IdpClientConfiguration(clientId: clientId, purpose: .login, steps: kssIdpLogin.steps, astClientIdHeader: .required)
    }

    /// `KssIdpChangePassword`: username and current password, then the new password.
    ///
    /// Two steps, not one form: the identity is proven (and a wrong current password counted)
    /// before a new password is asked, so a new password the policy refuses re-asks only that
    /// step, never re-submitting (and re-counting) the current password; and the check that the
    /// new password differs from the current one runs only after the current one is proven, so it
    /// cannot serve as an uncounted guessing oracle.
    public static let kssIdpChangePassword = proveThenChoosePassword(
        "KssIdpChangePassword", .changePassword, proof: IdpFormField(id: "current-password", label: "Current password", role: .currentPassword)
    )

    /// `KssIdpForgotPassword`: username and the one-time password-reset code, then the new
    /// password.
    ///
    /// The code is asked in the `activation-code` field (`IdpSdkConstants.ACTIVATION_CODE`): the
    /// documented constants have no reset-code id, and for the app it is the same kind of answer —
    /// a one-time code the user received out of band. The IDP keeps it apart from activation codes
    /// (``IdpFormField/Role/passwordResetCode``). Two steps for the same reasons as
    /// ``kssIdpChangePassword``.
    public static let kssIdpForgotPassword = proveThenChoosePassword(
        "KssIdpForgotPassword", .forgotPassword, proof: IdpFormField(id: "activation-code", label: "Password reset code", role: .passwordResetCode)
    )

    /// The two steps of both password clients: username and `proof`, then the new password.
    private static func proveThenChoosePassword(_ clientId: String, _ purpose: Purpose, proof: IdpFormField) -> IdpClientConfiguration {
        IdpClientConfiguration(clientId: clientId, purpose: purpose, steps: [
            [IdpFormField(id: "username", label: "Username", role: .username), proof],
            [IdpFormField(id: "new-password", label: "New password", role: .newPassword)],
        ])
    }

    /// The clients every tenant gets unless told otherwise: the IdpSdk ones (the four standard
    /// flows of the documents) and the web-view ones.
    public static let standard = [kssIdpEnrollment, kssIdpLogin, kssIdpChangePassword, kssIdpForgotPassword,
                                  idpRegistration, idpLogin, idpSubsequentLogin]

    /// Checks that the steps make sense for the purpose; returns the problem, or `nil`.
    func validationProblem() -> String? {
        if clientId.isEmpty { return "client id is empty" }
        if steps.isEmpty || steps.contains(where: \.isEmpty) { return "client '\(clientId)' has an empty step" }
        if maxAttempts < 1 { return "client '\(clientId)' must allow at least one attempt per step" }
        if redirectURIs.isEmpty { return "client '\(clientId)' has no redirect URI" }
        let fields = steps.flatMap { $0 }
        var seen = Set<String>()
        for field in fields {
            if field.id.isEmpty { return "client '\(clientId)' has a field with an empty id" }
            if !seen.insert(field.id).inserted { return "client '\(clientId)' asks field '\(field.id)' twice" }
        }
        let roles = fields.map(\.role)
        if roles.filter({ $0 == .username }).count != 1 {
            return "client '\(clientId)' must ask for the username exactly once"
        }
        // The user must be known before anything is checked against them.
        if !steps[0].contains(where: { $0.role == .username }) {
            return "client '\(clientId)' must ask for the username in its first step"
        }
        switch purpose {
        case .enrollment:
            if !roles.contains(.activationCode) { return "enrollment client '\(clientId)' never asks for the activation code" }
            if !roles.contains(.newPassword) { return "enrollment client '\(clientId)' never asks for the new password" }
        case .login:
            if !roles.contains(.password) { return "login client '\(clientId)' never asks for the password" }
            if roles.contains(.activationCode) { return "login client '\(clientId)' asks for an activation code" }
        case .registration:
            if !roles.contains(.newPassword) { return "registration client '\(clientId)' never asks for the new password" }
            if roles.contains(where: { $0 != .username && $0 != .newPassword }) {
                return "registration client '\(clientId)' may ask only for a username and a new password"
            }
        case .changePassword:
            if !roles.contains(.newPassword) { return "change-password client '\(clientId)' never asks for the new password" }
            // "Differs from the current password" may be told only to a user who proved it.
            guard let proof = steps.firstIndex(where: { $0.contains { $0.role == .currentPassword } }) else {
                return "change-password client '\(clientId)' never asks for the current password"
            }
            if steps.firstIndex(where: { $0.contains { $0.role == .newPassword } })! < proof {
                return "change-password client '\(clientId)' asks for the new password before the current one"
            }
            if roles.contains(.activationCode) || roles.contains(.passwordResetCode) {
                return "change-password client '\(clientId)' asks for a one-time code"
            }
        case .forgotPassword:
            if !roles.contains(.passwordResetCode) { return "forgot-password client '\(clientId)' never asks for the password-reset code" }
            if !roles.contains(.newPassword) { return "forgot-password client '\(clientId)' never asks for the new password" }
            if roles.contains(where: { $0 == .password || $0 == .currentPassword || $0 == .activationCode }) {
                return "forgot-password client '\(clientId)' asks for a password or an activation code"
            }
        }
        if purpose != .changePassword, roles.contains(.currentPassword) {
            return "client '\(clientId)' asks for the current password outside a change-password flow"
        }
        if purpose != .forgotPassword, roles.contains(.passwordResetCode) {
            return "client '\(clientId)' asks for a password-reset code outside a forgot-password flow"
        }
        return nil
    }
}

extension IdpClientConfiguration.Purpose {
    /// Whether the flow is for an existing, active user (whom a `login_hint` must name).
    var requiresActiveUser: Bool {
        switch self {
        case .login, .changePassword, .forgotPassword: true
        case .enrollment, .registration: false
        }
    }
}

/// One input field of an IDP form step.
public struct IdpFormField: Sendable, Equatable {
    /// What the IDP checks the answer against.
    public enum Role: Sendable, Equatable {
        /// Identifies the user (the user id).
        case username
        /// The user's current password, verified.
        case password
        /// A password the user chooses (enrollment, change password); checked against the policy.
        case newPassword
        /// The current password in a change-password flow, verified.
        case currentPassword
        /// A one-time activation code issued to the user, verified and consumed.
        case activationCode
        /// A one-time password-reset code (``IdpServer/issuePasswordResetCode(for:tenant:validFor:)``),
        /// verified, and consumed when the forgot-password flow completes.
        case passwordResetCode
        /// A custom user attribute (an OTP, a customer number), compared exactly.
        case attribute(String)
    }

    /// The input's id and name in the XHTML form, which the SDK hands to the provider.
    public var id: String
    /// The label shown next to the input.
    public var label: String
    /// What the answer is checked against.
    public var role: Role

    /// A form field.
    ///
    /// - Parameters:
    ///   - id: The input's id and name in the XHTML form.
    ///   - label: The label shown next to the input; `nil`: the id.
    ///   - role: What the answer is checked against.
    public init(id: String, label: String? = nil, role: Role) {
        self.id = id
        self.label = label ?? id
        self.role = role
    }

    /// Whether the field is a password (rendered as `type="password"`, and hashed by an SDK with
    /// `shouldHashPin`). An activation code is a one-time code typed from a letter, so it is text.
    public var isSecret: Bool {
        switch role {
        case .password, .newPassword, .currentPassword: true
        case .username, .activationCode, .passwordResetCode, .attribute: false
        }
    }
}
