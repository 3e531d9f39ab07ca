import Foundation
import Synchronization
@testable import IdpSdk
import IdpPrimitives
import Testing
import TestSupport

/// An instant `seconds` after a fixed start, so deadlines read as small numbers.
private func at(_ seconds: Double) -> Date { ManualClock.defaultStart.addingTimeInterval(seconds) }

/// A payload of the heap and the shard's decisions in these tests: named, equal by name, and
/// written as a string literal.
final class Timed: DeadlineHeapElement, Equatable, ExpressibleByStringLiteral, CustomStringConvertible {
    let name: String
    var deadlineHeapPlace = -1

    init(_ name: String) { self.name = name }
    convenience init(stringLiteral name: String) { self.init(name) }

    var description: String { name }

    static func == (lhs: Timed, rhs: Timed) -> Bool { lhs.name == rhs.name }
}

/// Monotonic nanoseconds from seconds.
private func monotonic(_ seconds: Double) -> UInt64 { UInt64(seconds * 1e9) }

/// The flow timeouts' parts, each a suite of its own, under one name so that
/// `swift test --filter FlowTimers` runs them all.
@Suite("Flow timers")
struct FlowTimersTests {}

extension FlowTimersTests {
    @Suite("A deadline heap, as a value")
    struct DeadlineHeapTests {
        @Test("gives the earliest deadline first, whatever order the entries came in")
        func earliestFirst() {
            // Given entries inserted out of order
            var heap = DeadlineHeap<Timed>()
            for (id, seconds) in [(1, 30.0), (2, 10.0), (3, 20.0), (4, 5.0), (5, 25.0)] {
                heap.insert(Timed("p\(id)"), deadline: at(seconds))
            }

            // When nothing is due yet, the earliest deadline is the smallest
            #expect(heap.nextDeadline == at(5))
            #expect(heap.popDue(at: at(4)).isEmpty)

            // Then everything, once due, comes out earliest first
            #expect(heap.popDue(at: at(100)) == ["p4", "p2", "p3", "p5", "p1"])
            #expect(heap.count == 0)
            #expect(heap.nextDeadline == nil)
        }

        @Test("removes an entry at once, wherever it lies, and releases its payload")
        func removesAtOnce() {
            // Given three entries, the one to remove in the middle of the order
            var heap = DeadlineHeap<Timed>()
            weak var released: Timed?
            let early: Timed = "early", late: Timed = "late"
            do {
                let middle: Timed = "middle"
                released = middle
                heap.insert(late, deadline: at(3))
                heap.insert(middle, deadline: at(2))
                heap.insert(early, deadline: at(1))

                // When it is removed, twice
                let removed = heap.remove(middle), removedAgain = heap.remove(middle)
                #expect(removed && !removedAgain)
                #expect(middle.deadlineHeapPlace == -1)
            }

            // Then the heap no longer holds it, nor keeps it alive, and the rest keep their order
            #expect(released == nil)
            let stranger = heap.remove(Timed("stranger"))
            #expect(heap.count == 2 && !stranger)
            let popped = heap.popDue(at: at(10))
            #expect(popped == [early, late])
        }

        @Test("a payload a heap holds already is not inserted again, in it or in another")
        func insertsOnce() {
            var heap = DeadlineHeap<Timed>(), other = DeadlineHeap<Timed>()
            let payload: Timed = "a"
            let first = heap.insert(payload, deadline: at(5)), again = heap.insert(payload, deadline: at(1))
            let elsewhere = other.insert(payload, deadline: at(1)), removedElsewhere = other.remove(payload)
            #expect(first && !again && !elsewhere && !removedElsewhere)
            #expect(heap.count == 1 && other.count == 0)
            #expect(heap.nextDeadline == at(5))
        }

