import Foundation
import IdpSdk
import IdpServer

extension SystemStress.World {
    /// What the stress knows of the time a flow ran in.
    struct FlowWindow {
        /// The run's clock when the flow started and when the participant saw it end.
        let started: Date
        let ended: Date
        /// The faults that struck the participant meanwhile.
        let faults: [SystemStress.Fault]
        /// Whether the flow's caller cancelled it.
        let cancelled: Bool
        /// Whether its answers were wrong on purpose.
        let expectRefusal: Bool
        /// The user the flow was started for; `nil`: an activation.
        let user: String?
        /// Whether a provider answered its user (or an activation) with another flow's values.
        var answeredWrongly = false
    }

    /// The errors a flow ends with only when the IDP answered a request of it: its verdict on a
    /// submitted step, or a session it no longer knows.
    static let answeredByIdpCodes: Set<IdpSdkError.Code> = [.credentialsRejected, .userNotEnrolled, .tooManyAttempts, .activationCodeExpired,
                                                             .authorizationRefused, .unknownClient, .unknownTenant, .sessionExpired,
                                                             .temporarilyLocked, .permanentlyLocked]

    /// The errors the engine ends a flow with when it refuses the provider's answer.
    static let credentialCheckCodes: Set<IdpSdkError.Code> = [.missingCredentialField, .unexpectedCredentialField, .emptyCredentialField,
                                                              .credentialFieldTooLong, .invalidCredentialValue]

    /// Why a flow may have ended with `error`, from the record alone; `nil`: nothing explains it.
    static func explanation(of error: IdpSdkError, window: FlowWindow) -> String? {
        let moved = window.ended.timeIntervalSince(window.started)
        guard error.subsystem == IdpSdkError.sdkSubsystem, let code = error.code else { return nil }
        func struck(_ faults: SystemStress.Fault...) -> Bool { window.faults.contains { faults.contains($0) } }
        // A step's form posted twice at once: the copy decided second finds the flow moved on
        // (a stale form) or ended (its session gone).
        if [.authorizationRefused, .sessionExpired].contains(code), struck(.transportRetryInFlight) { return "a step of it was posted twice at once" }
        switch code {
        case .cancelled:
            return window.cancelled ? "its caller cancelled it" : nil
        case .timedOut:
            if moved >= flowTimeout.timeInterval { return "the watchdog moved the clock past its timeout" }
            return struck(.transportTimeout, .transportDrop) ? "a request of it timed out or was lost" : nil
        case .connectionLost:
            return struck(.transportConnectionLost) ? "the connection was lost" : nil
        case .protocolError:
            return struck(.transport5xx) ? "the IDP answered 503" : nil
        case .sessionExpired:
            return moved >= IdpServer.Configuration().authSessionLifetime.timeInterval ? "the clock moved past its login session" : nil
        case .credentialsRejected, .tooManyAttempts, .temporarilyLocked, .permanentlyLocked, .authorizationRefused:
            if window.expectRefusal { return "its answers were wrong on purpose" }
            return window.answeredWrongly ? "a provider answered its user with another flow's values (cross-talk, judged there)" : nil
        default:
            return nil
        }
    }
}
