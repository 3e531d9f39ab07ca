@testable import IdpSdk
import IdpPrimitives
import Testing

@Suite("The worker pool's job queue")
struct JobQueueTests {
    /// Runs `job` and returns what it wrote into `ran`.
    static func number(of job: WorkerPool.Job?, _ ran: LockedValue<Int>) -> Int? {
        guard let job else { return nil }
        ran.withLock { $0 = -1 }
        job()
        return ran.withLock { $0 }
    }

    /// What a seeded run of appends and pops found wrong in a queue built with `defect`, judged
    /// against a plain array of the same jobs; and the capacity the queue grew to.
    static func fifoMismatches(planting defect: PlantedBug?) -> (mismatches: [String], capacity: Int) {
        var queue = JobQueue(planting: PlantedBugSwitch(defect))
        var record: [Int] = []
        var random = SeededRandom(seed: 11)
        let ran = LockedValue(0)
        var next = 0
        var mismatches: [String] = []
        for step in 0..<40_000 {
            // Appends outnumber pops early (the ring grows past its first size several times),
            // then pops catch up (the head wraps around the ring many times).
            let appendShare = step < 20_000 ? 6 : 4
            if random.below(10) < appendShare {
                let number = next
                queue.append { ran.withLock { $0 = number } }
                record.append(number)
                next += 1
            } else {
                let popped = Self.number(of: queue.popFirst(), ran)
                let expected = record.isEmpty ? nil : record.removeFirst()
                if popped != expected, mismatches.count < 5 { mismatches.append("step \(step): \(String(describing: popped)), expected \(String(describing: expected))") }
            }
            if queue.count != record.count, mismatches.count < 5 { mismatches.append("step \(step): count \(queue.count), expected \(record.count)") }
        }
        while let expected = record.first {
            record.removeFirst()
            let popped = Self.number(of: queue.popFirst(), ran)
            if popped != expected, mismatches.count < 5 { mismatches.append("drain: \(String(describing: popped)), expected \(expected)") }
        }
        if !queue.isEmpty || queue.popFirst() != nil { mismatches.append("jobs left after the drain") }
        return (mismatches, queue.capacity)
    }

    @Test("jobs come out in the order they went in, across the ring's wrap and its growth, as from a plain array")
    func fifoAcrossWrapAndGrowth() {
        let (mismatches, capacity) = Self.fifoMismatches(planting: nil)
        #expect(mismatches == [])
        #expect(capacity > JobQueue.initialSlots, "the run made the ring grow")
    }

    #if DEBUG
    @Test("the order check catches a ring that grows from its first slot instead of its head")
    func orderCheckCatchesAPlantedDefect() {
        #expect(Self.fifoMismatches(planting: .sdkQueueGrowsFromSlotZero).mismatches != [])
    }
    #endif

    /// Whether a queue built with `defect` still holds a job after handing it out.
    static func keepsAPoppedJob(planting defect: PlantedBug?) -> Bool {
        final class Token: Sendable {}
        weak var weakToken: Token?
        var queue = JobQueue(planting: PlantedBugSwitch(defect))
        do {
            let token = Token()
            weakToken = token
            queue.append { _ = token }
        }
        #expect(weakToken != nil)
        let job = queue.popFirst()
        #expect(job != nil)
        _ = consume job
        return weakToken != nil
    }

    @Test("a popped job is released by the queue: it holds no reference to a job it handed out")
    func poppedJobsAreReleased() {
        #expect(!Self.keepsAPoppedJob(planting: nil))
    }

    #if DEBUG
    @Test("the release check catches a queue that copies a popped job instead of moving it out")
    func releaseCheckCatchesAPlantedDefect() {
        #expect(Self.keepsAPoppedJob(planting: .sdkQueueKeepsPoppedJobs))
    }
    #endif

    /// A queue given `jobs` jobs, each appended as the pool's submit appends one: with the spare
    /// ring it asks for made after the lock and handed in, or with its requests left unanswered.
    static func filled(with jobs: Int, answered: Bool) -> JobQueue {
        var queue = JobQueue()
        for _ in 0..<jobs {
            queue.append {}
            if answered, let slots = queue.takeSpareRequest() {
                var ring: JobQueue.Ring? = JobQueue.makeRing(slots: slots)
                queue.install(&ring)
            }
        }
        return queue
    }

    @Test("a queue three quarters full asks once for the ring it grows into; handed in, it grows to 8,192 slots with no ring made under the lock; unanswered, it makes each there")
    func growsIntoRingsMadeAfterTheLock() {
        // Asked once at 48 of 64 jobs, and not again until the ring is handed in.
        var queue = JobQueue()
        var requests: [Int] = []
        for _ in 0..<60 {
            queue.append {}
            if let slots = queue.takeSpareRequest() { requests.append(slots) }
        }
        #expect(requests == [128])
        var ring: JobQueue.Ring? = JobQueue.makeRing(slots: 128)
        queue.install(&ring)
        #expect(ring == nil, "the spare was taken")
        for _ in 0..<5 { queue.append {} }
        #expect(queue.capacity == 128 && queue.ringsMadeUnderLock == 0)
        // A ring of the wrong size is left to its caller.
        var wrong: JobQueue.Ring? = JobQueue.makeRing(slots: 64)
        queue.install(&wrong)
        #expect(wrong?.count == 64)

        let answered = Self.filled(with: 5_000, answered: true)
        #expect(answered.capacity == 8_192 && answered.count == 5_000 && answered.ringsMadeUnderLock == 0)
        let unanswered = Self.filled(with: 5_000, answered: false)
        #expect(unanswered.capacity == 8_192 && unanswered.ringsMadeUnderLock == 7)
    }

}
