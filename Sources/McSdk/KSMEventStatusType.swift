/// The status of an MC result event, with the values of the documents' status table
/// (`error-handling/status_type`), in its order and naming.
///
/// Every value also has the iOS samples' spelling (`.KSMOK`, `.KSMTEMPORARY_LOCKED`, …) and the
/// Java spelling (`.OK`, `.TEMPORARY_LOCKED`, …), as aliases that a `switch` can match;
/// `StatusType` is an alias of the type.
public enum KSMEventStatusType: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// The process was completed successfully.
    case kOk = 0
    /// An update of the app is available. (Info only)
    case kUpdateAvailable = 1
    /// Will be sent from SSMS to the app when the app registration was successful. (Info only). The App must restart the SDK itself.
    case kAppRegistered = 2
    /// The user cancelled a process, e.g. a transaction.
    case kUserCancel = 3
    /// The process was cancelled by a timeout.
    case kUserConfirmationTimeout = 4
    /// The user entered a wrong pin.
    case kInvalidPin = 5
    /// Activation and Logon process: The app has a wrong version.
    case kUnknownVersion = 6
    /// Activation and Logon process: The app has a wrong client type.
    case kUnknownClientType = 7
    /// This version of the app was replace by a newer one and the user must update.
    case kUpdateNecessary = 8
    /// Activation and Logon process: The user ID, activation code or the PIN are incorrect.
    case kWrongCredentials = 9
    /// User removed on the ssms server
    case kUnknownCertificate = 10
    /// An internal error occurred during the process, usually a Runtimer Error
    case kInternalError = 11
    /// Activation process: The activation code expired.
    case kActivationCodeExpired = 12
    /// User locked on ssms server
    case kLockedCertificate = 13
    /// User locked on ssms server
    case kLockedUser = 14
    /// Requested property is not stored on SSMS or local DataBase.
    case kPropertyNotExists = 15
    /// Property key is too long.
    case kInvalidKeyLength = 16
    /// Sent property string is not unique for this user.
    case kNotUnique = 17
    /// Sent property string is too long.
    case kTextTooLong = 18
    /// The MasterController is in a state where it cannot proceed the corresponding event.
    case kInvalidState = 19
    /// One of the parameters of the invoked event has an invalid format
    case kInvalidParameter = 20
    /// The given userID is invalid (e.g. no user credentials are available)
    case kInvalidUserId = 21
    /// User credentials already exists for the given userID at the user credential path
    case kUserIdAlreadyExists = 22
    /// The app is not registered at SSMS
    case kRegisterApp = 23
    /// The certificate does not match to the user (e.g. typing error for the userID)
    case kMismatchedUser = 24
    /// A negative status has been occured usually this comes with an additional errorCode and subSystem
    case kNegative = 25
    /// Requested property is a read only property
    case kReadOnly = 26
    /// Logon process: The user ID is temporary locked by entering wrong PINs.
    case kTemporaryLocked = 27
    /// Resume has been invoked although MasterController had not been suspended before
    case kNotSuspended = 28
    /// Invalid password for the keystorage was provided
    case kInvalidPassword = 29
    /// Password for the keytorage is blocked
    case kPasswordBlocked = 30
    /// The ATC used for the OfflineFunctions will soon expire
    case kAtcExpiresSoon = 31
    /// The ATC used for the OfflineFunctions is expired
    case kAtcExpired = 32
    /// Operation could not be completed, because connection to SSMS was lost
    case kNotReachable = 33
    /// The PIN is blocked
    case kPinBlocked = 34
    /// The requested property cannot be accessed by the App
    case kAccessDenied = 35
    /// The requested property exists
    case kPropertyExists = 36
    /// If the Tenant ID has already been set in the sdk config, it is not allowed to set it via doActivation. If a user still tries to set it this status code is returned with onActivationEnd
    case kTenantIdAlreadySet = 37
    /// The underlaying module necessary to execute the invoked event is uninitialised
    case kUninitialized = 38
    /// The execution of the invoked event failed. Usually this cannot be fixed from App side and a Restart is necessary
    case kFailed = 39
    /// The execution of tehinvoked event requires an online login
    case kLoginRequired = 40
    /// The underlaying module necessary to execute the invoked event is already initialised
    case kAlreadyInitialized = 41
    /// Activation was successful and the global PIN for the given user had been set
    case kGlobalPinSet = 42
    /// An update is available for the App but the global PIN had been set
    case kUpdateAvailableGlobalPinSet = 43
    /// An invalid token had been provided for a transaction
    case kInvalidToken = 44
    /// The invoked event needs offline capabilities which had not been activated before
    case kOfflineNotActivated = 45
    /// The invoked event is not supported with teh given configuration
    case kNotSupported = 46
    /// The invoked event requires vaid IDP Token data which are not available
    case kNoTokenDataAvailable = 47
    /// The invoked event requires vaid IDP Token data but available data is expired
    case kTokenDataIsOutdated = 48
    /// An error occured while trying to acquire fresh IDP tokens from IDP
    case kCannotAcquireTokenData = 49
    /// An error occured while trying to acquire an authorization code from IDP
    case kCannotAcquireAuthorizationCode = 50
    /// An error occured while trying to acquire fresh IDP tokens from IDP via the an acquired authorization code
    case kCannotAcquireAccessTokenForAuthorizationCode = 51
    /// The operation cancelled on server side, e.g. a transaction.
    case kServerCancel = 52
    /// The underlying operation could not be completed due to connection issues. Used in DisplayConfirmationResult and TransactionEnd events.
    case kConnectionLost = 53

    /// The name as the documents' table writes it (`kOk`, `kTemporaryLocked`, …).
    public var description: String {
        switch self {
        case .kOk: "kOk"
        case .kUpdateAvailable: "kUpdateAvailable"
        case .kAppRegistered: "kAppRegistered"
        case .kUserCancel: "kUserCancel"
        case .kUserConfirmationTimeout: "kUserConfirmationTimeout"
        case .kInvalidPin: "kInvalidPin"
        case .kUnknownVersion: "kUnknownVersion"
        case .kUnknownClientType: "kUnknownClientType"
        case .kUpdateNecessary: "kUpdateNecessary"
        case .kWrongCredentials: "kWrongCredentials"
        case .kUnknownCertificate: "kUnknownCertificate"
        case .kInternalError: "kInternalError"
        case .kActivationCodeExpired: "kActivationCodeExpired"
        case .kLockedCertificate: "kLockedCertificate"
        case .kLockedUser: "kLockedUser"
        case .kPropertyNotExists: "kPropertyNotExists"
        case .kInvalidKeyLength: "kInvalidKeyLength"
        case .kNotUnique: "kNotUnique"
        case .kTextTooLong: "kTextTooLong"
        case .kInvalidState: "kInvalidState"
        case .kInvalidParameter: "kInvalidParameter"
        case .kInvalidUserId: "kInvalidUserId"
        case .kUserIdAlreadyExists: "kUserIdAlreadyExists"
        case .kRegisterApp: "kRegisterApp"
        case .kMismatchedUser: "kMismatchedUser"
        case .kNegative: "kNegative"
        case .kReadOnly: "kReadOnly"
        case .kTemporaryLocked: "kTemporaryLocked"
        case .kNotSuspended: "kNotSuspended"
        case .kInvalidPassword: "kInvalidPassword"
        case .kPasswordBlocked: "kPasswordBlocked"
        case .kAtcExpiresSoon: "kAtcExpiresSoon"
        case .kAtcExpired: "kAtcExpired"
        case .kNotReachable: "kNotReachable"
        case .kPinBlocked: "kPinBlocked"
        case .kAccessDenied: "kAccessDenied"
        case .kPropertyExists: "kPropertyExists"
        case .kTenantIdAlreadySet: "kTenantIdAlreadySet"
        case .kUninitialized: "kUninitialized"
        case .kFailed: "kFailed"
        case .kLoginRequired: "kLoginRequired"
        case .kAlreadyInitialized: "kAlreadyInitialized"
        case .kGlobalPinSet: "kGlobalPinSet"
        case .kUpdateAvailableGlobalPinSet: "kUpdateAvailableGlobalPinSet"
        case .kInvalidToken: "kInvalidToken"
        case .kOfflineNotActivated: "kOfflineNotActivated"
        case .kNotSupported: "kNotSupported"
        case .kNoTokenDataAvailable: "kNoTokenDataAvailable"
        case .kTokenDataIsOutdated: "kTokenDataIsOutdated"
        case .kCannotAcquireTokenData: "kCannotAcquireTokenData"
        case .kCannotAcquireAuthorizationCode: "kCannotAcquireAuthorizationCode"
        case .kCannotAcquireAccessTokenForAuthorizationCode: "kCannotAcquireAccessTokenForAuthorizationCode"
        case .kServerCancel: "kServerCancel"
        case .kConnectionLost: "kConnectionLost"
        }
    }
}