        @Test("keeps the earliest first through five thousand inserts, removals and pops, as a sorted list of the same operations does")
        func matchesASortedList() {
            // Given a heap and a plain sorted list, fed the same seeded operations
            var heap = DeadlineHeap<Timed>()
            var record: [(deadline: Date, payload: Timed)] = []
            var random = SeededRandom(seed: 32)
            var now = at(0), mostHeld = 0
            for step in 0..<5_000 {
                switch random.next() % 10 {
                case 0..<6:
                    // an arm, with deadlines that mostly grow and sometimes fall behind
                    let deadline = now.addingTimeInterval(Double(random.next() % 10_000) / 10)
                    let payload = Timed("t\(step)")
                    heap.insert(payload, deadline: deadline)
                    record.insert((deadline, payload), at: record.firstIndex { $0.deadline > deadline } ?? record.count)
                case 6..<8 where !record.isEmpty:
                    // a cancel of any armed payload
                    let payload = record.remove(at: Int(random.next() % UInt64(record.count))).payload
                    let removed = heap.remove(payload)
                    #expect(removed)
                default:
                    // the clock moves and what is due is taken
                    now = now.addingTimeInterval(Double(random.next() % 20) / 10)
                    let due = heap.popDue(at: now)
                    let expected = record.prefix { $0.deadline <= now }
                    record.removeFirst(expected.count)
                    // Then each pop takes what the list says is due, in deadline order
                    #expect(due.map { payload in expected.first { $0.payload === payload }?.deadline } == expected.map(\.deadline))
                    #expect(Set(due.map(ObjectIdentifier.init)) == Set(expected.map { ObjectIdentifier($0.payload) }))
                }
                #expect(heap.count == record.count)
                #expect(heap.nextDeadline == record.first?.deadline)
                mostHeld = max(mostHeld, record.count)
            }
            #expect(mostHeld > 2 * DeadlineHeap<Timed>.chunkCapacity, "the run spans several chunks: \(mostHeld) held at most")
        }

        @Test("pops each due payload once, earliest first, and leaves the rest")
        func popDueOnce() {
            // Given five entries, two sharing a deadline, one removed
            var heap = DeadlineHeap<Timed>()
            let removed: Timed = "e"
            heap.insert("c", deadline: at(3))
            heap.insert("a", deadline: at(1))
            heap.insert(removed, deadline: at(5))
            heap.insert("b", deadline: at(2))
            heap.insert("b2", deadline: at(2))
            heap.remove(removed)

            // When the time reaches the third second, twice
            let first = heap.popDue(at: at(3))
            let second = heap.popDue(at: at(3))

            // Then the first pop takes the four due ones, the two equal ones between, and the second
            // takes nothing; the removed one never comes out
            #expect(first.first == "a" && first.last == "c")
            #expect(Set(first.map(\.name)) == ["a", "b", "b2", "c"] && first.count == 4)
            #expect(second.isEmpty)
            #expect(heap.popDue(at: at(100)).isEmpty)
            #expect(heap.count == 0)
        }

        /// Inserts `count` payloads, earliest last, answering each spare request after the "lock"
        /// when `answered`; returns the heap.
        private func filled(_ count: Int, answered: Bool) -> DeadlineHeap<Timed> {
            var heap = DeadlineHeap<Timed>()
            for index in 0..<count {
                heap.insert(Timed("t\(index)"), deadline: at(Double(count - index)))
                if answered, let capacity = heap.takeSpareRequest() {
                    var made: DeadlineHeap<Timed>.Chunk? = DeadlineHeap<Timed>.makeChunk(slots: capacity)
                    heap.install(&made)
                    #expect(made == nil, "a spare of the size asked for is taken")
                }
            }
            return heap
        }

