import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// Interleavings that the invariants accept and that a run may or may not reach; each is
    /// counted in ``Report/interleavings`` so a report says which were explored, and
    /// ``Options/stopAt`` finds a run that reaches one.
    public enum Interleaving: String, Sendable, CaseIterable, Comparable {
        /// Another device's step moved the shared clock past a lock's end while a wrong-password
        /// storm ran, so more guesses were evaluated, up to another lock.
        case lockLiftedDuringStorm = "lock lifted by a clock jump during a storm"
        /// ExchangeIamToken names no user: it answered for another user that was logged in on
        /// the same MasterController since (an added user's activation logs that user in).
        case exchangeForAnotherUser = "ExchangeIamToken answered for the MC's other logged-in user"
        /// The clock moved past a refreshed token's expiry while a refresh storm ran, so the
        /// storm caused a second refresh grant, one per expiry.
        case expiryDuringRefreshStorm = "a clock jump made a second expiry during a refresh storm"
        /// A flow ended (with a code, the IDP's refusal or its provider's error) before its
        /// caller's cancel took effect.
        case cancelAfterEnd = "a cancel came after the flow had ended"
        /// A code or refresh grant sent twice at once (`transport.retryInFlight`): one copy got
        /// tokens, and the other, decided after it, found the code redeemed or the token rotated
        /// and revoked them.
        case reuseRevoked = "a grant sent twice at once: one copy got tokens, the other's reuse revoked them"

        /// Orders interleavings by their descriptions.
        ///
        /// - Parameters:
        ///   - lhs: An interleaving.
        ///   - rhs: Another interleaving.
        /// - Returns: Whether `lhs`'s description sorts first.
        public static func < (lhs: Interleaving, rhs: Interleaving) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The short names the command line takes.
        public var name: String {
            switch self {
            case .lockLiftedDuringStorm: "lock-lifted"
            case .exchangeForAnotherUser: "exchange-other-user"
            case .expiryDuringRefreshStorm: "second-expiry"
            case .cancelAfterEnd: "cancel-after-end"
            case .reuseRevoked: "reuse-revoked"
            }
        }

        /// The interleaving with short name `name`, or `nil`.
        public init?(name: String) {
            guard let found = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = found
        }
    }
}
