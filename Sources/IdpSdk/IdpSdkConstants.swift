/// The field ids of the standard KOBIL flow clients, as `interactionData.inputFieldIds` lists them.
///
/// Custom IDP clients may ask other ids; a provider answers whatever ids the step lists.
public enum IdpSdkConstants {
    /// The user's username.
    public static let USERNAME = "username"
    /// The user's password (at activation: the password the user chooses).
    public static let PASSWORD = "password"
    /// The one-time activation code.
    public static let ACTIVATION_CODE = "activation-code"
    /// The new password of a change-password flow.
    public static let NEW_PASSWORD = "new-password"
    /// The current password of a change-password flow.
    public static let CURRENT_PASSWORD = "current-password"
}