        @Test("grows a chunk at a time into chunks made after its owner's lock; one that fills before its spare arrives makes them under the lock, counted")
        func growsIntoSpares() {
            // Given a heap that asks for its next chunk when its last is three quarters full
            let chunk = DeadlineHeap<Timed>.chunkCapacity
            var heap = DeadlineHeap<Timed>()
            for index in 0..<(chunk - chunk / 4 - 1) { heap.insert(Timed("t\(index)"), deadline: at(Double(index))) }
            let early = heap.takeSpareRequest()
            heap.insert("last", deadline: at(0))
            let due = heap.takeSpareRequest(), again = heap.takeSpareRequest()
            #expect(early == nil && due == chunk && again == nil, "asks once, at three quarters")

            // When storage of the wrong size is handed in, it is left to its caller
            var wrong: DeadlineHeap<Timed>.Chunk? = DeadlineHeap<Timed>.makeChunk(slots: 64)
            heap.install(&wrong)
            #expect(wrong != nil)

            // Then heaps grown to 5,000 payloads made no chunk under the lock when each request was
            // answered, and all 19 there when none was; both hold 20 chunks and keep the order
            let answered = filled(5_000, answered: true), unanswered = filled(5_000, answered: false)
            #expect(answered.capacity == 20 * chunk && answered.chunksMadeUnderLock == 0)
            #expect(unanswered.capacity == 20 * chunk && unanswered.chunksMadeUnderLock == 19)
            for var grown in [answered, unanswered] {
                let popped = grown.popDue(at: at(10_000))
                #expect(popped.map(\.name) == (0..<5_000).reversed().map { "t\($0)" })
            }
        }
    }

    @Suite("A flow timer shard's decisions, as a value")
    struct FlowTimerShardStateMachineTests {
        typealias Machine = FlowTimerShardStateMachine<Timed>

        @Test("the first arm registers the shard under a new token; later arms register nothing")
        func firstArmRegisters() {
            // Given an unregistered shard on the system clock
            var machine = Machine(pacing: .system)
            #expect(machine.registration == .unregistered)

            // When two timers are armed far ahead
            let first = machine.arm("a", at: at(60), now: at(0))
            let second = machine.arm("b", at: at(50), now: at(0))

            // Then only the first registers, under token 1
            #expect(first == .register(token: 1))
            #expect(second == ArmAction.none)
            #expect(machine.registration == .registered(token: 1))
            #expect(machine.armed == 2)
        }

        @Test("a later arm wakes the driver only for a deadline before every other, and before the driver looks again on its own")
        func wakesOnlyForEarlierSoonDeadline() {
            // Given registered shards on the system clock and on a manual clock
            var system = Machine(pacing: .system)
            var manual = Machine(pacing: .woken)
            _ = system.arm("a", at: at(10), now: at(0))
            _ = manual.arm("a", at: at(10), now: at(0))

            // When the system shard is armed beyond the linger, within it, and within it but after that
            let beyondLinger = system.arm("b", at: at(5), now: at(0))
            let withinLinger = system.arm("c", at: at(1), now: at(0))
            let afterEarliest = system.arm("d", at: at(1.5), now: at(0))

            // Then only the earliest one within the linger wakes the driver
            #expect(beyondLinger == ArmAction.none)
            #expect(withinLinger == .wake)
            #expect(afterEarliest == ArmAction.none)

            // and on a manual clock, which wakes the driver as it moves, only a deadline already due does
            let notDue = manual.arm("b", at: at(1), now: at(0))
            let due = manual.arm("c", at: at(0), now: at(0))
            #expect(notDue == ArmAction.none)
            #expect(due == .wake)
        }

        @Test("a look fires what is due, earliest first, and otherwise waits as the clock allows")
        func looks() {
            // Given timers at 29.5 s and 30 s on each pacing
            func armed(_ pacing: Machine.Pacing) -> Machine {
                var machine = Machine(pacing: pacing)
                _ = machine.arm("late", at: at(30), now: at(0))
                _ = machine.arm("early", at: at(29.5), now: at(0))
                return machine
            }
            var system = armed(.system), manual = armed(.woken), polled = armed(.polled)

            // When the driver looks before the deadlines
            // Then the system clock sleeps until the earliest, at most a second; the manual clock until
            // woken; the polled clock for the poll period
            #expect(system.look(now: at(0), monotonic: 0) == .wait(.seconds(1)))
            #expect(system.look(now: at(29), monotonic: 0) == .wait(.milliseconds(500)))
            #expect(manual.look(now: at(0), monotonic: 0) == .wait(nil))
            #expect(polled.look(now: at(0), monotonic: 0) == .wait(.milliseconds(10)))

            // and once the clock has passed both, one look fires them, earliest first, each once
            #expect(system.look(now: at(31), monotonic: 0) == .fire(["early", "late"]))
            #expect(system.armed == 0)
            #expect(system.look(now: at(31), monotonic: 0) == .wait(Machine.linger))
        }

