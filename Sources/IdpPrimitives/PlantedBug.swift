/// A bug planted in the product on purpose, so that a test can show that the system stress
/// catches the kind of bug each of its invariants is named for, and the conformance kit the bugs
/// of the library's providers (mutation testing).
///
/// Each case names the module it lives in and what goes wrong. A product type holds the bug it
/// was configured with in a ``PlantedBugSwitch``; each bug's behaviour lives in a `+Planted.swift`
/// file beside the type it changes, reached from the type's main line by one hook per site. All of
/// it exists only in debug builds: a release build compiles each hook to the unplanted behaviour
/// and has no planted type, switch or code path (`.ci/run` checks the release `idp-bench`).
#if DEBUG
package enum PlantedBug: String, CaseIterable, Sendable, Comparable {
    // The IdpSdk engine.
    /// The engine keeps the flow whose provider call runs in one slot for the whole service and
    /// routes the provider's answer to whichever flow is in that slot when the call returns.
    case engineRoutesAnswerThroughSharedSlot = "engine.routes-answer-through-shared-slot"
    /// When a provider returns an error, the engine submits the last answer a provider gave for
    /// the same user and step (one table for the whole service: another flow's answer) instead.
    case engineAnswersFromAnotherFlowAfterProviderError = "engine.answers-from-another-flow-after-provider-error"
    /// A provider's error reaches the caller as another SDK error.
    case engineReplacesProviderError = "engine.replaces-provider-error"
    /// A cancelled flow ends with `connectionLost` instead of `cancelled`.
    case engineReportsCancelAsConnectionLost = "engine.reports-cancel-as-connection-lost"
    /// A flow ended from outside (a cancel, a timeout) completes again when the answer to its
    /// last request arrives.
    case engineCompletesAgainOnLateResponse = "engine.completes-again-on-late-response"
    /// A flow the engine ends with an error completes twice.
    case engineCompletesFailuresTwice = "engine.completes-failures-twice"
    /// A flow that ends while its provider call runs (a timeout, a cancel) never completes.
    case engineDropsCompletionDuringProviderCall = "engine.drops-completion-during-provider-call"

    /// The SDK's job queue: a pop copies its job out of the slot instead of moving it, so the
    /// queue keeps a reference to every job it handed out until the slot is written again.
    case sdkQueueKeepsPoppedJobs = "sdk.queue-keeps-popped-jobs"
    /// The SDK's job queue: growing copies the ring from its first slot instead of its head, so
    /// once the ring has wrapped, jobs come out of order.
    case sdkQueueGrowsFromSlotZero = "sdk.queue-grows-from-slot-zero"

    // The MasterController.
    /// A refresh that ends after ClearIamTokenCache writes its tokens back into the store.
    case mcRefreshWritesBackAfterClear = "mc.refresh-writes-back-after-clear"
    /// CLEAR_ACCESS_AND_REFRESH leaves the refresh token in the store.
    case mcClearKeepsRefreshToken = "mc.clear-keeps-refresh-token"
    /// Concurrent callers that find the access token expired each refresh it (no single flight).
    case mcRefreshWithoutSingleFlight = "mc.refresh-without-single-flight"
    /// The access token is refreshed while it is still valid.
    case mcRefreshesLiveToken = "mc.refreshes-live-token"
    /// A refresh stores the new access token but keeps the spent refresh token.
    case mcKeepsSpentRefreshToken = "mc.keeps-spent-refresh-token"
    /// A login by SetAuthorisationCode stores the tokens but does not mark the user logged in.
    case mcLoginForgetsSession = "mc.login-forgets-session"
    /// A refresh whose tokens were cleared meanwhile never ends: its waiters wait for ever.
    case mcClearedRefreshNeverEnds = "mc.cleared-refresh-never-ends"

    /// The IDP's grant log: a handle finds the grant at the position it names whatever its other
    /// bytes, so a guessed token with a live position is accepted.
    case idpGrantLogAcceptsAnyHandleAtItsPosition = "idp.grant-log-accepts-any-handle-at-its-position"
    /// The IDP's grant log: a prune drops grants at the head that have not expired.
    case idpGrantLogPrunesUnexpired = "idp.grant-log-prunes-unexpired"
    /// The IDP's incremental table: a key whose home the walk has passed is probed from its home,
    /// where the walk left a gap, so an entry of it the walk has not reached yet is not found.
    case idpTableProbesPassedHomesFromHome = "idp.table-probes-passed-homes-from-home"
    /// The IDP's incremental table: the draining table is let go after one step, with entries
    /// still in it: they are lost.
    case idpTableRetiresBeforeDrained = "idp.table-retires-before-drained"
    /// A step decided under the IDP's locks (after its optimistic tries were overtaken) is handed
    /// random values not made yet, so its decision draws the values it issues under the locks.
    case idpDrawsFreshValuesUnderLocks = "idp.draws-fresh-values-under-locks"
    /// The token endpoint makes the code verifier's S256 challenge (a SHA-256) inside the lock of
    /// the grant shard where the code's redemption is decided, instead of before it.
    case idpChecksVerifierUnderGrantLock = "idp.checks-verifier-under-grant-lock"

    // CredentialProviders.
    /// TokenCacheProvider: a caller that finds a refresh in the air runs one of its own (no
    /// single flight).
    case providersTokenRefreshWithoutSingleFlight = "providers.token-refresh-without-single-flight"
    /// TokenCacheProvider: a refresh ends with the previous token, wakes its waiters, and only
    /// then stores the new token.
    case providersTokenWakesWaitersBeforeStore = "providers.token-wakes-waiters-before-store"
    /// TokenCacheProvider: a failed refresh's error is kept and given to every later caller.
    case providersTokenKeepsFailure = "providers.token-keeps-failure"

    // The IdpServer.
    /// A step decided on a copy of the user's record is committed without checking that the
    /// record is unchanged: the copy's failure counts are written back over the ones counted
    /// since (check, then act; a lost update of the lockout counter only).
    case idpCountsFailureOnStaleCopy = "idp.counts-failure-on-stale-copy"
    /// The account locks one wrong secret after the policy's limit.
    case idpLocksOneGuessLate = "idp.locks-one-guess-late"
    /// A redeemed authorization code stays redeemable.
    case idpCodeStaysRedeemable = "idp.code-stays-redeemable"
    /// The token endpoint does not check the PKCE verifier.
    case idpSkipsPkceCheck = "idp.skips-pkce-check"
    /// An activation started with a login hint (add user) issues its code for the hinted user.
    case idpIssuesCodeForLoginHint = "idp.issues-code-for-login-hint"
    /// Access tokens are recorded as expired the moment they are issued.
    case idpIssuesExpiredAccessTokens = "idp.issues-expired-access-tokens"
    /// A code grant is decided on the code's record as an earlier lock section read it: a code
    /// redeemed since by a request that read it at the same time is redeemed again (check, then
    /// act across two lock sections; only two presentations of one code at once reach it).
    case idpRedeemsOnEarlierRead = "idp.redeems-on-earlier-read"
    /// A code presented again, or a rotated refresh token, is refused, but the tokens it gave stay
    /// live: the reuse revokes nothing.
    case idpReuseRevokesNothing = "idp.reuse-revokes-nothing"

    // The harness's own checks.
    /// The controlled phase's lock table gives a held lock to the next asker as well: the
    /// scheduler no longer knows who holds what.
    case harnessLocksIgnoreHolders = "harness.locks-ignore-holders"
    /// The controlled phase's shrinking takes a candidate whose try was not fully controlled as
    /// one that passed, so a stall during shrinking changes the reproducer.
    case harnessShrinkTakesStallsAsPasses = "harness.shrink-takes-stalls-as-passes"
    /// The controlled phase grades a schedule that went through work it does not schedule (a
    /// dispatch queue, a thread the provider started) as explored.
    case harnessGradesUncontrolledAsExplored = "harness.grades-uncontrolled-as-explored"
    /// The controlled phase's watchdog takes a participant that is running or runnable, only slow
    /// to reach its next point, for one blocked outside the points.
    case harnessTakesRunnableForBlocked = "harness.takes-runnable-for-blocked"
    /// The controlled phase's shrinking searches the shortest failing prefix among the decisions
    /// of the schedule as found, which a smaller schedule follows only as far as they fit, instead
    /// of those the last failing try took.
    case harnessShrinksAlongTheFoundSchedule = "harness.shrinks-along-the-found-schedule"
    /// PCT's change points fall among exactly as many decisions as the first schedule took, so one
    /// point more or fewer in it changes every later schedule.
    case harnessStepsFollowEveryDecision = "harness.steps-follow-every-decision"
    /// The stress's controlled scheduler counts a wait that names no owner as durable even while
    /// other threads of the process run: a wait a preempted thread would end is taken as one
    /// nothing can end.
    case harnessOwnerlessWaitIgnoresRunningThreads = "harness.ownerless-wait-ignores-running-threads"
    /// The stress's free-run watchdog takes the quiet world as stuck without asking the OS whether
    /// a thread still runs.
    case harnessFreeRunTakesRunnableForBlocked = "harness.free-run-takes-runnable-for-blocked"
    /// The stress's free run starts its MC events' tasks, and lets the MC start its own, on the
    /// Swift concurrency pool: other work of the process that holds the pool holds the run back.
    case harnessFreeRunTasksOnThePool = "harness.free-run-tasks-on-the-pool"

    /// What shows that a planted bug is caught.
    package enum Catcher: Sendable {
        /// The system stress breaks the invariant named for the bug (`StressMutationTests`).
        case systemStress
        /// The conformance kit fails the provider (`TokenCacheProviderKitTests`).
        case conformanceKit
        /// The planted type's own test: a differential check against a plain model, the check of
        /// the work done under the IDP's locks, or the harness's test of the check the bug breaks.
        case ownTest
    }

    /// What catches this bug.
    package var caughtBy: Catcher {
        switch self {
        case .providersTokenRefreshWithoutSingleFlight, .providersTokenWakesWaitersBeforeStore, .providersTokenKeepsFailure:
            .conformanceKit
        case .sdkQueueKeepsPoppedJobs, .sdkQueueGrowsFromSlotZero, .idpGrantLogAcceptsAnyHandleAtItsPosition, .idpGrantLogPrunesUnexpired,
             .idpTableProbesPassedHomesFromHome, .idpTableRetiresBeforeDrained, .idpDrawsFreshValuesUnderLocks, .idpChecksVerifierUnderGrantLock:
            .ownTest
        case .harnessLocksIgnoreHolders, .harnessShrinkTakesStallsAsPasses, .harnessGradesUncontrolledAsExplored, .harnessTakesRunnableForBlocked,
             .harnessShrinksAlongTheFoundSchedule, .harnessStepsFollowEveryDecision, .harnessOwnerlessWaitIgnoresRunningThreads,
             .harnessFreeRunTakesRunnableForBlocked, .harnessFreeRunTasksOnThePool:
            .ownTest
        default:
            .systemStress
        }
    }

    /// The bugs the system stress catches: the engine's, the MasterController's and the IDP's
    /// behaviour as a client sees it.
    package static var inTheSystem: [PlantedBug] { allCases.filter { $0.caughtBy == .systemStress } }

    /// Orders bugs by name.
    /// - Parameters:
    ///   - lhs: A bug.
    ///   - rhs: Another.
    /// - Returns: Whether `lhs`'s name sorts first.
    package static func < (lhs: PlantedBug, rhs: PlantedBug) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The planted bug a product type was configured with (debug builds only, like every planted
/// bug): a value a test may set.
package struct PlantedBugSwitch: Sendable {
    /// The bug that is on, if any.
    package let bug: PlantedBug?
    /// Where a planted bug keeps what it shares among the instance's work (one slot for a whole
    /// service, say): one per switch, shared by every copy of the configuration that holds it.
    package let scratch: LockedValue<(any Sendable)?>?

    /// No bug on.
    package init() {
        bug = nil
        scratch = nil
    }

    /// `bug` on.
    /// - Parameter bug: The bug to turn on; `nil`: none.
    package init(_ bug: PlantedBug?) {
        self.bug = bug
        scratch = bug == nil ? nil : LockedValue(nil)
    }

    /// The switch of what a test runs inside `PlantedBugSwitch.$inTask.withValue(…)`: the
    /// harness's objects (a scheduler, a watchdog) take it when they are made there.
    @TaskLocal package static var inTask = PlantedBugSwitch()

    /// Whether `bug` is on.
    /// - Parameter bug: A planted bug.
    @inline(__always)
    package func isOn(_ bug: PlantedBug) -> Bool { self.bug == bug }
}
#endif
