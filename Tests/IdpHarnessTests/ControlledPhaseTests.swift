import Foundation
import CredentialProviders
@testable import IdpHarness
import IdpPrimitives
import IdpSdk
import Synchronization
import Testing
import TestSupport

/// The lock table's decisions as a plain value: who holds what, who waits, who is woken.
@Suite("The controlled phase's lock table")
struct LockTableTests {
    final class Token {}
    let a = ObjectIdentifier(Token())
    let b = ObjectIdentifier(Token())

    @Test("a held lock makes the next asker wait; its release wakes the waiters in arrival order")
    func holdAndRelease() {
        var table = LockTable()
        let asked = [table.acquire(a, name: "A", by: 0), table.acquire(a, name: "A", by: 1), table.acquire(a, name: "A", by: 2),
                     table.tryAcquire(a, name: "A", by: 3)]
        #expect(asked == [true, false, false, false])
        let byOther = table.release(a, by: 1)
        #expect(byOther == [], "a release by a thread that does not hold it changes nothing")
        let woken = table.release(a, by: 0)
        #expect(woken == [1, 2])
        #expect(table.holders[a] == nil)
        let tried = table.tryAcquire(a, name: "A", by: 2)
        #expect(tried)
    }

    @Test("a lock asked for again by its holder waits: the controlled locks are not reentrant")
    func notReentrant() {
        var table = LockTable()
        let asked = [table.acquire(a, name: "A", by: 0), table.acquire(a, name: "A", by: 0)]
        #expect(asked == [true, false])
        #expect(table.waits[0] == "waits for A (held by thread 0)")
    }

    @Test("a condition wait releases the lock; a signal wakes the first waiter, a broadcast every one")
    func conditionWaits() {
        var table = LockTable()
        let asked = [table.acquire(a, name: "A", by: 0), table.acquire(a, name: "A", by: 1)]
        let firstWait = table.wait(on: b, releasing: a, by: 0, timed: false)
        let again = table.acquire(a, name: "A", by: 1)
        let secondWait = table.wait(on: b, releasing: a, by: 1, timed: false)
        let signals = [table.signal(b, all: false), table.signal(b, all: true), table.signal(b, all: true)]
        #expect(asked == [true, false] && again)
        #expect(firstWait == [1] && secondWait == [])
        #expect(signals == [[0], [1], []])
    }

    @Test("with nothing else to run, the lowest-numbered timed waiter times out; untimed waits never do")
    func timeouts() {
        var table = LockTable()
        _ = table.wait(on: a, releasing: b, by: 2, timed: true)
        _ = table.wait(on: b, releasing: a, by: 1, timed: true)
        _ = table.wait(on: b, releasing: a, by: 0, timed: false)
        let timedOut = [table.timeOutOne(), table.timeOutOne(), table.timeOutOne()]
        #expect(timedOut == [1, 2, nil])
        let learned = [table.tookTimeout(1), table.tookTimeout(1), table.tookTimeout(0)]
        #expect(learned == [true, false, false])
        #expect(table.waits[0]?.hasPrefix("waits on") == true)
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
        ("controlled/1 threads=2 calls=2 instances=2 horizon=0 strategy=walk seed=1 decisions=0.5", "participant 5"),
        ("controlled/1 threads=2 calls=2 instances=2 horizon=0 strategy=walk seed=1 decisions=0.x", "'x'"),
    ])
    func malformedReproducer(_ reproducer: String, _ reason: String) async {
        do {
            _ = try await ProviderConformanceKit.replay(reproducer, name: "StaticCredentials") { StaticCredentials($0.credentials) }
            Issue.record("\(reproducer) was accepted")
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
        }
    }

    @Test("a provider behind an NSLock gets a verdict that says the phase saw no lock it controls, naming the provider")
    func uncontrolledLock() async throws {
        let report = await ProviderConformanceKit.hammer(Self.settings, name: "SessionCache") { NSLockCache($0, readsClockInside: false) }
        let check = try #require(report.check("controlled interleavings"))
        #expect(check.verdict == "not exercised", "\(check.detail)")
        #expect(check.detail.contains("saw no lock the kit controls in SessionCache"), "\(check.detail)")
        #expect(report.passed)
    }

    @Test("a provider whose thread blocks in an NSLock another thread holds at a point gets a verdict that the phase lost control")
    func lostControl() async throws {
        let report = await ProviderConformanceKit.hammer(Self.settings, name: "SessionCache") { NSLockCache($0, readsClockInside: true) }
        let check = try #require(report.check("controlled interleavings"))
        #expect(check.verdict == "not exercised", "\(check.detail)")
        #expect(check.detail.contains("lost control of SessionCache"), "\(check.detail)")
    }

    @Test("the library's locking providers run under the controlled phase: explored, and every answer right", arguments: ["CredentialStore", "MultiStepProvider", "RecordingProvider(FieldMappingProvider(CredentialStore))"])
    func libraryProviders(_ name: String) async throws {
        let report = await ProviderConformanceKit.hammer(Self.settings, name: name) { user in Self.library(name, user) }
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
        settings.planted = .locksIgnoreHolders
        let planted = await ControlledPhase(settings: settings, fresh: fresh, name: "process-wide lock").run()
        #expect(planted.uncontrolled?.contains("stayed away from a seam") == true, "\(String(describing: planted.uncontrolled))")
    }
}