        @Test("a shard found empty is served for the linger, then let go under its token; the next arm registers it anew")
        func lingersThenIdles() {
            // Given a registered shard whose only timer was cancelled
            var machine = Machine(pacing: .system)
            let a: Timed = "a"
            _ = machine.arm(a, at: at(60), now: at(0))
            machine.cancel(a)

            // When the driver looks, first at 0 s of monotonic time, then at 0.5 s
            let first = machine.look(now: at(0), monotonic: monotonic(0))
            #expect(machine.registration == .emptySince(0, token: 1))
            let second = machine.look(now: at(0), monotonic: monotonic(0.5))

            // Then it lingers for what is left of the two seconds
            #expect(first == .wait(.seconds(2)))
            #expect(second == .wait(.milliseconds(1500)))

            // When the two seconds have passed
            let third = machine.look(now: at(0), monotonic: monotonic(2))

            // Then the shard is let go under token 1, and the next arm registers it under token 2
            #expect(third == .idle(token: 1))
            #expect(machine.registration == .unregistered)
            #expect(machine.arm("b", at: at(60), now: at(0)) == .register(token: 2))
        }

        @Test("an arm while the shard lingers keeps its registration and ends the lingering")
        func armWhileLingering() {
            // Given a shard the driver found empty
            var machine = Machine(pacing: .system)
            let a: Timed = "a"
            _ = machine.arm(a, at: at(60), now: at(0))
            machine.cancel(a)
            _ = machine.look(now: at(0), monotonic: monotonic(0))

            // When a timer is armed
            let armed = machine.arm("b", at: at(60), now: at(0))

            // Then it registers nothing (the driver still serves the shard) and the shard is no longer
            // empty, so a look past the linger waits instead of letting it go
            #expect(armed == ArmAction.none)
            #expect(machine.registration == .registered(token: 1))
            #expect(machine.look(now: at(0), monotonic: monotonic(5)) == .wait(.seconds(1)))
        }

        @Test("a look at a shard already let go lets it go again under its latest token")
        func lookAfterIdle() {
            // Given a shard let go under token 1
            var machine = Machine(pacing: .woken)
            let a: Timed = "a"
            _ = machine.arm(a, at: at(60), now: at(0))
            machine.cancel(a)
            _ = machine.look(now: at(0), monotonic: monotonic(0))
            #expect(machine.look(now: at(0), monotonic: monotonic(3)) == .idle(token: 1))

            // When the driver looks again (a late registration left it in the driver's table)
            // Then the answer is idle under the same token
            #expect(machine.look(now: at(0), monotonic: monotonic(4)) == .idle(token: 1))
        }

        @Test("a shard that fires on the moving thread never registers, and hands out due timers in deadline order")
        func inline() {
            // Given a shard of a controlled run
            var machine = Machine(pacing: .inline)

            // When timers are armed, one already due
            let future = machine.arm("b", at: at(20), now: at(0))
            let later = machine.arm("c", at: at(30), now: at(0))
            let due = machine.arm("a", at: at(0), now: at(0))

            // Then the due one is fired at once, nothing registers
            #expect(future == ArmAction.none)
            #expect(later == ArmAction.none)
            #expect(due == .fire(["a"]))
            #expect(machine.registration == .unregistered)

            // and a moved clock takes the due ones in deadline order, each once
            #expect(machine.takeDue(at: at(25)) == ["b"])
            #expect(machine.takeDue(at: at(35)) == ["c"])
            #expect(machine.takeDue(at: at(35)).isEmpty)
        }

        typealias ArmAction = Machine.ArmAction
    }

