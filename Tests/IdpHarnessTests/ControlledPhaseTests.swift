import Foundation
import CredentialProviders
@testable import IdpHarness
import IdpPrimitives
import IdpSdk
import Synchronization
import Testing
import TestSupport

/// The lock table's decisions as a plain value: who holds what, who waits, who is woken, and what
/// the run's time ends when nothing else can go on.
@Suite("The controlled phase's lock table")
struct LockTableTests {
    final class Token: Sendable {}
    /// Kept alive, so the two objects' addresses differ.
    static let tokens = [Token(), Token(), Token()]
    let a = ControlledObject(ObjectIdentifier(Self.tokens[0]))
    let b = ControlledObject(ObjectIdentifier(Self.tokens[1]))

    @Test("a held lock makes the next asker wait; its release wakes the waiters in arrival order")
    func holdAndRelease() {
        var table = LockTable()
        let asked = [table.acquire(a, by: 0), table.acquire(a, by: 1), table.acquire(a, by: 2), table.tryAcquire(a, by: 3)]
        #expect(asked == [true, false, false, false])
        let byOther = table.release(a, by: 1)
        #expect(byOther == [], "a release by a thread that does not hold it changes nothing")
        let woken = table.release(a, by: 0)
        #expect(woken == [1, 2])
        #expect(table.holders[a] == nil)
        let tried = table.tryAcquire(a, by: 2)
        #expect(tried)
    }

    @Test("a lock asked for again by its holder waits, unless it is reentrant: then it is released after as many releases")
    func reentrancy() {
        var table = LockTable()
        table.name(a, "LockedValue<Int>")
        let asked = [table.acquire(a, by: 0), table.acquire(a, by: 0)]
        #expect(asked == [true, false])
        #expect(table.waits { "thread \($0)" }[0] == "waits for LockedValue<Int> (held by thread 0)")
        var reentrant = LockTable()
        let taken = [reentrant.acquire(b, by: 0, reentrant: true), reentrant.acquire(b, by: 0, reentrant: true), reentrant.acquire(b, by: 1, reentrant: true)]
        #expect(taken == [true, true, false])
        let first = reentrant.release(b, by: 0)
        #expect(first == [] && reentrant.holders[b]?.depth == 1)
        let second = reentrant.release(b, by: 0)
        #expect(second == [1])
    }

    @Test("a condition wait releases the lock; a signal wakes the first waiter, a broadcast every one")
    func conditionWaits() {
        var table = LockTable()
        let asked = [table.acquire(a, by: 0), table.acquire(a, by: 1)]
        let firstWait = table.wait(on: b, releasing: a, by: 0, timeout: nil)
        let again = table.acquire(a, by: 1)
        let secondWait = table.wait(on: b, releasing: a, by: 1, timeout: nil)
        let signals = [table.signal(b, all: false), table.signal(b, all: true), table.signal(b, all: true)]
        #expect(asked == [true, false] && again)
        #expect(firstWait.released == [1] && secondWait.released == [] && firstWait.waits && secondWait.waits)
        #expect(signals == [[0], [1], []])
        // A signal from outside the run with nobody waiting, on a condition the run knows, wakes
        // the next waiter at once (its look at its state and its wait are not atomic to outside
        // threads); one on a condition the run does not know is nobody's.
        table.name(b, "condition")
        _ = table.signal(b, all: true, outside: true)
        _ = table.acquire(a, by: 2)
        let woken = table.wait(on: b, releasing: a, by: 2, timeout: nil)
        _ = table.acquire(a, by: 2)
        let waits = table.wait(on: b, releasing: a, by: 2, timeout: nil)
        #expect(!woken.waits && waits.waits)
    }