/// The Java name of the status type.
public typealias StatusType = KSMEventStatusType

extension KSMEventStatusType {
    /// The iOS samples' spelling of ``kOk``.
    public static let KSMOK = KSMEventStatusType.kOk
    /// The Java spelling of ``kOk``.
    public static let OK = KSMEventStatusType.kOk
    /// The Java spelling of ``kUpdateAvailable``.
    public static let UPDATE_AVAILABLE = KSMEventStatusType.kUpdateAvailable
    /// The Java spelling of ``kAppRegistered``.
    public static let APP_REGISTERED = KSMEventStatusType.kAppRegistered
    /// The Java spelling of ``kUserCancel``.
    public static let USER_CANCEL = KSMEventStatusType.kUserCancel
    /// The Java spelling of ``kUserConfirmationTimeout``.
    public static let USER_CONFIRMATION_TIMEOUT = KSMEventStatusType.kUserConfirmationTimeout
    /// The Java spelling of ``kInvalidPin``.
    public static let INVALID_PIN = KSMEventStatusType.kInvalidPin
    /// The Java spelling of ``kUnknownVersion``.
    public static let UNKNOWN_VERSION = KSMEventStatusType.kUnknownVersion
    /// The Java spelling of ``kUnknownClientType``.
    public static let UNKNOWN_CLIENT_TYPE = KSMEventStatusType.kUnknownClientType
    /// The Java spelling of ``kUpdateNecessary``.
    public static let UPDATE_NECESSARY = KSMEventStatusType.kUpdateNecessary
    /// The Java spelling of ``kWrongCredentials``.
    public static let WRONG_CREDENTIALS = KSMEventStatusType.kWrongCredentials
    /// The Java spelling of ``kUnknownCertificate``.
    public static let UNKNOWN_CERTIFICATE = KSMEventStatusType.kUnknownCertificate
    /// The Java spelling of ``kInternalError``.
    public static let INTERNAL_ERROR = KSMEventStatusType.kInternalError
    /// The Java spelling of ``kActivationCodeExpired``.
    public static let ACTIVATION_CODE_EXPIRED = KSMEventStatusType.kActivationCodeExpired
    /// The Java spelling of ``kLockedCertificate``.
    public static let LOCKED_CERTIFICATE = KSMEventStatusType.kLockedCertificate
    /// The Java spelling of ``kLockedUser``.
    public static let LOCKED_USER = KSMEventStatusType.kLockedUser
    /// The Java spelling of ``kPropertyNotExists``.
    public static let PROPERTY_NOT_EXISTS = KSMEventStatusType.kPropertyNotExists
    /// The Java spelling of ``kInvalidKeyLength``.
    public static let INVALID_KEY_LENGTH = KSMEventStatusType.kInvalidKeyLength
    /// The Java spelling of ``kNotUnique``.
    public static let NOT_UNIQUE = KSMEventStatusType.kNotUnique
    /// The Java spelling of ``kTextTooLong``.
    public static let TEXT_TOO_LONG = KSMEventStatusType.kTextTooLong
    /// The Java spelling of ``kInvalidState``.
    public static let INVALID_STATE = KSMEventStatusType.kInvalidState
    /// The Java spelling of ``kInvalidParameter``.
    public static let INVALID_PARAMETER = KSMEventStatusType.kInvalidParameter
    /// The Java spelling of ``kInvalidUserId``.
    public static let INVALID_USER_ID = KSMEventStatusType.kInvalidUserId
    /// The Java spelling of ``kUserIdAlreadyExists``.
    public static let USER_ID_ALREADY_EXISTS = KSMEventStatusType.kUserIdAlreadyExists
    /// The Java spelling of ``kRegisterApp``.
    public static let REGISTER_APP = KSMEventStatusType.kRegisterApp
    /// The Java spelling of ``kMismatchedUser``.
    public static let MISMATCHED_USER = KSMEventStatusType.kMismatchedUser
    /// The Java spelling of ``kNegative``.
    public static let NEGATIVE = KSMEventStatusType.kNegative
    /// The Java spelling of ``kReadOnly``.
    public static let READ_ONLY = KSMEventStatusType.kReadOnly
    /// The Java spelling of ``kTemporaryLocked``.
    public static let TEMPORARY_LOCKED = KSMEventStatusType.kTemporaryLocked
    /// The Java spelling of ``kNotSuspended``.
    public static let NOT_SUSPENDED = KSMEventStatusType.kNotSuspended
    /// The Java spelling of ``kInvalidPassword``.
    public static let INVALID_PASSWORD = KSMEventStatusType.kInvalidPassword
    /// The Java spelling of ``kPasswordBlocked``.
    public static let PASSWORD_BLOCKED = KSMEventStatusType.kPasswordBlocked
    /// The Java spelling of ``kAtcExpiresSoon``.
    public static let ATC_EXPIRES_SOON = KSMEventStatusType.kAtcExpiresSoon
    /// The Java spelling of ``kAtcExpired``.
    public static let ATC_EXPIRED = KSMEventStatusType.kAtcExpired
    /// The Java spelling of ``kNotReachable``.
    public static let NOT_REACHABLE = KSMEventStatusType.kNotReachable
    /// The Java spelling of ``kPinBlocked``.
    public static let PIN_BLOCKED = KSMEventStatusType.kPinBlocked
    /// The Java spelling of ``kAccessDenied``.
    public static let ACCESS_DENIED = KSMEventStatusType.kAccessDenied
    /// The Java spelling of ``kPropertyExists``.
    public static let PROPERTY_EXISTS = KSMEventStatusType.kPropertyExists
    /// The Java spelling of ``kTenantIdAlreadySet``.
    public static let TENANT_ID_ALREADY_SET = KSMEventStatusType.kTenantIdAlreadySet
    /// The Java spelling of ``kUninitialized``.
    public static let UNINITIALIZED = KSMEventStatusType.kUninitialized
    /// The Java spelling of ``kFailed``.
    public static let FAILED = KSMEventStatusType.kFailed
    /// The Java spelling of ``kLoginRequired``.
    public static let LOGIN_REQUIRED = KSMEventStatusType.kLoginRequired
    /// The Java spelling of ``kAlreadyInitialized``.
    public static let ALREADY_INITIALIZED = KSMEventStatusType.kAlreadyInitialized
    /// The Java spelling of ``kGlobalPinSet``.
    public static let GLOBAL_PIN_SET = KSMEventStatusType.kGlobalPinSet
    /// The Java spelling of ``kUpdateAvailableGlobalPinSet``.
    public static let UPDATE_AVAILABLE_GLOBAL_PIN_SET = KSMEventStatusType.kUpdateAvailableGlobalPinSet
    /// The Java spelling of ``kInvalidToken``.
    public static let INVALID_TOKEN = KSMEventStatusType.kInvalidToken
    /// The Java spelling of ``kOfflineNotActivated``.
    public static let OFFLINE_NOT_ACTIVATED = KSMEventStatusType.kOfflineNotActivated
    /// The Java spelling of ``kNotSupported``.
    public static let NOT_SUPPORTED = KSMEventStatusType.kNotSupported
    /// The Java spelling of ``kNoTokenDataAvailable``.
    public static let NO_TOKEN_DATA_AVAILABLE = KSMEventStatusType.kNoTokenDataAvailable
    /// The Java spelling of ``kTokenDataIsOutdated``.
    public static let TOKEN_DATA_IS_OUTDATED = KSMEventStatusType.kTokenDataIsOutdated
    /// The Java spelling of ``kCannotAcquireTokenData``.
    public static let CANNOT_ACQUIRE_TOKEN_DATA = KSMEventStatusType.kCannotAcquireTokenData
    /// The Java spelling of ``kCannotAcquireAuthorizationCode``.
    public static let CANNOT_ACQUIRE_AUTHORIZATION_CODE = KSMEventStatusType.kCannotAcquireAuthorizationCode
    /// The Java spelling of ``kCannotAcquireAccessTokenForAuthorizationCode``.
    public static let CANNOT_ACQUIRE_ACCESS_TOKEN_FOR_AUTHORIZATION_CODE = KSMEventStatusType.kCannotAcquireAccessTokenForAuthorizationCode
    /// The Java spelling of ``kServerCancel``.
    public static let SERVER_CANCEL = KSMEventStatusType.kServerCancel
    /// The Java spelling of ``kConnectionLost``.
    public static let CONNECTION_LOST = KSMEventStatusType.kConnectionLost
}

