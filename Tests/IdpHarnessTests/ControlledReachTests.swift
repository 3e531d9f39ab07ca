import Dispatch
import Foundation
import CredentialProviders
@testable import IdpHarness
import IdpPrimitives
import IdpSdk
import Synchronization
import Testing
import TestSupport

/// What the controlled phase reaches in providers written as users write them — tasks and actors,
/// `asyncAfter`, `Task.sleep`, `DispatchSemaphore` — and what it reports as not exercised, naming
/// it: a dispatch queue, a thread of the provider's own, a dispatch source.
@Suite("The controlled phase reaches tasks, actors, semaphores and timers, and names what it does not schedule", .heavy)
struct ControlledReachTests {
    static var settings: ProviderConformanceKit.Configuration { ControlledCalibrationTests.settings }

    /// What the controlled phase, at the kit's defaults, finds with a bug `planted` in it.
    static func planted(_ planted: PlantedBug, _ name: String,
                        _ make: @escaping @Sendable (ProviderConformanceKit.User) async -> any IdpSdkInteractionInterface) async -> ControlledPhase.Findings {
        let fresh = ProviderConformanceKit.perUser { await make($0) }
        let settings = ControlledPhase.Settings(schedules: 64, threads: 3, calls: 2, instances: 2, horizon: .seconds(86_400), seed: 1, planted: planted)
        return await ControlledPhase(settings: settings, fresh: fresh, name: name).run()
    }

    /// The "controlled interleavings" check of a kit run with only the controlled phase.
    static func check(_ name: String, _ make: @escaping @Sendable (ProviderConformanceKit.User) async -> any IdpSdkInteractionInterface) async throws -> ConformanceReport.Check {
        let report = await ProviderConformanceKit.hammer(settings, name: name, instances: .perUser) { await make($0) }
        let check = try #require(report.check("controlled interleavings"))
        print("controlled reach: \(name): \(check.verdict): \(check.detail)")
        return check
    }

    @Test("AsyncCredentialBridge is explored under control, its tasks' jobs scheduled, and passes")
    func asyncBridge() async throws {
        let check = try await Self.check("AsyncCredentialBridge") { user in
            AsyncCredentialBridge(timeout: .seconds(5)) { _ in
                await Task.yield()
                return user.credentials
            }
        }
        #expect(check.passed && check.exercised, "\(check.detail)")
        #expect(check.detail.contains("jobs of tasks and actors"), "\(check.detail)")
    }

    @Test("VaultProvider is explored under control, its actor's jobs scheduled, and passes")
    func vaultProvider() async throws {
        let check = try await Self.check("VaultProvider") { user in
            let vault = CredentialVault()
            await vault.store(user.credentials, userId: user.userId, tenantId: user.tenantId)
            return VaultProvider(vault: vault, timeout: .seconds(5))
        }
        #expect(check.passed && check.exercised, "\(check.detail)")
        #expect(check.detail.contains("jobs of tasks and actors"), "\(check.detail)")
    }

    @Test("a provider that takes its NSRecursiveLock again while it holds it is explored and passes: the lock is reentrant in the schedule too")
    func recursiveLock() async throws {
        let check = try await Self.check("RecursiveCache") { RecursiveLockCache($0) }
        #expect(check.passed && check.exercised, "\(check.detail)")
        #expect(check.detail.contains("mutex"), "\(check.detail)")
    }

    @Test("a correct provider that waits on the house condition for an asyncAfter timer's signal passes, the timer run on the schedule's time")
    func timerSignal() async throws {
        let check = try await Self.check("TimerSignalled") { TimerSignalledProvider($0, timer: .asyncAfter) }
        #expect(check.passed && check.exercised, "\(check.detail)")
        #expect(check.detail.contains("timer"), "\(check.detail)")
    }

