import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// One kind of step a participant plays.
    public enum Step: String, Sendable, CaseIterable, Comparable {
        /// Logs the participant's user in (an IdpSdk flow and SetAuthorisationCode).
        case login
        /// Adds and activates another user on the participant's device.
        case addUser = "add-user"
        /// Restarts the MC and logs the user in with OfflineLogin.
        case offlineLogin = "offline-login"
        /// Restarts the app: a new MasterController over the same token store, then Start.
        case restart
        /// ClearIamTokenCache with `CLEAR_ALL`, then a login.
        case logoutAll = "logout-all"
        /// ClearIamTokenCache with `CLEAR_ACCESS_AND_REFRESH`, then a login.
        case logoutAccessAndRefresh = "logout-access-and-refresh"
        /// ClearIamTokenCache with `CLEAR_OFFLINE`, then a login.
        case logoutOffline = "logout-offline"
        /// Moves the clock past the access token's expiry and asks for tokens (several at once
        /// under the `refresh.storm` fault).
        case refresh
        /// A storm of wrong passwords on a fresh user, to the lockout and past it.
        case lockout
        /// A login that its caller cancels.
        case cancel

        /// Orders steps by their command-line names.
        ///
        /// - Parameters:
        ///   - lhs: A step.
        ///   - rhs: Another step.
        /// - Returns: Whether `lhs`'s name sorts first.
        public static func < (lhs: Step, rhs: Step) -> Bool { lhs.rawValue < rhs.rawValue }
    }
}