    @Test("a semaphore's signal wakes its first waiter; a signal from outside with nobody waiting, on a semaphore the run knows, lets the next wait try again at once")
    func semaphores() {
        var table = LockTable()
        let waits = [table.waitOnSemaphore(a, by: 0, timeout: nil), table.waitOnSemaphore(a, by: 1, timeout: nil)]
        #expect(waits == [true, true])
        let signals = [table.signalSemaphore(a, outside: false), table.signalSemaphore(a, outside: false), table.signalSemaphore(a, outside: false)]
        #expect(signals == [[0], [1], []])
        let afterOwnSignal = table.waitOnSemaphore(a, by: 2, timeout: nil)
        #expect(afterOwnSignal, "a participant's signal with nobody waiting was the real semaphore's unit, already taken or not")
        _ = table.signalSemaphore(a, outside: false)
        _ = table.signalSemaphore(b, outside: true)
        table.name(b, "semaphore")
        _ = table.signalSemaphore(b, outside: true)
        let afterOutsideSignal = [table.waitOnSemaphore(b, by: 3, timeout: nil), table.waitOnSemaphore(b, by: 3, timeout: nil)]
        #expect(afterOutsideSignal == [false, true], "an outside signal nobody waited for, on a semaphore the run has waited on, is kept and used once")
    }

    @Test("with nothing else to run, the earliest deadline ends first, timers and timed waits alike; ties go to the one set first; untimed waits never end")
    func time() {
        var table = LockTable()
        _ = table.wait(on: a, releasing: b, by: 2, timeout: .seconds(5)).waits
        let late = table.setTimer(after: .seconds(5))
        _ = table.wait(on: b, releasing: a, by: 1, timeout: .milliseconds(2))
        let early = table.setTimer(after: .microseconds(1_500))
        _ = table.wait(on: b, releasing: a, by: 0, timeout: nil)
        #expect(table.hasTimeEvents)
        let events = [table.advance(), table.advance(), table.advance(), table.advance(), table.advance()]
        #expect(events == [.timedOut(1), .timer(early), .timedOut(2), .timer(late), nil], "1.5 ms rounds up to 2 ms, set after the 2 ms wait")
        #expect(table.now == 5_000_000_000)
        let learned = [table.tookTimeout(1), table.tookTimeout(1), table.tookTimeout(0)]
        #expect(learned == [true, false, false])
        #expect(table.waits { "thread \($0)" }[0]?.hasPrefix("waits on") == true)
    }

}

@Suite("The controlled phase: reproducers, verdicts on uncontrolled locks, the library's providers")
struct ControlledPhaseTests {
    /// The kit with only the controlled phase, in this process.
    static var settings: ProviderConformanceKit.Configuration { ControlledCalibrationTests.settings }

    @Test("a reproducer reads back as the scenario that printed it")
    func reproducerRoundTrip() throws {
        let scenario = ControlledScenario(threads: 3, calls: 2, instances: 2, horizonSeconds: 86_400, strategy: .pct(depth: 3, steps: 40),
                                          seed: 77, decisions: [0, 3, 1, 2])
        #expect(try ControlledScenario(reproducer: scenario.description) == scenario)
        let walk = ControlledScenario(threads: 1, calls: 1, instances: 1, horizonSeconds: 0, strategy: .randomWalk, seed: 0)
        #expect(try ControlledScenario(reproducer: walk.description) == walk)
    }

    @Test("a malformed reproducer is refused with what is wrong with it", arguments: [
        ("threads=3", "does not start with"),
        ("controlled/1 threads=3 calls=2 instances=2 horizon=0 strategy=walk seed=1", "no decisions="),
        ("controlled/1 threads=0 calls=2 instances=2 horizon=0 strategy=walk seed=1 decisions=-", "threads=0"),
        ("controlled/1 threads=2 calls=2 instances=2 horizon=0 strategy=pct:3 seed=1 decisions=-", "strategy=pct:3"),
        ("controlled/1 threads=2 calls=2 instances=2 horizon=0 strategy=walk seed=1 decisions=0.x", "'x'"),
    ])
    func malformedReproducer(_ reproducer: String, _ reason: String) async {
        do {
            _ = try await ProviderConformanceKit.replay(reproducer, name: "StaticCredentials", instances: .perUser) { StaticCredentials($0.credentials) }
            Issue.record("\(reproducer) was accepted")
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
        }
    }

    @Test("a provider behind an NSLock is explored as written: its lock's acquisitions are points of the schedule")
    func nsLockIsControlled() async throws {
        let report = await ProviderConformanceKit.hammer(Self.settings, name: "SessionCache", instances: .perUser) { NSLockCache($0, readsClockInside: true) }
        let check = try #require(report.check("controlled interleavings"))
        #expect(check.passed && check.exercised, "\(check.detail)")
        #expect(check.detail.contains("mutex"), "\(check.detail)")
    }