    @Test("a correct provider that waits for Task.sleep in a task passes, the sleep run on the schedule's time")
    func taskSleep() async throws {
        let check = try await Self.check("TaskSleep") { TimerSignalledProvider($0, timer: .taskSleep) }
        #expect(check.passed && check.exercised, "\(check.detail)")
        #expect(check.detail.contains("timer"), "\(check.detail)")
    }

    @Test("a correct provider that waits on the house condition for a dispatch source timer's signal is no deadlock: not exercised, naming the dispatch source")
    func dispatchSourceSignal() async throws {
        let check = try await Self.check("SourceSignalled") { TimerSignalledProvider($0, timer: .dispatchSource) }
        #expect(check.passed && !check.exercised, "\(check.detail)")
        #expect(check.detail.contains("a dispatch source"), "\(check.detail)")
        #expect(!check.detail.contains("deadlock"), "\(check.detail)")
    }

    @Test("a provider that hands work to a dispatch queue, or to a thread of its own, is not exercised, naming what it used; planted, it is graded as explored",
          arguments: [OutsideWorkProvider.Kind.queue, .thread])
    func outsideWork(_ kind: OutsideWorkProvider.Kind) async throws {
        let check = try await Self.check("OutsideWork") { OutsideWorkProvider($0, kind: kind) }
        #expect(check.passed && !check.exercised, "\(check.detail)")
        #expect(check.detail.contains(kind == .queue ? "DispatchQueue.async" : "a thread it started"), "\(check.detail)")
        #expect(check.detail.contains("thread 0") || check.detail.contains("thread 1") || check.detail.contains("thread 2"), "names where: \(check.detail)")
        let planted = await Self.planted(.harnessGradesUncontrolledAsExplored, "OutsideWork") { OutsideWorkProvider($0, kind: kind) }
        #expect(planted.uncontrolled == nil && planted.schedules == 64, "planted: graded as explored")
    }

    @Test("a correct provider whose calls wait for a thread its initialiser started is no deadlock: not exercised, naming the thread")
    func threadStartedByTheFactory() async throws {
        let check = try await Self.check("BackgroundReady") { BackgroundReadyProvider($0) }
        #expect(check.passed && !check.exercised, "\(check.detail)")
        #expect(check.detail.contains("the provider's factory started a thread"), "\(check.detail)")
        #expect(!check.detail.contains("deadlock"), "\(check.detail)")
    }

    @Test("a provider whose thread takes its own lock twice (a pthread mutex the executable calls, which the kit does not control) is reported at once: blocked on a lock its own thread holds")
    func lockTakenTwice() async throws {
        let check = try await Self.check("InterceptorDoubleLock") { InterceptorDoubleLockProvider(user: $0) }
        #expect(check.passed && !check.exercised, "\(check.detail)")
        #expect(check.detail.contains("on a lock its own thread holds"), "\(check.detail)")
    }

    @Test("a provider slow to reach its next point, runnable all along, is waited for and explored; planted, the slow thread is taken for a blocked one")
    func slowIsNotBlocked() async throws {
        let check = try await Self.check("SlowCache") { SlowCache($0) }
        #expect(check.passed && check.exercised, "\(check.detail)")
        let planted = await Self.planted(.harnessTakesRunnableForBlocked, "SlowCache") { SlowCache($0) }
        #expect(planted.uncontrolled?.contains("planted: a thread slow to reach its next point") == true, "planted: \(String(describing: planted.uncontrolled))")
    }
}

/// A correct provider that, at each call, has a timer signal a house condition a moment later and
/// waits on it: through `asyncAfter`, through `Task.sleep` in a task, or through a dispatch source
/// timer, which the phase does not schedule.
final class TimerSignalledProvider: IdpSdkInteractionInterface, Sendable {
    enum Timer: Sendable { case asyncAfter, taskSleep, dispatchSource }

    private let user: ProviderConformanceKit.User
    private let timer: Timer