    @Suite("The timer driver's decisions, as a value")
    struct TimerDriverStateMachineTests {
        /// A stand-in for a shard: the driver's machine only needs its identity.
        final class Shard: Sendable {}

        typealias Machine = TimerDriverStateMachine<Shard>
        typealias ShardMachine = FlowTimerShardStateMachine<Timed>

        /// A nap gathered from these waits.
        static func nap(_ waits: Duration?...) -> Machine.Nap {
            var nap = Machine.Nap()
            for wait in waits { nap.include(wait) }
            return nap
        }

        @Test("the first registration starts the thread; one while it looks makes it look again; one while it sleeps signals it")
        func registrations() {
            // Given a driver with no thread
            var machine = Machine()
            let shard = Shard(), other = Shard()

            // When a shard registers, the thread is started and looks
            #expect(machine.register(shard, key: ObjectIdentifier(shard), token: 1) == .startThread)
            #expect(machine.beginLook().count == 1)

            // When another registers while it looks, no signal is needed, but it looks again
            #expect(machine.register(other, key: ObjectIdentifier(other), token: 1) == Machine.Signal.none)
            #expect(machine.sleep(Self.nap(.seconds(1)), timedOut: false) == .lookAgain)

            // When it then looks and sleeps, a wake signals it, and its wake-up looks again
            #expect(machine.beginLook().count == 2)
            #expect(machine.sleep(Self.nap(.seconds(1)), timedOut: false) == .wait(.seconds(1)))
            #expect(machine.thread == .sleeping)
            #expect(machine.wake() == .signal)
            #expect(machine.sleep(Self.nap(.seconds(1)), timedOut: false) == .lookAgain)
        }

        @Test("a wake with no thread running does nothing")
        func wakeWithoutThread() {
            var machine = Machine()
            #expect(machine.wake() == Machine.Signal.none)
            #expect(machine.thread == .stopped)
        }

        @Test("the thread sleeps for the shortest wait; with none, until woken if a shard waits for its clock, else for the keep-alive")
        func naps() {
            #expect(Self.nap(.seconds(1), nil, .milliseconds(10)).timeout == .milliseconds(10))
            #expect(Self.nap(nil, nil).timeout == nil)
            #expect(Self.nap().timeout == Machine.keepAlive)
        }

        @Test("a spurious wake-up sleeps again; a sleep that runs out looks again while a shard is served, and stops the thread when none is")
        func sleepsAndStops() {
            // Given a thread serving one shard, asleep
            var machine = Machine()
            let shard = Shard()
            _ = machine.register(shard, key: ObjectIdentifier(shard), token: 1)
            _ = machine.beginLook()
            #expect(machine.sleep(Self.nap(nil), timedOut: false) == .wait(nil))

            // When it wakes with nothing new, it sleeps again
            #expect(machine.sleep(Self.nap(nil), timedOut: false) == .wait(nil))
            // and when its sleep runs out, it looks again, as a shard is served
            #expect(machine.sleep(Self.nap(.seconds(1)), timedOut: true) == .lookAgain)

            // When the shard is let go and the keep-alive runs out, the thread stops
            _ = machine.beginLook()
            machine.forget(ObjectIdentifier(shard), token: 1)
            #expect(machine.sleep(Self.nap(), timedOut: false) == .wait(Machine.keepAlive))
            #expect(machine.sleep(Self.nap(), timedOut: true) == .stop)
            #expect(machine.thread == .stopped)

            // and the next registration starts a thread again
            #expect(machine.register(shard, key: ObjectIdentifier(shard), token: 2) == .startThread)
        }

        @Test("a registration is forgotten only under its own token, and an older token never replaces a newer one")
        func forgetsOnlyItsToken() {
            var machine = Machine()
            let shard = Shard()
            let key = ObjectIdentifier(shard)
            _ = machine.register(shard, key: key, token: 2)
            _ = machine.register(shard, key: key, token: 1)
            #expect(machine.token(of: key) == 2)
            machine.forget(key, token: 1)
            #expect(machine.served == 1)
            machine.forget(key, token: 2)
            #expect(machine.served == 0)
        }