extension KSMEventStatusType {
    /// The iOS spelling of ``kUpdateAvailable``.
    public static let KSMUPDATE_AVAILABLE = KSMEventStatusType.kUpdateAvailable
    /// The iOS spelling of ``kAppRegistered``.
    public static let KSMAPP_REGISTERED = KSMEventStatusType.kAppRegistered
    /// The iOS spelling of ``kUserCancel``.
    public static let KSMUSER_CANCEL = KSMEventStatusType.kUserCancel
    /// The iOS spelling of ``kUserConfirmationTimeout``.
    public static let KSMUSER_CONFIRMATION_TIMEOUT = KSMEventStatusType.kUserConfirmationTimeout
    /// The iOS spelling of ``kInvalidPin``.
    public static let KSMINVALID_PIN = KSMEventStatusType.kInvalidPin
    /// The iOS spelling of ``kUnknownVersion``.
    public static let KSMUNKNOWN_VERSION = KSMEventStatusType.kUnknownVersion
    /// The iOS spelling of ``kUnknownClientType``.
    public static let KSMUNKNOWN_CLIENT_TYPE = KSMEventStatusType.kUnknownClientType
    /// The iOS spelling of ``kUpdateNecessary``.
    public static let KSMUPDATE_NECESSARY = KSMEventStatusType.kUpdateNecessary
    /// The iOS spelling of ``kWrongCredentials``.
    public static let KSMWRONG_CREDENTIALS = KSMEventStatusType.kWrongCredentials
    /// The iOS spelling of ``kUnknownCertificate``.
    public static let KSMUNKNOWN_CERTIFICATE = KSMEventStatusType.kUnknownCertificate
    /// The iOS spelling of ``kInternalError``.
    public static let KSMINTERNAL_ERROR = KSMEventStatusType.kInternalError
    /// The iOS spelling of ``kActivationCodeExpired``.
    public static let KSMACTIVATION_CODE_EXPIRED = KSMEventStatusType.kActivationCodeExpired
    /// The iOS spelling of ``kLockedCertificate``.
    public static let KSMLOCKED_CERTIFICATE = KSMEventStatusType.kLockedCertificate
    /// The iOS spelling of ``kLockedUser``.
    public static let KSMLOCKED_USER = KSMEventStatusType.kLockedUser
    /// The iOS spelling of ``kPropertyNotExists``.
    public static let KSMPROPERTY_NOT_EXISTS = KSMEventStatusType.kPropertyNotExists
    /// The iOS spelling of ``kInvalidKeyLength``.
    public static let KSMINVALID_KEY_LENGTH = KSMEventStatusType.kInvalidKeyLength
    /// The iOS spelling of ``kNotUnique``.
    public static let KSMNOT_UNIQUE = KSMEventStatusType.kNotUnique
    /// The iOS spelling of ``kTextTooLong``.
    public static let KSMTEXT_TOO_LONG = KSMEventStatusType.kTextTooLong
    /// The iOS spelling of ``kInvalidState``.
    public static let KSMINVALID_STATE = KSMEventStatusType.kInvalidState
    /// The iOS spelling of ``kInvalidParameter``.
    public static let KSMINVALID_PARAMETER = KSMEventStatusType.kInvalidParameter
    /// The iOS spelling of ``kInvalidUserId``.
    public static let KSMINVALID_USER_ID = KSMEventStatusType.kInvalidUserId
    /// The iOS spelling of ``kUserIdAlreadyExists``.
    public static let KSMUSER_ID_ALREADY_EXISTS = KSMEventStatusType.kUserIdAlreadyExists
    /// The iOS spelling of ``kRegisterApp``.
    public static let KSMREGISTER_APP = KSMEventStatusType.kRegisterApp
    /// The iOS spelling of ``kMismatchedUser``.
    public static let KSMMISMATCHED_USER = KSMEventStatusType.kMismatchedUser
    /// The iOS spelling of ``kNegative``.
    public static let KSMNEGATIVE = KSMEventStatusType.kNegative
    /// The iOS spelling of ``kReadOnly``.
    public static let KSMREAD_ONLY = KSMEventStatusType.kReadOnly
    /// The iOS spelling of ``kTemporaryLocked``.
    public static let KSMTEMPORARY_LOCKED = KSMEventStatusType.kTemporaryLocked
    /// The iOS spelling of ``kNotSuspended``.
    public static let KSMNOT_SUSPENDED = KSMEventStatusType.kNotSuspended
    /// The iOS spelling of ``kInvalidPassword``.
    public static let KSMINVALID_PASSWORD = KSMEventStatusType.kInvalidPassword
    /// The iOS spelling of ``kPasswordBlocked``.
    public static let KSMPASSWORD_BLOCKED = KSMEventStatusType.kPasswordBlocked
    /// The iOS spelling of ``kAtcExpiresSoon``.
    public static let KSMATC_EXPIRES_SOON = KSMEventStatusType.kAtcExpiresSoon
    /// The iOS spelling of ``kAtcExpired``.
    public static let KSMATC_EXPIRED = KSMEventStatusType.kAtcExpired
    /// The iOS spelling of ``kNotReachable``.
    public static let KSMNOT_REACHABLE = KSMEventStatusType.kNotReachable
    /// The iOS spelling of ``kPinBlocked``.
    public static let KSMPIN_BLOCKED = KSMEventStatusType.kPinBlocked
    /// The iOS spelling of ``kAccessDenied``.
    public static let KSMACCESS_DENIED = KSMEventStatusType.kAccessDenied
    /// The iOS spelling of ``kPropertyExists``.
    public static let KSMPROPERTY_EXISTS = KSMEventStatusType.kPropertyExists
    /// The iOS spelling of ``kTenantIdAlreadySet``.
    public static let KSMTENANT_ID_ALREADY_SET = KSMEventStatusType.kTenantIdAlreadySet
    /// The iOS spelling of ``kUninitialized``.
    public static let KSMUNINITIALIZED = KSMEventStatusType.kUninitialized
    /// The iOS spelling of ``kFailed``.
    public static let KSMFAILED = KSMEventStatusType.kFailed
    /// The iOS spelling of ``kLoginRequired``.
    public static let KSMLOGIN_REQUIRED = KSMEventStatusType.kLoginRequired
    /// The iOS spelling of ``kAlreadyInitialized``.
    public static let KSMALREADY_INITIALIZED = KSMEventStatusType.kAlreadyInitialized
    /// The iOS spelling of ``kGlobalPinSet``.
    public static let KSMGLOBAL_PIN_SET = KSMEventStatusType.kGlobalPinSet
    /// The iOS spelling of ``kUpdateAvailableGlobalPinSet``.
    public static let KSMUPDATE_AVAILABLE_GLOBAL_PIN_SET = KSMEventStatusType.kUpdateAvailableGlobalPinSet
    /// The iOS spelling of ``kInvalidToken``.
    public static let KSMINVALID_TOKEN = KSMEventStatusType.kInvalidToken
    /// The iOS spelling of ``kOfflineNotActivated``.
    public static let KSMOFFLINE_NOT_ACTIVATED = KSMEventStatusType.kOfflineNotActivated
    /// The iOS spelling of ``kNotSupported``.
    public static let KSMNOT_SUPPORTED = KSMEventStatusType.kNotSupported
    /// The iOS spelling of ``kNoTokenDataAvailable``.
    public static let KSMNO_TOKEN_DATA_AVAILABLE = KSMEventStatusType.kNoTokenDataAvailable
    /// The iOS spelling of ``kTokenDataIsOutdated``.
    public static let KSMTOKEN_DATA_IS_OUTDATED = KSMEventStatusType.kTokenDataIsOutdated
    /// The iOS spelling of ``kCannotAcquireTokenData``.
    public static let KSMCANNOT_ACQUIRE_TOKEN_DATA = KSMEventStatusType.kCannotAcquireTokenData
    /// The iOS spelling of ``kCannotAcquireAuthorizationCode``.
    public static let KSMCANNOT_ACQUIRE_AUTHORIZATION_CODE = KSMEventStatusType.kCannotAcquireAuthorizationCode
    /// The iOS spelling of ``kCannotAcquireAccessTokenForAuthorizationCode``.
    public static let KSMCANNOT_ACQUIRE_ACCESS_TOKEN_FOR_AUTHORIZATION_CODE = KSMEventStatusType.kCannotAcquireAccessTokenForAuthorizationCode
    /// The iOS spelling of ``kServerCancel``.
    public static let KSMSERVER_CANCEL = KSMEventStatusType.kServerCancel
    /// The iOS spelling of ``kConnectionLost``.
    public static let KSMCONNECTION_LOST = KSMEventStatusType.kConnectionLost
    /// The enumerations page's irregular iOS spelling of ``kGlobalPinSet``.
    public static let KSMGLOBALPINSET = KSMEventStatusType.kGlobalPinSet
    /// The enumerations page's iOS spelling (sic) of ``kCannotAcquireAccessTokenForAuthorizationCode``.
    public static let KSMCANNOT_ACQUIRE_ACCESS_TOKEN_FOR_AUTHORIZATIN_CODE = KSMEventStatusType.kCannotAcquireAccessTokenForAuthorizationCode
}
