import Foundation
import IdpPrimitives
import IdpSdk

// TokenCacheProvider's planted bugs (`PlantedBug.providersToken…`), beside it: one hook per site; a
// release build compiles each to the unplanted behaviour.

#if DEBUG
extension TokenCacheProvider {
    /// Before a caller asks: the failure a planted cache kept from an earlier refresh
    /// (`providersTokenKeepsFailure`), given to every later caller.
    func plantedKeptFailure() -> (any Error)? {
        guard planted.isOn(.providersTokenKeepsFailure) else { return nil }
        return planted.scratch?.withLock { $0 as? any Error }
    }

    /// Where a caller asks: the outcome of a refresh of its own that a planted cache runs when it
    /// finds one in the air (`providersTokenRefreshWithoutSingleFlight`), stored when it brings a
    /// token; `nil`: the caller asks.
    func plantedOwnRefresh() -> Outcome? {
        guard planted.isOn(.providersTokenRefreshWithoutSingleFlight) else { return nil }
        let inFlight: CachedToken<Token>?? = machine.withLock { machine in
            if case .refreshing(_, let previous, _) = machine.state { return .some(previous) }
            return nil
        }
        guard case .some(let previous) = inFlight else { return nil }
        let own = Waiter()
        runRefresh(from: previous, onThisThread: true) { own.settle($0) }
        let outcome = own.wait(timeout: refreshTimeout, timedOut: .timedOut)
        if case .token(let token) = outcome { store(token) }
        return outcome
    }

    /// Where a refresh lands: whether a planted cache landed it its own way. It keeps a failure
    /// (`providersTokenKeepsFailure`, then lands it as usual); or ends the flight with the
    /// previous token, wakes its waiters to ask again and only then stores the new token
    /// (`providersTokenWakesWaitersBeforeStore`).
    func plantedLanding(_ flight: UInt64, _ outcome: Outcome, refreshed: CachedToken<Token>?) -> Bool {
        if planted.isOn(.providersTokenKeepsFailure), case .failed(let error) = outcome { planted.scratch?.withLock { $0 = error } }
        guard planted.isOn(.providersTokenWakesWaitersBeforeStore) else { return false }
        let waiters = changing { $0.land(flight, refreshed: nil) }
        for waiter in waiters { waiter.settle(refreshed == nil ? outcome : .lookAgain) }
        if !waiters.isEmpty, let refreshed { store(refreshed) }
        return true
    }
}
#else
extension TokenCacheProvider {
    @inline(__always)
    func plantedKeptFailure() -> (any Error)? { nil }
    @inline(__always)
    func plantedOwnRefresh() -> Outcome? { nil }
    @inline(__always)
    func plantedLanding(_ flight: UInt64, _ outcome: Outcome, refreshed: CachedToken<Token>?) -> Bool { false }
}
#endif
