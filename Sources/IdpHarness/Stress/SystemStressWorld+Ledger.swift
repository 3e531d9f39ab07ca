import IdpSdk

extension SystemStress.World {
    /// One line of a participant's events: what it did or saw.
    struct Event: Sendable {
        let participant: Int
        let text: String
    }

    /// The stress's own record of the run, and its verdicts so far.
    struct Ledger: Sendable {
        var flows = 0
        var completions = 0
        var mcEvents = 0
        var tally = SystemStress.Tally()
        var violations: [String] = []
        var events: [Event] = []
        /// Logins each trace's MC reported (SetAuthorisationCode kOk).
        var codesRedeemed: [String: Int] = [:]
        /// The user id each trace's current flow was started with.
        var expectedUser: [String: String?] = [:]
        /// Every user a trace's flows were for (their username answers).
        var usersOfTrace: [String: Set<String>] = [:]
        /// The errors the provider returned (fault `provider.fail`), per flow.
        var providerErrors: [IdpSdkFlowID: IdpSdkError] = [:]
        /// Flows that ended while their provider call ran: the engine dropped that call's answer.
        var endedDuringCall: Set<IdpSdkFlowID> = []
        /// Users a provider answered with another flow's values for (cross-talk, judged when
        /// it happened): the IDP's refusals and locks that follow are what those answers earn.
        var usersAnsweredWrongly: Set<String> = []
        /// Traces whose current flows answer wrongly on purpose (a wrong-password storm).
        var expectingRefusal: Set<String> = []
        /// Whether the provider's last answer to each flow was the flow's own values, every
        /// asked field given.
        var lastAnswerRight: [IdpSdkFlowID: Bool] = [:]
    }
}