        /// A shard on the system clock and a driver serving it, the shard found empty for the linger
        /// (the driver's look told idle under token 1), and then an arm that finds it unregistered
        /// (told to register under token 2): what the two machines hold when the driver's forget
        /// and the arm's registration have yet to run.
        static func armDuringIdle(sourceLocation: SourceLocation = #_sourceLocation)
            -> (shard: ShardMachine, driver: Machine, object: Shard, key: ObjectIdentifier) {
            var shard = ShardMachine(pacing: .system)
            var driver = Machine()
            let object = Shard()
            let key = ObjectIdentifier(object)
            let a: Timed = "a"
            guard case .register(let token) = shard.arm(a, at: at(60), now: at(0)) else {
                Issue.record("the first arm registers", sourceLocation: sourceLocation)
                return (shard, driver, object, key)
            }
            _ = driver.register(object, key: key, token: token)
            _ = driver.beginLook()
            shard.cancel(a)
            _ = shard.look(now: at(0), monotonic: monotonic(0))
            // The driver's look decides idle under the shard's lock…
            #expect(shard.look(now: at(0), monotonic: monotonic(2)) == .idle(token: 1), sourceLocation: sourceLocation)
            // …and before the driver forgets it, an arm on another thread finds the shard unregistered.
            #expect(shard.arm("b", at: at(1), now: at(0)) == .register(token: 2), sourceLocation: sourceLocation)
            return (shard, driver, object, key)
        }

        /// Expects the shard served under token 2, the driver to look again before sleeping, and
        /// that look to fire the arm's timer when it is due.
        static func expectServedAgain(_ shard: inout ShardMachine, _ driver: inout Machine, key: ObjectIdentifier,
                                      sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(driver.token(of: key) == 2, sourceLocation: sourceLocation)
            #expect(driver.sleep(Self.nap(), timedOut: false) == .lookAgain, sourceLocation: sourceLocation)
            #expect(driver.beginLook().count == 1, sourceLocation: sourceLocation)
            #expect(shard.look(now: at(2), monotonic: monotonic(3)) == .fire(["b"]), sourceLocation: sourceLocation)
        }

        @Test("an arm that registers a shard again while the driver lets it go keeps it served, when the driver forgets first")
        func armDuringIdleForgetFirst() {
            // Given the shard let go under token 1 and registering again under token 2
            let given = Self.armDuringIdle()
            var shard = given.shard, driver = given.driver
            let object = given.object, key = given.key

            // When the driver forgets token 1, then the arm's registration arrives
            driver.forget(key, token: 1)
            #expect(driver.served == 0)
            let signal = driver.register(object, key: key, token: 2)

            // Then the shard is served under token 2, the driver looks again before sleeping, and that
            // look fires the new timer when it is due
            #expect(signal == Machine.Signal.none)
            Self.expectServedAgain(&shard, &driver, key: key)
        }

        @Test("an arm that registers a shard again while the driver lets it go keeps it served, when its registration arrives first")
        func armDuringIdleRegisterFirst() {
            // Given the shard let go under token 1 and registering again under token 2
            let given = Self.armDuringIdle()
            var shard = given.shard, driver = given.driver
            let object = given.object, key = given.key

            // When the arm's registration arrives, then the driver forgets token 1
            _ = driver.register(object, key: key, token: 2)
            driver.forget(key, token: 1)

            // Then the stale forget left the fresh registration, and the next look fires the timer
            Self.expectServedAgain(&shard, &driver, key: key)
        }

        @Test("a registration that arrives after the driver let its shard go is dropped at the next look, so the thread can still stop")
        func lateRegistration() {
            // Given a shard let go under token 1 and forgotten by the driver
            var shard = ShardMachine(pacing: .system)
            var driver = Machine()
            let object = Shard()
            let key = ObjectIdentifier(object)
            let a: Timed = "a"
            _ = shard.arm(a, at: at(60), now: at(0))
            _ = driver.register(object, key: key, token: 1)
            _ = driver.beginLook()
            shard.cancel(a)
            _ = shard.look(now: at(0), monotonic: monotonic(0))
            guard case .idle(let token) = shard.look(now: at(0), monotonic: monotonic(2)) else {
                Issue.record("the shard is let go after the linger")
                return
            }
            driver.forget(key, token: token)

            // When a delayed delivery of that registration arrives
            _ = driver.register(object, key: key, token: 1)
            #expect(driver.served == 1)

            // Then the next look at the shard lets it go under the same token, and the driver forgets it
            _ = driver.sleep(Self.nap(), timedOut: false)
            #expect(driver.beginLook().count == 1)
            guard case .idle(let again) = shard.look(now: at(0), monotonic: monotonic(3)) else {
                Issue.record("an unregistered shard is idle")
                return
            }
            driver.forget(key, token: again)
            #expect(driver.served == 0)
            #expect(driver.sleep(Self.nap(), timedOut: false) == .wait(Machine.keepAlive))
            #expect(driver.sleep(Self.nap(), timedOut: true) == .stop)
        }
    }

