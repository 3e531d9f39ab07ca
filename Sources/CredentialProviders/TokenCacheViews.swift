import Foundation
import IdpPrimitives
import IdpSdk
import Synchronization

/// The lock-free reading side of a ``TokenCacheProvider``: each thread answers from its own view
/// of the cache (the token's expiry and the answer made from it), trusted while the cache's
/// generation is the one the view was made at. Non-generic, so that a call that finds a valid
/// token runs no generic code but the user's `credentials`.
final class TokenCacheReading: Sendable {
    typealias Answer = @Sendable (IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult

    /// Advanced (releasing) under the cache's lock at every change of its state, read (acquiring)
    /// by every call before it trusts its thread's view; a cell of its own, written only then.
    private let generations = SpacedAtomics(count: 1)
    private let serial = TokenCacheViews.nextSerial()

    /// Marks a change of the cache's state; call it under the cache's lock.
    func changed() { generations.addReleasing(1, at: 0) }

    /// The generation now; read it under the cache's lock to pair it with the state.
    var generation: Int { generations.load(at: 0) }

    /// The answer from this thread's view when it holds a token unexpired at `now`, or `nil`.
    /// A view older than the cache's generation is made again from `current`, which reads the
    /// held token's expiry and answer, and the generation, under the cache's lock.
    func answer(at now: Date, _ data: IdpSdkInteractionData, current: () -> (generation: Int, expires: Date, answer: Answer?)) -> IdpSdkProvideCredentialsResult? {
        let seen = generations.loadAcquiring(at: 0)
        let view = TokenCacheViews.perThread.withValue(orMake: { TokenCacheViews() }) { $0.view(serial) }
        if view.generation != seen { (view.generation, view.expires, view.answer) = current() }
        guard view.expires > now, let answer = view.answer else { return nil }
        return answer(data)
    }
}

/// One thread's view of one cache; used only by its thread.
final class TokenCacheView {
    let serial: UInt64
    var generation = -1
    var expires = Date.distantPast
    var answer: TokenCacheReading.Answer?

    init(serial: UInt64) { self.serial = serial }
}

/// A thread's views, one per cache it answered from; used only by its thread. When it holds 64,
/// they are dropped (views of caches that are gone go with them) and made again as needed.
final class TokenCacheViews {
    static let perThread = ThreadSpecific<TokenCacheViews>()
    private static let serials = Atomic<UInt64>(0)

    /// A serial no other cache of the process has.
    static func nextSerial() -> UInt64 { serials.wrappingAdd(1, ordering: .relaxed).newValue }

    private var views: [TokenCacheView] = []

    /// This thread's view of cache `serial`, made at its first use.
    func view(_ serial: UInt64) -> TokenCacheView {
        for index in 0..<views.count where views[index].serial == serial { return views[index] }
        if views.count >= 64 { views.removeAll(keepingCapacity: true) }
        let view = TokenCacheView(serial: serial)
        views.append(view)
        return view
    }
}
