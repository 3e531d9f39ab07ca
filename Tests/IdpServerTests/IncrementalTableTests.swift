import Foundation
import IdpPrimitives
@testable import IdpServer
import Testing

@Suite("Tables that grow a few entries per change")
struct IncrementalTableTests {
    /// What a seeded run of random changes found wrong in an ``IncrementalTable`` built with
    /// `defect`, judged against a plain `Dictionary` given the same changes (the independent
    /// record); and how many times the table drained.
    struct Run {
        var differences: [String] = []
        var drains = 0
        var changesWhileDraining = 0
    }

    static func run(planting defect: PlantedBug?, seed: UInt64, changes: Int = 24_000) -> Run {
        var table = IncrementalTable<Int, Int>(planting: PlantedBugSwitch(defect))
        var record: [Int: Int] = [:]
        var random = SeededRandom(seed: seed)
        var run = Run()
        func compare(_ answer: Int?, _ recorded: Int?, _ what: String, after change: Int) {
            if answer != recorded, run.differences.count < 5 {
                run.differences.append("change \(change): \(what) answered \(String(describing: answer)), not \(String(describing: recorded))")
            }
        }
        func check(_ key: Int, after change: Int) {
            guard run.differences.count < 5 else { return }
            if table[key] != record[key] { run.differences.append("change \(change): key \(key) reads \(String(describing: table[key])), not \(String(describing: record[key]))") }
            if table.count != record.count { run.differences.append("change \(change): count \(table.count), not \(record.count)") }
        }
        for change in 0..<changes {
            // The keys in use grow with the run, so the table keeps growing while entries go.
            let key = random.below(64 + change / 3)
            switch random.below(10) {
            case 0..<5:
                compare(table.updateValue(change, forKey: key), record.updateValue(change, forKey: key), "update \(key)", after: change)
            case 5..<8:
                compare(table.removeValue(forKey: key), record.removeValue(forKey: key), "remove \(key)", after: change)
            default:
                // Changed in place: a value is bumped, and one in three removed through `nil`.
                let removes = random.below(3) == 0
                table.withValue(forKey: key) { value in value = removes ? nil : value.map { $0 + 1 } }
                record[key] = removes ? nil : record[key].map { $0 + 1 }
            }
            if table.isDraining { run.changesWhileDraining += 1 }
            check(key, after: change)
            check(random.below(64 + change / 3), after: change)
            // The owner's upkeep, as a shard's lock does it, skipped now and then.
            if table.upkeepDue, random.below(4) != 0 {
                var upkeep = table.takeUpkeep()
                _ = upkeep.makeSpare()
                table.install(&upkeep)
            }
            // Every key, now and then, and often while the table drains.
            if change % 4_000 == 3_999 || change == changes - 1 || (table.isDraining && change % 16 == 0), run.differences.count < 5 {
                let keys = table.keys
                if keys.count != record.count || Set(keys) != Set(record.keys) { run.differences.append("change \(change): the keys differ") }
                for (key, value) in record where table[key] != value { run.differences.append("change \(change): key \(key) lost \(value)") }
            }
        }
        run.drains = table.drains
        return run
    }

    @Test("a table that drains while entries are added, changed and removed reads as a plain dictionary given the same changes", arguments: [1, 2, 3] as [UInt64])
    func matchesADictionary(seed: UInt64) {
        let run = Self.run(planting: nil, seed: seed)
        #expect(run.differences == [])
        #expect(run.drains >= 4, "the run must make the table drain")
        #expect(run.changesWhileDraining > 200, "changes must land while it drains")
    }

    @Test("the comparison catches a lookup that probes a passed home from the home, and a table let go before it drained",
          arguments: [PlantedBug.idpTableProbesPassedHomesFromHome, .idpTableRetiresBeforeDrained])
    func catchesPlantedDefects(defect: PlantedBug) {
        let run = Self.run(planting: defect, seed: 1)
        #expect(!run.differences.isEmpty, "\(defect) went unnoticed")
    }

    @Test("a copy of a table taken while it drains keeps its own entries when either is changed")
    func copiesAreIndependent() {
        // Given a table in the middle of a drain
        var table = IncrementalTable<Int, Int>()
        var key = 0
        while !table.isDraining || key < 200 {
            table.updateValue(key, forKey: key)
            key += 1
        }
        #expect(table.isDraining)
        // When a copy is taken and each is changed differently
        var copy = table
        for changed in 0..<key {
            table.updateValue(-changed, forKey: changed)
            if changed % 2 == 0 { copy.removeValue(forKey: changed) }
        }
        // Then each reads as its own changes made it
        #expect((0..<key).allSatisfy { table[$0] == -$0 })
        #expect((0..<key).allSatisfy { copy[$0] == ($0 % 2 == 0 ? nil : $0) })
        #expect(table.count == key && copy.count == key / 2)
    }

