extension SystemStress {
    /// The invariants the stress checks; each one's raw value is its name in reports.
    ///
    /// What each promises, and what it does not:
    /// - ``noCrossTalk``: a provider call's user and trace are its flow's; a provider's answer
    ///   holds no other flow's secrets; a flow ends with no other flow's provider error, and a flow
    ///   whose provider returned an error gets no code, no verdict of the IDP on a step and no
    ///   refusal of an answer after it (the engine took an answer its provider did not give);
    ///   ExchangeIamToken's token is for the user logged in on
    ///   that MC, which is the user of the last successful SetAuthorisationCode (an activation,
    ///   an added user's too) or OfflineLogin since Start, not necessarily the user of the step
    ///   that asked.
    /// - ``logoutStays``: after ClearIamTokenCache of a user, no token for that user comes out
    ///   until the next login, whatever a refresh in flight does; while that user was the MC's
    ///   logged-in one, no token comes out at all.
    /// - ``lockoutExact``: the IDP's decisions on a user, in the order it made them and by the time
    ///   it made each at, follow the lockout policy exactly (see `LockoutReplay`): a clock jump
    ///   past a lock's end lifts it and later guesses count again; with no jump and no fault, a
    ///   storm is evaluated exactly `lockoutAfter` times and locks once.
    /// - ``oneRefresh``: one refresh grant per expiry: two grants of a device are at least an
    ///   access token's lifetime apart on the IDP's clock (the clock may jump past a new token's
    ///   expiry while a storm runs; that is a second expiry).
    /// - ``errorsUnchanged``: an error a provider returned reaches the caller as it was, unless
    ///   the flow ended before the engine took it; every other error a flow ends with is one the
    ///   stress's record explains (its caller cancelled it, the watchdog moved the clock past its
    ///   timeout, a transport fault struck it, its answers were wrong on purpose).
    /// - ``liveness``: after a successful login (SetAuthorisationCode or OfflineLogin) the MC hands
    ///   out a token for that user, unless a fault struck in between.
    public enum Invariant: String, CaseIterable, Sendable, Comparable, CustomStringConvertible {
        /// Every `getAuthorizationCode` calls its completion exactly once.
        case exactlyOnce = "every flow completes exactly once"
        /// A flow never sees another's user, trace or secrets (see ``SystemStress/Invariant``).
        case noCrossTalk = "no cross-talk"
        /// An authorization code is redeemed at most once, and only with its own PKCE verifier.
        case singleUseCodes = "codes single-use and bound to their PKCE challenge"
        /// The IDP's lockout decisions follow the policy exactly (see ``SystemStress/Invariant``).
        case lockoutExact = "lockout counts exact"
        /// One refresh grant per access-token expiry (see ``SystemStress/Invariant``).
        case oneRefresh = "one refresh per expiry"
        /// After ClearIamTokenCache (CLEAR_ALL, CLEAR_ACCESS_AND_REFRESH) no token comes back until the next login: a refresh may not resurrect it.
        case logoutStays = "a logout stays a logout"
        /// Every flow and MC event ends before the watchdog fires, and none is in flight after the run.
        case noStuckFlow = "no flow stuck past the watchdog"
        /// A provider's error reaches the caller unchanged (see ``SystemStress/Invariant``).
        case errorsUnchanged = "errors delivered unchanged"
        /// A successful login lets its user have a token (see ``SystemStress/Invariant``).
        case liveness = "a login gives its user a token"

        /// The invariant's name, as reports print it before a violation's detail.
        public var description: String { rawValue }

        /// Orders invariants by name.
        /// - Parameters:
        ///   - lhs: An invariant.
        ///   - rhs: Another.
        /// - Returns: Whether `lhs`'s name sorts first.
        public static func < (lhs: Invariant, rhs: Invariant) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The invariant a violation (`"<name>: <detail>"`) names, or `nil` (a scheduler verdict
        /// such as "no deadlock").
        /// - Parameter violation: A violation as reports print it.
        public init?(violation: String) {
            guard let found = Self.allCases.first(where: { violation.hasPrefix($0.rawValue + ":") }) else { return nil }
            self = found
        }
    }
}