    init(_ user: ProviderConformanceKit.User, timer: Timer) {
        self.user = user
        self.timer = timer
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let fired = ConditionLockedValue(false)
        let signal: @Sendable () -> Void = {
            fired.withLock { $0 = true }
            fired.broadcast()
        }
        switch timer {
        case .asyncAfter:
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20), execute: signal)
        case .taskSleep:
            Task {
                try? await Task.sleep(for: .milliseconds(20))
                signal()
            }
        case .dispatchSource:
            let source = DispatchSource.makeTimerSource(queue: .global())
            source.schedule(deadline: .now() + .milliseconds(20))
            source.setEventHandler {
                signal()
                source.cancel()
            }
            source.resume()
        }
        fired.wait { fired, _ in fired ? .done(()) : .wait(timeout: nil) }
        return StaticCredentials(user.credentials).provideCredentials(interactionData)
    }
}

/// A correct provider that hands a log line to work the phase does not schedule before it
/// answers: a dispatch queue, or a thread of its own.
final class OutsideWorkProvider: IdpSdkInteractionInterface, Sendable {
    enum Kind: Sendable, CustomStringConvertible {
        case queue, thread

        var description: String { self == .queue ? "a dispatch queue" : "a thread" }
    }

    private let user: ProviderConformanceKit.User
    private let kind: Kind
    private let answered = LockedValue(0)
    private static let log = DispatchQueue(label: "OutsideWorkProvider.log")

    init(_ user: ProviderConformanceKit.User, kind: Kind) {
        self.user = user
        self.kind = kind
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let count = answered.withLock { count in
            count += 1
            return count
        }
        switch kind {
        case .queue: Self.log.async { _ = count }
        case .thread: Thread { _ = count }.start()
        }
        return StaticCredentials(user.credentials).provideCredentials(interactionData)
    }
}

/// A correct provider whose calls compute for a while (5 ms, running all along) between two
/// points: a slow thread, never a blocked one.
final class SlowCache: IdpSdkInteractionInterface, Sendable {
    private let user: ProviderConformanceKit.User
    private let cached = LockedValue<[String: String]?>(nil)

    init(_ user: ProviderConformanceKit.User) { self.user = user }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let values = cached.withLock { cached in
            if cached == nil { cached = user.credentials }
            return cached ?? [:]
        }
        let end = ContinuousClock.now + .milliseconds(5)
        var spins = 0
        while ContinuousClock.now < end { spins &+= 1 }
        _ = cached.withLock { $0 }
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}

/// A correct provider whose initialiser starts a thread that makes it ready a moment later; every
/// call waits, on the house condition, until it is.
final class BackgroundReadyProvider: IdpSdkInteractionInterface, Sendable {
    private let user: ProviderConformanceKit.User
    private let ready = ConditionLockedValue(false)

    init(_ user: ProviderConformanceKit.User) {
        self.user = user
        let ready = self.ready
        Thread {
            usleep(20_000)
            ready.withLock { $0 = true }
            ready.broadcast()
        }.start()
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        ready.wait { ready, _ in ready ? .done(()) : .wait(timeout: nil) }
        return StaticCredentials(user.credentials).provideCredentials(interactionData)
    }
}

/// A correct provider whose cache is behind an `NSRecursiveLock`, taken again inside its own
/// section (a helper that locks too), with a read of the kit's clock inside.
final class RecursiveLockCache: IdpSdkInteractionInterface, @unchecked Sendable {
    // Sound: `cached` is touched only with `lock` held.
    private let lock = NSRecursiveLock()
    private var cached: [String: String]?
    private let user: ProviderConformanceKit.User

    init(_ user: ProviderConformanceKit.User) { self.user = user }

    private func fill() {
        lock.lock()
        defer { lock.unlock() }
        if cached == nil { cached = user.credentials }
    }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        lock.lock()
        _ = user.clock.now()
        fill()
        let values = cached ?? [:]
        lock.unlock()
        return StaticCredentials(values).provideCredentials(interactionData)
    }
}