    @Test("a provider behind a lock the kit does not control, with no other point, gets a verdict that says the phase saw no lock it controls, naming the provider")
    func uncontrolledLock() async throws {
        let report = await ProviderConformanceKit.hammer(Self.settings, name: "SessionCache", instances: .perUser) { MutexCache($0, readsClockInside: false) }
        let check = try #require(report.check("controlled interleavings"))
        #expect(check.verdict == "not exercised", "\(check.detail)")
        #expect(check.detail.contains("saw no lock the kit controls in SessionCache"), "\(check.detail)")
        #expect(report.passed)
    }

    @Test("a provider whose thread blocks in a lock the kit does not control, held by another thread at a point, gets a verdict that the phase lost control, naming the wait")
    func lostControl() async throws {
        let report = await ProviderConformanceKit.hammer(Self.settings, name: "SessionCache", instances: .perUser) { MutexCache($0, readsClockInside: true) }
        let check = try #require(report.check("controlled interleavings"))
        #expect(check.verdict == "not exercised", "\(check.detail)")
        #expect(check.detail.contains("lost control of SessionCache"), "\(check.detail)")
        #expect(check.detail.contains("was blocked in a futex wait"), "\(check.detail)")
    }

    @Test("the library's locking providers run under the controlled phase: explored, and every answer right", arguments: ["CredentialStore", "MultiStepProvider", "RecordingProvider(FieldMappingProvider(CredentialStore))"])
    func libraryProviders(_ name: String) async throws {
        let report = await ProviderConformanceKit.hammer(Self.settings, name: name, instances: .perUser) { user in Self.library(name, user) }
        let check = try #require(report.check("controlled interleavings"))
        #expect(check.passed && check.exercised, "\(check.detail)")
        #expect(check.detail.contains("lock points"), "\(check.detail)")
    }

    static func library(_ name: String, _ user: ProviderConformanceKit.User) -> any IdpSdkInteractionInterface {
        let store = CredentialStore()
        store.set(user.credentials, userId: user.userId, tenantId: user.tenantId)
        switch name {
        case "MultiStepProvider":
            return MultiStepProvider.candidates { _ in user.credentials.mapValues { [$0] } }
        case "RecordingProvider(FieldMappingProvider(CredentialStore))":
            return RecordingProvider(FieldMappingProvider(store, mapping: [:]))
        default:
            return store
        }
    }

    @Test("planted: a lock table that lets a second thread take a held lock runs that thread into the real lock, and the phase loses control of a correct provider")
    func plantedLocksIgnoreHolders() async throws {
        let make = try #require(ControlledShapes.fixed.first { $0.name == "a process-wide lock over a process-wide store" }?.make)
        let fresh = ProviderConformanceKit.perUser { make($0) }
        var settings = ControlledPhase.Settings(schedules: 64, threads: 3, calls: 2, instances: 2, horizon: .seconds(86_400), seed: 1)
        let found = await ControlledPhase(settings: settings, fresh: fresh, name: "process-wide lock").run()
        #expect(found.failure == nil && found.uncontrolled == nil && found.schedules == 64 && found.lockPoints > 0)
        settings.planted = .harnessLocksIgnoreHolders
        let planted = await ControlledPhase(settings: settings, fresh: fresh, name: "process-wide lock").run()
        #expect(planted.uncontrolled?.contains("was blocked in a futex wait") == true, "\(String(describing: planted.uncontrolled))")
    }
}

