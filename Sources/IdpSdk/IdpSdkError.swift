import IdpPrimitives
import IdpWireFormats

/// An error of the IdpSdk flow, or one a provider returns to cancel its flow.
///
/// The documents build it positionally, `IdpSdkError(subsystem, errorCode, errorDescription)`; the
/// labelled form says the same. Errors the SDK raises itself have ``sdkSubsystem`` and one of the
/// ``Code`` values; an error a provider returns comes back in `IdpSdkResult` unchanged.
/// Descriptions never contain credential values, codes or tokens.
///
/// A flow that ends because the account is locked has ``Code/temporarilyLocked`` or
/// ``Code/permanentlyLocked`` and carries the lock in ``lockoutInformation``; switch on
/// `IdpSdkResult.authenticationResult` to handle it as the documents' `.lockout` case.
public struct IdpSdkError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Who raised the error (``sdkSubsystem`` for the SDK itself, anything for a provider).
    public let subsystem: String
    /// The numeric code; for ``sdkSubsystem`` one of ``Code``.
    public let errorCode: Int
    /// What went wrong, naming the field, parameter or step concerned.
    public let errorDescription: String
    /// The lock, when the IDP refused because the account is locked; else `nil`.
    public let lockoutInformation: LockoutInformation?

    /// The subsystem of errors the SDK raises itself.
    public static let sdkSubsystem = "IdpSdk"

    /// The documents' positional form.
    public init(_ subsystem: String, _ errorCode: Int, _ errorDescription: String) {
        self.subsystem = subsystem
        self.errorCode = errorCode
        self.errorDescription = errorDescription
        self.lockoutInformation = nil
    }

    /// The labelled form.
    public init(subsystem: String, errorCode: Int, errorDescription: String) {
        self.init(subsystem, errorCode, errorDescription)
    }

    /// An SDK error with one of the documented codes.
    public init(_ code: Code, _ errorDescription: String) {
        self.init(Self.sdkSubsystem, code.rawValue, errorDescription)
    }

    /// The error of a flow the IDP refused because the account is locked.
    public init(lockout: LockoutInformation, _ errorDescription: String) {
        subsystem = Self.sdkSubsystem
        errorCode = (lockout.isPermanent ? Code.permanentlyLocked : Code.temporarilyLocked).rawValue
        self.errorDescription = errorDescription
        lockoutInformation = lockout
    }

    /// The documented code, if the SDK raised this error.
    public var code: Code? {
        subsystem == Self.sdkSubsystem ? Code(rawValue: errorCode) : nil
    }

    /// `IdpSdkError(subsystem, code, description)`.
    public var description: String { "IdpSdkError(\(subsystem), \(errorCode), \(errorDescription))" }

    /// The codes of errors the SDK raises.
    public enum Code: Int, Sendable, CaseIterable {
        /// An argument of `getAuthorizationCode` is empty or malformed (the description names it).
        case invalidArgument = 1001
        /// The `traceParent` is not a valid W3C traceparent.
        case invalidTraceParent = 1002
        /// The provider's credentials lack a field the step requested.
        case missingCredentialField = 1003
        /// The provider's credentials name a field the step did not request.
        case unexpectedCredentialField = 1004
        /// A credential value is empty.
        case emptyCredentialField = 1005
        /// A credential value is longer than the SDK accepts.
        case credentialFieldTooLong = 1006
        /// A credential value contains a control character.
        case invalidCredentialValue = 1007
        /// The IDP rejected an answer and re-asks (seen in `IdpSdkInteractionData.previousError`).
        case credentialsRejected = 1008
        /// Login for a `userId` the IDP does not know as an enrolled user.
        case userNotEnrolled = 1010
        /// A step was answered wrongly as often as the client allows.
        case tooManyAttempts = 1011
        /// The activation code has expired.
        case activationCodeExpired = 1012
        /// The IDP refused the request (its error code and description follow).
        case authorizationRefused = 1013
        /// The IDP does not know the `clientId`.
        case unknownClient = 1014
        /// The IDP does not know the tenant.
        case unknownTenant = 1015
        /// The IDP's login session expired before the flow ended.
        case sessionExpired = 1016
        /// The account is locked until `lockoutInformation.lockedUntil` after too many wrong secrets;
        /// the IDP did not look at the answers.
        case temporarilyLocked = 1017
        /// The account is locked for good (`lockoutInformation.isPermanent`).
        case permanentlyLocked = 1018
        /// The flow was cancelled by its caller.
        case cancelled = 1020
        /// The flow did not end within the configured timeout.
        case timedOut = 1021
        /// No IDP answers at the configured URL.
        case idpUnreachable = 1030
        /// The IDP's certificate is not in the configured chain.
        case certificatePinning = 1031
        /// The connection was lost before the IDP answered.
        case connectionLost = 1032
        /// The IDP answered something the SDK cannot read (no form, bad redirect, too many steps).
        case protocolError = 1033
        /// A blocking call was made from inside a Swift task, where it could deadlock; refused.
        case blockingCallInsideTask = 1040
    }
}
