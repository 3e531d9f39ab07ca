import Foundation
@testable import IdpSdk
import IdpPrimitives
import Testing
import TestSupport

/// An instant `seconds` after a fixed start, so deadlines read as small numbers.
private func at(_ seconds: Double) -> Date { ManualClock.defaultStart.addingTimeInterval(seconds) }

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
            var heap = DeadlineHeap<String>()
            for (id, seconds) in [(1, 30.0), (2, 10.0), (3, 20.0), (4, 5.0), (5, 25.0)] {
                heap.insert("p\(id)", id: UInt64(id), deadline: at(seconds))
            }

            // When nothing is due yet, the earliest deadline is the smallest
            #expect(heap.nextDeadline() == at(5))
            #expect(heap.popDue(at: at(4)).isEmpty)

            // Then everything, once due, comes out earliest first
            #expect(heap.popDue(at: at(100)) == ["p4", "p2", "p3", "p5", "p1"])
            #expect(heap.count == 0)
            #expect(heap.nextDeadline() == nil)
        }

        @Test("forgets a removed entry at once and drops its slot only when it reaches the top")
        func lazyRemoval() {
            // Given two entries
            var heap = DeadlineHeap<String>()
            heap.insert("early", id: 1, deadline: at(1))
            heap.insert("late", id: 2, deadline: at(2))

            // When the earlier one is removed
            let removed = heap.remove(1)
            let removedAgain = heap.remove(1)

            // Then it is gone from the count at once, its slot stays until it reaches the top
            #expect(removed)
            #expect(!removedAgain)
            #expect(heap.count == 1)
            #expect(heap.slots == 2)
            // and the next deadline skips it, dropping the slot
            #expect(heap.nextDeadline() == at(2))
            #expect(heap.slots == 1)
            #expect(heap.popDue(at: at(10)) == ["late"])
        }

        @Test("rebuilds once stale slots outnumber live ones, and keeps the order")
        func rebuildsWhenStale() {
            // Given a hundred entries, deadlines in reverse order of ids
            var heap = DeadlineHeap<Int>()
            for id in 0..<100 { heap.insert(id, id: UInt64(id), deadline: at(Double(100 - id))) }

            // When half are removed, the slots stay (stale ones do not yet outnumber the live)
            for id in stride(from: 0, to: 100, by: 2) { heap.remove(UInt64(id)) }
            #expect(heap.count == 50)
            #expect(heap.slots == 100)

            // and one more removal tips it: the heap is rebuilt with the live slots only
            heap.remove(1)
            #expect(heap.count == 49)
            #expect(heap.slots == 49)

            // Then the live entries still come out earliest first
            #expect(heap.popDue(at: at(1000)) == Array(stride(from: 99, through: 3, by: -2)))
        }

        @Test("pops each due payload once, earliest first, and leaves the rest")
        func popDueOnce() {
            // Given five entries, two sharing a deadline, one removed
            var heap = DeadlineHeap<String>()
            heap.insert("c", id: 3, deadline: at(3))
            heap.insert("a", id: 1, deadline: at(1))
            heap.insert("e", id: 5, deadline: at(5))
            heap.insert("b", id: 2, deadline: at(2))
            heap.insert("b2", id: 6, deadline: at(2))
            heap.remove(5)

            // When the time reaches the third second, twice
            let first = heap.popDue(at: at(3))
            let second = heap.popDue(at: at(3))

            // Then the first pop takes the four due ones, the two equal ones between, and the second
            // takes nothing; the removed one never comes out
            #expect(first.first == "a" && first.last == "c")
            #expect(Set(first) == ["a", "b", "b2", "c"] && first.count == 4)
            #expect(second.isEmpty)
            #expect(heap.popDue(at: at(100)).isEmpty)
            #expect(heap.count == 0)
        }
    }
}