    @Test("an expiry queue asks for a chunk when it starts one with no spare, and uses what it is handed")
    func expiryQueueAsksForChunks() {
        var queue = ExpiryQueue<Int>()
        let start = Date(timeIntervalSince1970: 0)
        let capacity = ExpiryQueue<Int>.chunkCapacity
        // The first chunk comes with the queue, whose first key asks for the next one.
        var asked: [Bool] = []
        for key in 0..<capacity { asked.append(queue.append(key, expiresAt: start)) }
        #expect(!asked.contains(false))
        #expect(queue.chunksMadeUnderLock == 0)
        // Unanswered, the next key starts a chunk made under the lock, and the queue still asks.
        let asksNow = queue.append(capacity, expiresAt: start)
        #expect(asksNow)
        #expect(queue.chunksMadeUnderLock == 1)
        var upkeep = queue.takeUpkeep()
        #expect(!queue.wantsChunk)
        let made = upkeep.makeSpares()
        #expect(made)
        queue.install(&upkeep)
        // The chunk handed in is the next one: no more made under the lock.
        for key in (capacity + 1)..<(2 * capacity + 1) { queue.append(key, expiresAt: start) }
        #expect(queue.chunksMadeUnderLock == 1)
        // A chunk handed in becomes the spare; one handed in while a spare is kept stays with its
        // holder.
        var first = ExpiryQueue<Int>.Upkeep(slots: capacity), second = ExpiryQueue<Int>.Upkeep(slots: capacity)
        let madeBoth = first.makeSpares() && second.makeSpares()
        #expect(madeBoth)
        queue.install(&first)
        queue.install(&second)
        #expect(first.chunk == nil && second.chunk != nil)
        var none = ExpiryQueue<Int>.Upkeep()
        let madeUnasked = none.makeSpares()
        #expect(!madeUnasked)
        var popped: [Int] = []
        queue.popExpired(now: start, limit: .max) { popped.append($0) }
        #expect(popped == Array(0..<(2 * capacity + 1)))
    }

    @Test("an expiry queue gives back every key in the order entered across many chunks, as a plain array does")
    func expiryQueueMatchesAnArray() {
        var queue = ExpiryQueue<Int>()
        var record: [Int] = []
        var random = SeededRandom(seed: 7)
        let start = Date(timeIntervalSince1970: 0)
        var next = 0
        var popped: [Int] = []
        // More than 64 chunks pass through the queue, so its list of chunks is compacted too.
        for _ in 0..<32_000 {
            if random.below(5) < 3 {
                queue.append(next, expiresAt: start.addingTimeInterval(Double(next)))
                record.append(next)
                next += 1
            } else {
                // Key n expires at n s: a pop at `now` may take only keys up to it, and as many
                // as the limit lets while the oldest has expired.
                let now = next - 1 - random.below(300)
                let limit = 1 + random.below(4)
                let before = popped.count
                queue.popExpired(now: start.addingTimeInterval(Double(now)), limit: limit) { popped.append($0) }
                let expired = max(0, min(now + 1, next) - before)
                #expect(popped.count - before == min(limit, expired))
            }
        }
        queue.popExpired(now: start.addingTimeInterval(Double(next)), limit: .max) { popped.append($0) }
        #expect(popped == record)
        #expect(queue.count == 0)
    }

    @Test("an expiry queue emptied at the end of a full chunk takes new keys and gives them back")
    func expiryQueueEmptiedAtAChunkBoundary() {
        var queue = ExpiryQueue<Int>()
        let start = Date(timeIntervalSince1970: 0)
        var popped: [Int] = []
        for round in 0..<3 {
            let keys = (round * ExpiryQueue<Int>.chunkCapacity)..<((round + 1) * ExpiryQueue<Int>.chunkCapacity)
            for key in keys { queue.append(key, expiresAt: start) }
            queue.popExpired(now: start, limit: .max) { popped.append($0) }
            #expect(popped.suffix(keys.count) == ArraySlice(keys))
            #expect(queue.count == 0)
        }
    }
}
