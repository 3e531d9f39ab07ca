/// The field ids of the standard KOBIL flow clients, as `interactionData.inputFieldIds` lists them.
///
/// Custom IDP clients may ask other ids; a provider answers whatever ids the step lists.
public enum IdpSdkConstants {
    /// The user's username.
    public static let USERNAME = "username"
    /// The user's password (at activation: the password the user chooses).
    public static let PASSWORD = "password"
    /// The one-time activation code (`KssIdpEnrollment`); in `KssIdpForgotPassword`, the one-time
    /// password-reset code the IDP issued to the user out of band.
    public static let ACTIVATION_CODE = "activation-code"
    /// The new password of a change-password flow (`KssIdpChangePassword`) or a forgot-password
    /// flow (`KssIdpForgotPassword`).
    public static let NEW_PASSWORD = "new-password"
    /// The current password of a change-password flow (`KssIdpChangePassword`); a wrong one counts
    /// toward lockout like a wrong login password.
    public static let CURRENT_PASSWORD = "current-password"
}
