import IdpPrimitives
import Synchronization
import Testing
import TestSupport

/// What a thread keeps for an instance in the tests: which thread made it, and how often it was used.
private final class Mark {
    let thread: Int
    var uses = 0
    init(thread: Int) { self.thread = thread }
}

@Suite("ThreadConfined")
struct ThreadConfinedTests {
    @Test("each OS thread gets an object of its own per instance, made once, on that thread")
    func ownObjectPerThreadAndInstance() async {
        let first = ThreadConfined<Mark>(), second = ThreadConfined<Mark>()
        let made = Atomic<Int>(0)
        let results = await onOSThreads(8) { thread -> [Int] in
            func use(_ confined: ThreadConfined<Mark>) -> Mark {
                confined.withCurrent(orMake: {
                    made.wrappingAdd(1, ordering: .relaxed)
                    return Mark(thread: thread)
                }) { mark in
                    mark.uses += 1
                    return mark
                }
            }
            var seen: [Int] = []
            for _ in 0..<1_000 {
                let a = use(first), b = use(second)
                seen.append(a === b ? -1 : a.thread)
                seen.append(b.thread)
            }
            return [use(first).uses, use(second).uses, Set(seen).count == 1 && seen[0] == thread ? 1 : 0]
        }
        // Then: 16 objects made (8 threads × 2 instances), each used by its thread alone.
        #expect(made.load(ordering: .relaxed) == 16)
        #expect(results?.allSatisfy { $0 == [1_001, 1_001, 1] } == true)
    }

    @Test("a thread that uses more instances than it keeps makes the oldest one's object again, and never frees an object in use")
    func forgetsTheOldestButNotWhileUsed() async {
        let capacity = ThreadConfined<Mark>.capacity
        let instances = (0..<(capacity + 2)).map { _ in ThreadConfined<Mark>() }
        let (madeAgain, nestedIntact) = await OSThreads.run { () -> (Int, Bool) in
            var made = 0
            for instance in instances { instance.withCurrent(orMake: { made += 1; return Mark(thread: 0) }) { $0.uses += 1 } }
            // The first ones were forgotten: using them again makes new objects.
            for instance in instances.prefix(2) { instance.withCurrent(orMake: { made += 1; return Mark(thread: 0) }) { $0.uses += 1 } }
            // A body that uses every other instance, and more, inside it keeps its own object
            // (found in the table, not made) alive and intact, and its nested use finds it.
            let intact = instances.last!.withCurrent(orMake: { Mark(thread: 3) }) { outer -> Bool in
                let before = outer.uses
                for instance in instances.reversed() { instance.withCurrent(orMake: { Mark(thread: 1) }) { $0.uses += 1 } }
                for instance in (0..<capacity).map({ _ in ThreadConfined<Mark>() }) { instance.withCurrent(orMake: { Mark(thread: 2) }) { $0.uses += 1 } }
                return outer.uses == before + 1 && outer.thread == 0
            }
            return (made - instances.count, intact)
        }
        #expect(madeAgain == 2)
        #expect(nestedIntact)
    }
}