    @Suite("A flow timer shard on a manual clock")
    struct FlowTimerShardTests {
        /// A flow-like payload that logs its seam and its timeout, and opens a gate when it times out.
        final class Probe: FlowTimerPayload {
            let timerID: UInt64
            let log: LockedValue<[String]>
            let timedOut = Gate()
            let timeOuts = LockedValue(0)
            private let place = Atomic(-1)

            var deadlineHeapPlace: Int {
                get { place.load(ordering: .relaxed) }
                set { place.store(newValue, ordering: .relaxed) }
            }

            init(_ id: UInt64, log: LockedValue<[String]>) {
                timerID = id
                self.log = log
            }

            func timeOut() {
                timeOuts.withLock { $0 += 1 }
                log.withLock { $0.append("timeOut \(timerID)") }
                timedOut.open()
            }

            func pauseAtTimerSeam() { log.withLock { $0.append("seam \(timerID)") } }
        }

        /// A shard on a new manual clock with two probes (1 and 2) armed `first` and `second`
        /// seconds from now, both logging into `log`.
        static func twoTimers(at first: TimeInterval, _ second: TimeInterval)
            -> (clock: ManualClock, shard: FlowTimerShard<Probe>, log: LockedValue<[String]>, first: Probe, second: Probe) {
            let clock = ManualClock()
            let shard = FlowTimerShard<Probe>(clock: clock)
            let log = LockedValue<[String]>([])
            let probes = (Probe(1, log: log), Probe(2, log: log))
            shard.arm(probes.0, at: clock.now().addingTimeInterval(first))
            shard.arm(probes.1, at: clock.now().addingTimeInterval(second))
            return (clock, shard, log, probes.0, probes.1)
        }

        @Test("a payload times out once on the driver's thread when the clock passes its deadline, and a later one waits for its own")
        func firesOnceWhenClockMoves() async {
            // Given a shard on a manual clock with timers at one and two minutes
            let (clock, shard, log, first, second) = Self.twoTimers(at: 60, 120)
            #expect(shard.armed == 2)

            // When the clock passes the first minute
            clock.advance(by: .seconds(61))

            // Then the first times out (waited for, not slept on), and the second, not due, does not
            #expect(await OSThreads.run { first.timedOut.wait(timeout: stuckRunDeadline) })
            #expect(second.timeOuts.withLock { $0 } == 0)
            #expect(shard.armed == 1)

            // When the clock passes the second minute
            clock.advance(by: .seconds(60))

            // Then the second times out, and the first never again; neither passed a controller's seam
            #expect(await OSThreads.run { second.timedOut.wait(timeout: stuckRunDeadline) })
            #expect(first.timeOuts.withLock { $0 } == 1)
            #expect(second.timeOuts.withLock { $0 } == 1)
            #expect(log.withLock { $0 } == ["timeOut 1", "timeOut 2"])
            #expect(shard.armed == 0)
        }