/// A provider whose session cache sits behind an `NSLock`, a lock the kit does not control; with
/// `readsClockInside`, it reads the kit's clock while holding it.
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

/// A provider that, when given a `stall`, stays away from the kit's points for that long at its
/// first call (as a slow first call on a loaded machine does), then answers as `inner` does.
final class FirstCallStall: IdpSdkInteractionInterface {
    private let inner: any IdpSdkInteractionInterface
    private let stall: Duration?
    private let stalled = Atomic(false)

    init(_ inner: any IdpSdkInteractionInterface, stall: Duration?) {
        self.inner = inner
        self.stall = stall
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        if let stall, !stalled.exchange(true, ordering: .relaxed) { Thread.sleep(forTimeInterval: stall.timeInterval) }
        return inner.provideCredentials(interactionData)
    }
}

@Suite("The controlled phase's shrinking on a loaded machine")
struct ControlledShrinkingTests {
    /// The phase on check-then-refresh, its schedule runs counted from 0; from run `first` on,
    /// every other run's first call stalls past the stall timeout.
    static func phase(stallingFrom first: Int?, planted: ControlledPhase.Plant? = nil) async throws -> ControlledPhase.Findings {
        let make = try #require(ControlledShapes.broken.first { $0.name == "check-then-refresh" }?.make)
        let runs = LockedValue(0)
        let fresh = ProviderConformanceKit.perUser { user in
            let run = runs.withLock { runs in
                defer { runs += 1 }
                return runs
            }
            let stalls = first.map { run >= $0 && ($0 - run) % 2 == 0 } ?? false
            return FirstCallStall(make(user), stall: stalls ? .milliseconds(1_200) : nil)
        }
        var settings = ControlledPhase.Settings(schedules: 64, threads: 2, calls: 1, instances: 1, horizon: .seconds(86_400), seed: 7)
        settings.stallTimeout = .milliseconds(500)
        settings.planted = planted
        return await ControlledPhase(settings: settings, fresh: fresh, name: "check-then-refresh").run()
    }

    @Test("a try that stalls while the failure is shrunk is run again, so the reproducer is the one a quiet machine gives; planted, the stall counts as a pass and the reproducer changes")
    func stallsDoNotChangeTheReproducer() async throws {
        // Given the failure and its shrunk schedule on a quiet machine
        let quiet = try #require(try await Self.phase(stallingFrom: nil).failure)
        #expect(quiet.shrunk.decisions != quiet.found.decisions, "shrinking took decisions away")

        // When the first try of every schedule the shrinking runs stalls past the stall timeout
        let stalled = try await Self.phase(stallingFrom: quiet.schedule)
        let planted = try await Self.phase(stallingFrom: quiet.schedule, planted: .shrinkTakesStallsAsPasses)

        // Then the same schedule fails and shrinks to the same reproducer; planted, it does not
        #expect(stalled.failure?.schedule == quiet.schedule && stalled.uncontrolled == nil)
        #expect(stalled.failure?.shrunk.decisions == quiet.shrunk.decisions)
        #expect(stalled.failure?.shrunk.threads == quiet.shrunk.threads)
        #expect(planted.failure?.schedule == quiet.schedule)
        #expect(planted.failure?.shrunk.decisions != quiet.shrunk.decisions, "\(String(describing: planted.failure?.shrunk.decisions))")
    }
}