/// A provider whose session cache sits behind an `NSLock`; with `readsClockInside`, it reads the
/// kit's clock while holding it.
final class NSLockCache: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `cached` is touched only with `lock` held.
    private let lock = NSLock()
    private var cached: [String: String]?
    private let user: ProviderConformanceKit.User
    private let readsClockInside: Bool

    init(_ user: ProviderConformanceKit.User, readsClockInside: Bool) {
        self.user = user
        self.readsClockInside = readsClockInside
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        lock.lock()
        if readsClockInside { _ = user.clock.now() }
        if cached == nil { cached = user.credentials }
        let values = cached ?? [:]
        lock.unlock()
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

/// A provider whose session cache sits behind a `Mutex` (Synchronization), a lock the kit does not
/// control; with `readsClockInside`, it reads the kit's clock while holding it, a point at which
/// another thread may run into the held lock.
final class MutexCache: IdpSdkInteractionInterface, Sendable {
    private let cached = Mutex<[String: String]?>(nil)
    private let user: ProviderConformanceKit.User
    private let readsClockInside: Bool

    init(_ user: ProviderConformanceKit.User, readsClockInside: Bool) {
        self.user = user
        self.readsClockInside = readsClockInside
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let values = cached.withLock { cached -> [String: String] in
            if readsClockInside { _ = user.clock.now() }
            if cached == nil { cached = user.credentials }
            return cached ?? [:]
        }
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

/// A provider that, when `blocks`, waits at its first call for a thread of its own that it starts
/// then (as a slow first call might wait for a warm-up on a loaded machine): the try is not fully
/// controlled. Then it answers as `inner` does.
final class FirstCallBlocks: IdpSdkInteractionInterface {
    private let inner: any IdpSdkInteractionInterface
    private let blocks: Bool
    private let blocked = Atomic(false)

    init(_ inner: any IdpSdkInteractionInterface, blocks: Bool) {
        self.inner = inner
        self.blocks = blocks
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if blocks, !blocked.exchange(true, ordering: .relaxed) {
            let warm = DispatchSemaphore(value: 0)
            Thread {
                usleep(50_000)
                warm.signal()
            }.start()
            warm.wait()
        }
        return inner.provideCredentials(interactionData)
    }
}

@Suite("The controlled phase's shrinking on a loaded machine")
struct ControlledShrinkingTests {
    /// The phase on check-then-refresh, its schedule runs counted from 0; from run `first` on,
    /// every other run's first call waits for a thread of its own, which the kit does not
    /// schedule.
    static func phase(blockingFrom first: Int?, planted: PlantedBug? = nil) async throws -> ControlledPhase.Findings {
        let make = try #require(ControlledShapes.broken.first { $0.name == "check-then-refresh" }?.make)
        let runs = LockedValue(0)
        let fresh = ProviderConformanceKit.perUser { user in
            let run = runs.withLock { runs in
                defer { runs += 1 }
                return runs
            }
            let blocks = first.map { run >= $0 && ($0 - run) % 2 == 0 } ?? false
            return FirstCallBlocks(make(user), blocks: blocks)
        }
        var settings = ControlledPhase.Settings(schedules: 64, threads: 2, calls: 1, instances: 1, horizon: .seconds(86_400), seed: 7)
        settings.planted = planted
        return await ControlledPhase(settings: settings, fresh: fresh, name: "check-then-refresh").run()
    }

    @Test("a try not fully controlled while the failure is shrunk is run again, so the reproducer is the one a fully controlled run gives; planted, that try counts as a pass and the reproducer changes")
    func blockedTriesDoNotChangeTheReproducer() async throws {
        // Given the failure and its shrunk schedule on a quiet machine
        let quiet = try #require(try await Self.phase(blockingFrom: nil).failure)
        #expect(quiet.shrunk.decisions != quiet.found.decisions, "shrinking took decisions away")

        // When the first try of every schedule the shrinking runs is not fully controlled
        let blocked = try await Self.phase(blockingFrom: quiet.schedule)
        let planted = try await Self.phase(blockingFrom: quiet.schedule, planted: .harnessShrinkTakesStallsAsPasses)

        // Then the same schedule fails and shrinks to the same reproducer; planted, it does not
        #expect(blocked.failure?.schedule == quiet.schedule && blocked.uncontrolled == nil)
        #expect(blocked.failure?.shrunk.decisions == quiet.shrunk.decisions)
        #expect(blocked.failure?.shrunk.threads == quiet.shrunk.threads)
        #expect(planted.failure?.schedule == quiet.schedule)
        #expect(planted.failure?.shrunk.decisions != quiet.shrunk.decisions, "\(String(describing: planted.failure?.shrunk.decisions))")
    }

    /// The phase with the kit's settings (3 threads, 2 calls, 2 instances, seed 1) on the broken
    /// calibration shape `name`, each provider made by `wrap` around the shape's, given the
    /// number of the schedule run it is made for (from 0).
    static func kitPhase(_ name: String, planted: PlantedBug? = nil,
                         wrap: @escaping @Sendable (Int, any IdpSdkInteractionInterface) -> any IdpSdkInteractionInterface = { $1 })
        async throws -> ControlledPhase.Findings {
        let make = try #require(ControlledCalibrationTests.broken.first { $0.name == name }?.make)
        let runs = LockedValue(0)
        let fresh = ProviderConformanceKit.perUser { user in
            let run = runs.withLock { runs in
                defer { runs += 1 }
                return runs
            }
            return wrap(run, make(user))
        }
        var settings = ControlledPhase.Settings(schedules: 64, threads: 3, calls: 2, instances: 2, horizon: .seconds(86_400), seed: 1)
        settings.planted = planted
        return await ControlledPhase(settings: settings, fresh: fresh, name: name).run()
    }

    @Test("a failure shrunk to fewer threads and calls replays without divergence; planted, the prefix taken from the schedule as found names a participant the smaller schedule does not have")
    func shrunkPrefixReplays() async throws {
        let make = try #require(ControlledCalibrationTests.broken.first { $0.name == "check-then-refresh" }?.make)
        for planted in [nil, PlantedBug.harnessShrinksAlongTheFoundSchedule] {
            let failure = try #require(try await Self.kitPhase("check-then-refresh", planted: planted).failure)
            #expect(failure.shrunk.threads < failure.found.threads, "\(failure.shrunk)")
            let replay = try await ProviderConformanceKit.replay(failure.shrunk.description, times: 3, name: "check-then-refresh", instances: .perUser) { make($0) }
            let divergences = replay.runs.compactMap(\.divergence)
            if planted == nil {
                #expect(replay.failures == 3 && divergences.isEmpty, "\(replay)")
            } else {
                #expect(divergences.count == 3, "planted: \(replay)")
            }
        }
    }

    @Test("a failed verdict describes the shrunk schedule's own failure: what its reproducer replays, no thread beyond its threads")
    func shrunkFailureDescribed() async throws {
        let make = try #require(ControlledCalibrationTests.broken.first { $0.name == "check-then-refresh" }?.make)
        let report = await ControlledCalibrationTests.kitRun("check-then-refresh", make)
        let check = try #require(report.check("controlled interleavings"), "\(report)")
        let reproducer = try #require(report.controlledReproducer, "\(check.detail)")
        let replay = try await ProviderConformanceKit.replay(reproducer, times: 1, name: "check-then-refresh", instances: .perUser) { make($0) }
        let replayed = try #require(replay.runs.first { $0.failed }, "\(replay)")
        #expect(check.detail.contains("shrunk, it fails with: " + replayed.problems.prefix(5).joined(separator: "; ")), "\(check.detail) / \(replayed.problems)")
        let threads = try ControlledScenario(reproducer: reproducer).threads
        #expect(!check.detail.contains("thread \(threads),"), "\(check.detail)")
    }

    @Test("one point more in the first schedule leaves the failing schedule and its reproducer as they were; planted, PCT's steps follow every decision and the reproducer changes")
    func firstScheduleOnePointMore() async throws {
        let shape = "an actor's read-modify-write across an await"
        for planted in [nil, PlantedBug.harnessStepsFollowEveryDecision] {
            let plain = try #require(try await Self.kitPhase(shape, planted: planted).failure)
            let onePointMore = try #require(try await Self.kitPhase(shape, planted: planted) { run, inner in
                run == 0 ? FirstCallTakesALock(inner) : inner
            }.failure)
            if planted == nil {
                #expect(onePointMore.schedule == plain.schedule && onePointMore.shrunk.description == plain.shrunk.description,
                        "\(plain.shrunk) / \(onePointMore.shrunk)")
            } else {
                #expect(onePointMore.shrunk.description != plain.shrunk.description, "planted: \(plain.shrunk)")
            }
        }
    }
}

/// A provider whose first call takes a lock of the kit's once more (one point more in its
/// schedule), then answers as `inner` does.
final class FirstCallTakesALock: IdpSdkInteractionInterface {
    private let inner: any IdpSdkInteractionInterface
    private let lock = ControlledLock(name: "FirstCallTakesALock")
    private let taken = Atomic(false)

    init(_ inner: any IdpSdkInteractionInterface) {
        self.inner = inner
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if !taken.exchange(true, ordering: .relaxed) {
            lock.lock()
            lock.unlock()
        }
        return inner.provideCredentials(interactionData)
    }
}