        @Test("a cancelled payload never times out, though the clock passes its deadline")
        func cancelledNeverFires() async {
            // Given two timers on a manual clock, the earlier one cancelled
            let (clock, shard, log, cancelled, kept) = Self.twoTimers(at: 60, 90)
            shard.cancel(cancelled)

            // When the clock passes both deadlines
            clock.advance(by: .seconds(100))

            // Then the kept one times out, and the cancelled one, which would have come first, did not
            #expect(await OSThreads.run { kept.timedOut.wait(timeout: stuckRunDeadline) })
            #expect(log.withLock { $0 } == ["timeOut 2"])
            #expect(shard.armed == 0)
        }

        @Test("a shard armed with five thousand timers grows its heap into storage made after its lock: large allocations noted, none under the lock")
        func growsOutsideItsLock() async {
            await LockProfilerTurn.take {
                // Given a shard on the system clock whose lock is profiled
                let shard = FlowTimerShard<Probe>(clock: SystemClock())
                let log = LockedValue<[String]>([])
                let probes = (0..<5_000).map { Probe(UInt64($0), log: log) }
                LockProfiler.start()

                // When five thousand timers are armed far ahead, and cancelled
                for probe in probes { shard.arm(probe, at: Date().addingTimeInterval(3_600)) }
                let armed = shard.armed
                for probe in probes { shard.cancel(probe) }
                let report = LockProfiler.stopReport()

                // Then the heap grew into storage made after the lock, the larger ones noted as heavy
                // work, and none of that work fell under the shard's lock
                #expect(armed == 5_000 && shard.armed == 0)
                #expect(shard.chunksMadeUnderLock == 0)
                #expect((report.heavyWorkNoted[.largeAllocation] ?? 0) > 0, "no large allocation noted: the check was not exercised")
                let under = report.locks.filter { $0.label == "IdpSdk.FlowTimers" }.map(\.heavyWork).reduce(0, +)
                #expect(under == 0)
                #expect(log.withLock { $0 }.isEmpty)
            }
        }

        @Test("a heap that grows under a lock with no spare handed in shows as a large allocation under that lock")
        func growthUnderALockIsNoted() async {
            await LockProfilerTurn.take {
                // Given a heap behind a profiled lock whose spare requests go unanswered
                let heap = LockedValue(DeadlineHeap<Timed>(), label: "IdpSdkTests.DeadlineHeap")
                let payloads = (0..<5_000).map { Timed("t\($0)") }
                LockProfiler.start()

                // When it is filled
                for (index, payload) in payloads.enumerated() {
                    heap.withLock { _ = $0.insert(payload, deadline: at(Double(index))) }
                }
                let report = LockProfiler.stopReport()

                // Then the storage it made under the lock was noted there
                let under = report.locks.first { $0.label == "IdpSdkTests.DeadlineHeap" }
                #expect(heap.withLock { $0.chunksMadeUnderLock } == 19)
                #expect(under?.heavyWork == 19, "\(String(describing: under))")
                #expect(under?.heavyWorkKinds == [.largeAllocation])
            }
        }

        @Test("a shard that fires on move times payloads out on the moving thread, in deadline order, each after its seam")
        func firesOnMove() {
            // Given a controlled run's shard, with timers at 30 s and 20 s
            let clock = ManualClock()
            let shard = FlowTimerShard<Probe>(clock: clock, firesOnMove: true)
            let log = LockedValue<[String]>([])
            shard.arm(Probe(1, log: log), at: clock.now().addingTimeInterval(30))
            shard.arm(Probe(2, log: log), at: clock.now().addingTimeInterval(20))

            // When one already due is armed, it times out within the arm
            shard.arm(Probe(3, log: log), at: clock.now())
            #expect(log.withLock { $0 } == ["seam 3", "timeOut 3"])

            // When the clock moves past both others
            clock.advance(by: .seconds(31))

            // Then both timed out before the move returned, earliest first, each after its seam
            #expect(log.withLock { $0 } == ["seam 3", "timeOut 3", "seam 2", "timeOut 2", "seam 1", "timeOut 1"])
            #expect(shard.armed == 0)
        }
    }
}
