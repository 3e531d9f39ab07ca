extension SystemStress {
    /// A fault the stress can inject; its raw value is its name on the command line and in
    /// reproducers (`transport.delay`, …).
    public enum Fault: String, CaseIterable, Sendable, Comparable, CustomStringConvertible {
        /// A request's answer is held back until other work ran.
        case transportDelay = "transport.delay"
        /// A request is lost: its answer never comes (the flow times out).
        case transportDrop = "transport.drop"
        /// A request reaches the IDP twice.
        case transportDuplicate = "transport.duplicate"
        /// A request reaches the IDP twice at once: the copy races the original there, as a client's
        /// retry after a lost response, a proxy's replay or a double tap would. Token requests
        /// (code and refresh grants, ExchangeIamToken's refresh) and the login and activation
        /// steps' form posts; the caller gets the copy's answer, and the stress judges both.
        case transportRetryInFlight = "transport.retryInFlight"
        /// Answers come back in another order than their requests went out.
        case transportReorder = "transport.reorder"
        /// The connection is lost before the request is sent.
        case transportConnectionLost = "transport.connectionLost"
        /// The IDP answers with a server error.
        case transport5xx = "transport.5xx"
        /// The request times out before it is sent.
        case transportTimeout = "transport.timeout"
        /// The provider takes a millisecond to answer.
        case providerSlow = "provider.slow"
        /// The provider blocks until its flow has ended.
        case providerHang = "provider.hang"
        /// The provider answers with an error of its own.
        case providerFail = "provider.fail"
        /// The clock passes an authorization code's lifetime before it is redeemed.
        case clockCodeExpiry = "clock.codeExpiry"
        /// Four ExchangeIamToken events at once at an access token's expiry.
        case refreshStorm = "refresh.storm"
        /// A logout races a refresh in flight.
        case refreshLogoutRace = "refresh.logoutRace"
        /// An authorization code is presented with another PKCE verifier first.
        case codeWrongVerifier = "code.wrongVerifier"
        /// The app's token request (code and verifier) is captured and replayed after the app
        /// redeemed it; the IDP must refuse it, and revokes the tokens the code gave.
        case codeReplay = "code.replay"

        /// The fault's name.
        public var description: String { rawValue }

        /// Orders faults by name.
        /// - Parameters:
        ///   - lhs: A fault.
        ///   - rhs: Another.
        /// - Returns: Whether `lhs`'s name sorts first.
        public static func < (lhs: Fault, rhs: Fault) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The fault named `name`.
        /// - Parameter name: A fault's name, as `rawValue` gives it.
        /// - Throws: ``StressError`` naming the valid names when `name` is none of them.
        public init(parsing name: String) throws(StressError) {
            guard let fault = Fault(rawValue: name) else {
                throw StressError("'\(name)' is not a fault; the faults are \(Fault.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self = fault
        }
    }
}
