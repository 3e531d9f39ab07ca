import Foundation
import Testing

/// A suite whose tests bring many OS threads of their own (race hammers, stress runs, the SDK's
/// worker pools) takes one of a few turns before it runs: as many turns as the machine has cores,
/// at least two. Other suites run beside them as Swift Testing schedules them. The longest suites
/// go first (`goesFirst`), so that none of them starts last and alone.
///
/// A dozen such suites at once oversubscribe a small machine: their threads queue on the runtime's
/// locks (a debug build's generic-metadata lookups each take one under ThreadSanitizer) and the
/// same tests cost more CPU. A suite waiting for its turn is a suspended task; it holds no thread.
///
/// ```swift
/// @Suite("The kit passes", .serialized, .heavy(goesFirst: true))
/// struct KitTests { … }
/// ```
public struct HeavySuiteTrait: SuiteTrait, TestScoping {
    /// Whether the suite takes the next free turn before the suites waiting without it.
    public let goesFirst: Bool

    public var isRecursive: Bool { false }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        await HeavySuiteTurns.shared.take(goesFirst: goesFirst)
        do {
            try await function()
        } catch {
            await HeavySuiteTurns.shared.giveBack()
            throw error
        }
        await HeavySuiteTurns.shared.giveBack()
    }
}

extension Trait where Self == HeavySuiteTrait {
    /// The suite takes one of the heavy suites' turns before it runs (``HeavySuiteTrait``).
    public static var heavy: Self { HeavySuiteTrait(goesFirst: false) }

    /// The suite takes one of the heavy suites' turns before it runs, the next free one before
    /// the suites waiting without `goesFirst` (``HeavySuiteTrait``).
    public static func heavy(goesFirst: Bool) -> Self { HeavySuiteTrait(goesFirst: goesFirst) }
}

/// The turns heavy suites take: first come first served, the suites that go first before the others.
actor HeavySuiteTurns {
    static let shared = HeavySuiteTurns(turns: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private var free: Int
    private var waitingFirst: [CheckedContinuation<Void, Never>] = []
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(turns: Int) { free = turns }

    /// Returns when a turn is the caller's.
    func take(goesFirst: Bool) async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { turn in
            if goesFirst { waitingFirst.append(turn) } else { waiting.append(turn) }
        }
    }

    /// Passes the caller's turn to the suite that goes first and waited longest, else to the
    /// suite that waited longest, or frees it.
    func giveBack() {
        if !waitingFirst.isEmpty {
            waitingFirst.removeFirst().resume()
        } else if !waiting.isEmpty {
            waiting.removeFirst().resume()
        } else {
            free += 1
        }
    }
}
