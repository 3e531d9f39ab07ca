import Foundation
@testable import IdpHarness
import IdpPrimitives
import Synchronization
import Testing
import TestSupport

/// What the OS says a thread does, as the controlled scheduler reads it: running, asleep in a wait
/// that ends on its own, or blocked in one only another thread ends, with the lock's owner where
/// the lock records it.
@Suite("The OS's view of a thread: running, sleeping, or blocked and on whose lock")
struct ThreadActivityTests {
    /// A thread that reports its id, then runs `body`; the test reads the OS's view of it until
    /// `matches` holds (a deadline for a stuck test, not an expected time), then lets it go
    /// (`release`, and `letGo` for what the body waits for) from the observing OS thread, so a body
    /// that computes stops at once, not when the test's task next gets a thread of the pool.
    static func observe(_ body: @escaping @Sendable (_ release: Gate) -> Void, until matches: @escaping @Sendable (ThreadActivity) -> Bool,
                        letGo: @escaping @Sendable () -> Void = {}) async -> ThreadActivity? {
        let tid = LockedValue<Int32?>(nil)
        let release = Gate()
        let done = Gate()
        Thread {
            tid.withLock { $0 = ThreadActivity.currentThreadID }
            body(release)
            done.open()
        }.start()
        let seen = LockedValue<ThreadActivity?>(nil)
        let matched = await eventuallyOnOSThread {
            guard let id = tid.withLock({ $0 }) else { return false }
            let activity = ThreadActivity.read(id)
            seen.withLock { $0 = activity }
            guard matches(activity) else { return false }
            release.open()
            letGo()
            return true
        }
        if !matched {
            release.open()
            letGo()
        }
        done.wait(timeout: .seconds(600))
        return matched ? seen.withLock { $0 } : nil
    }

    @Test("with a thread of the process computing, the OS does not show the process idle")
    func computingThreadKeepsTheProcessBusy() async {
        // Given a thread that computes until the test lets it go
        let release = Gate(), started = Gate()
        Thread {
            started.open()
            while !release.wait(timeout: .zero) {}
        }.start()
        // When another thread asks whether any thread but itself runs
        let idle = await OSThreads.run { () -> Bool in
            started.wait(timeout: .seconds(600))
            let seen = ThreadActivity.noOtherThreadRuns(excluding: ThreadActivity.currentThreadID)
            release.open()
            return seen
        }
        // Then it sees the computing one (running or runnable at every look)
        #expect(!idle)
    }

    @Test("a thread computing is running")
    func running() async {
        let seen = await Self.observe({ release in
            while !release.wait(timeout: .zero) {}
        }, until: { $0 == .running })
        #expect(seen == .running)
    }

    @Test("a thread in usleep or in a wait with a timeout is sleeping: it ends on its own")
    func sleeping() async {
        let sleep = await Self.observe({ release in
            while !release.wait(timeout: .zero) { usleep(50_000) }
        }, until: { if case .sleeping = $0 { true } else { false } })
        #expect(sleep != nil)
        let timed = await Self.observe({ release in
            let never = DispatchSemaphore(value: 0)
            while !release.wait(timeout: .zero) { _ = never.wait(timeout: .now() + .milliseconds(200)) }
        }, until: { if case .sleeping = $0 { true } else { false } })
        #expect(timed != nil)
    }

    @Test("a thread waiting on a semaphore is blocked with no owner, and the wait names the function or library it waits in")
    func blockedWithoutOwner() async throws {
        let semaphore = DispatchSemaphore(value: 0)
        let seen = await Self.observe({ _ in semaphore.wait() },
                                      until: { if case .blocked = $0 { true } else { false } }, letGo: { semaphore.signal() })
        let blocked = try #require(seen)
        guard case .blocked(let what, let owner) = blocked else { Issue.record("\(blocked)"); return }
        #expect(owner == nil)
        #expect(what.hasPrefix("a futex wait (operation ") && what.contains(") in ") && !what.hasSuffix(" in "), "\(what)")
    }

    @Test("a thread waiting for a pthread mutex another thread holds is blocked, and the mutex names that thread as its owner")
    func blockedOnPthreadMutex() async throws {
        let mutex = Unverified(UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1))
        pthread_mutex_init(mutex.value, nil)
        let holding = Gate(), held = Gate(), released = Gate()
        let holder = LockedValue<Int32>(0)
        Thread {
            pthread_mutex_lock(mutex.value)
            holder.withLock { $0 = ThreadActivity.currentThreadID }
            held.open()
            holding.wait(timeout: .seconds(600))
            pthread_mutex_unlock(mutex.value)
            released.open()
        }.start()
        held.wait(timeout: .seconds(600))
        let seen = await Self.observe({ _ in
            pthread_mutex_lock(mutex.value)
            pthread_mutex_unlock(mutex.value)
        }, until: { if case .blocked = $0 { true } else { false } }, letGo: { holding.open() })
        released.wait(timeout: .seconds(600))
        let blocked = try #require(seen)
        #expect(blocked == .blocked("a futex wait (operation 0)", owner: holder.withLock { $0 }), "\(blocked)")
    }

    @Test("a thread waiting for a Mutex another thread holds is blocked, and the futex names that thread as its owner")
    func blockedOnMutex() async throws {
        let lock = Mutex(0)
        let holding = Gate(), held = Gate()
        let holder = LockedValue<Int32>(0)
        Thread {
            lock.withLock { _ in
                holder.withLock { $0 = ThreadActivity.currentThreadID }
                held.open()
                holding.wait(timeout: .seconds(600))
            }
        }.start()
        held.wait(timeout: .seconds(600))
        let seen = await Self.observe({ _ in
            lock.withLock { _ in }
        }, until: { if case .blocked = $0 { true } else { false } }, letGo: { holding.open() })
        let blocked = try #require(seen)
        guard case .blocked(_, let owner) = blocked else { return }
        #expect(owner == holder.withLock { $0 }, "\(blocked)")
    }

    @Test("a thread waiting on a semaphore with no timeout is blocked, with no owner to name")
    func blockedOnSemaphore() async throws {
        let semaphore = DispatchSemaphore(value: 0)
        let seen = await Self.observe({ _ in
            semaphore.wait()
        }, until: { if case .blocked = $0 { true } else { false } }, letGo: { semaphore.signal() })
        let blocked = try #require(seen)
        guard case .blocked(_, let owner) = blocked else { return }
        #expect(owner == nil, "\(blocked)")
    }

    @Test("a thread that is gone reads as gone")
    func gone() async {
        let tid = LockedValue<Int32>(0)
        let done = Gate()
        Thread {
            tid.withLock { $0 = ThreadActivity.currentThreadID }
            done.open()
        }.start()
        done.wait(timeout: .seconds(600))
        let ended = await eventually { ThreadActivity.read(tid.withLock { $0 }) == .gone }
        #expect(ended)
    }
}
