import Foundation

/// A token and the time it expires.
public struct CachedToken<Token: Sendable>: Sendable {
    /// The token: an access token, a session, whatever your credentials are made from.
    public var token: Token
    /// When it stops being usable; from then on the next caller refreshes it.
    public var expires: Date

    /// A token valid until `expires`.
    /// - Parameters:
    ///   - token: The token.
    ///   - expires: When it stops being usable.
    public init(_ token: Token, expires: Date) {
        self.token = token
        self.expires = expires
    }
}

/// The states of ``TokenCacheProvider``: which token it holds, whether a refresh is in flight and
/// who waits for it. Pure: the provider keeps one under its lock, asks it what to do, and does
/// it after the lock (runs the refresh, wakes the waiters).
struct TokenCacheMachine<Token: Sendable, Waiter> {
    enum State {
        /// No token: never stored, or cleared.
        case empty
        /// A token, expired or not at the time of asking.
        case holding(CachedToken<Token>)
        /// Refresh `flight` is under way from `previous` (the expired token, or `nil` from empty);
        /// `waiters` get its outcome.
        case refreshing(flight: UInt64, previous: CachedToken<Token>?, waiters: [Waiter])
    }

    /// What a caller does after asking.
    enum Step {
        /// Answer from this token.
        case use(CachedToken<Token>)
        /// Wait: the caller was added to the waiters of the flight in the air.
        case wait
        /// Run refresh `flight` from `previous`; the caller was added to its waiters.
        case refresh(flight: UInt64, previous: CachedToken<Token>?)
    }

    private(set) var state = State.empty
    private var flights: UInt64 = 0

    init(_ initial: CachedToken<Token>?) {
        state = initial.map(State.holding) ?? .empty
    }

    /// The token the cache holds, expired or not; `nil` when empty or refreshing.
    var held: CachedToken<Token>? {
        if case .holding(let cached) = state { return cached }
        return nil
    }

    /// What a caller at `now` does: use the token, or wait for the refresh in flight, or start
    /// one (the first caller to find the token expired or missing). `waiter` joins the flight
    /// unless the token is used.
    mutating func ask(at now: Date, waiter: Waiter) -> Step {
        switch state {
        case .holding(let cached) where cached.expires > now:
            return .use(cached)
        case .refreshing(let flight, let previous, var waiters):
            waiters.append(waiter)
            state = .refreshing(flight: flight, previous: previous, waiters: waiters)
            return .wait
        case .holding(let cached):
            return start(from: cached, waiter: waiter)
        case .empty:
            return start(from: nil, waiter: waiter)
        }
    }

    private mutating func start(from previous: CachedToken<Token>?, waiter: Waiter) -> Step {
        flights &+= 1
        state = .refreshing(flight: flights, previous: previous, waiters: [waiter])
        return .refresh(flight: flights, previous: previous)
    }

    /// Refresh `flight` ended: a new token is stored, a failure leaves the previous token (so the
    /// next caller refreshes again from it; nothing failed is kept). Returns the waiters to wake;
    /// none when the flight was cleared or replaced meanwhile (its waiters were handed back then,
    /// and nothing is stored).
    mutating func land(_ flight: UInt64, refreshed: CachedToken<Token>?) -> [Waiter] {
        guard case .refreshing(let current, let previous, let waiters) = state, current == flight else { return [] }
        if let refreshed {
            state = .holding(refreshed)
        } else {
            state = previous.map(State.holding) ?? .empty
        }
        return waiters
    }

    /// Stores `token` (a login, or what a refresh outside the flight got); a flight in the air is
    /// superseded: returns its waiters, to be given `token`.
    mutating func store(_ token: CachedToken<Token>) -> [Waiter] {
        defer { state = .holding(token) }
        if case .refreshing(_, _, let waiters) = state { return waiters }
        return []
    }

    /// Forgets the token (a logout); a flight in the air is cut off: what it gets is never
    /// stored. Returns its waiters, to be told the token was cleared.
    mutating func clear() -> [Waiter] {
        defer { state = .empty }
        if case .refreshing(_, _, let waiters) = state { return waiters }
        return []
    }

    /// How many callers wait for the refresh in the air.
    var waiting: Int {
        if case .refreshing(_, _, let waiters) = state { return waiters.count }
        return 0
    }

    /// Whether a refresh is in the air.
    var refreshing: Bool {
        if case .refreshing = state { return true }
        return false
    }
}

extension TokenCacheMachine: Sendable where Waiter: Sendable {}
extension TokenCacheMachine.State: Sendable where Waiter: Sendable {}
