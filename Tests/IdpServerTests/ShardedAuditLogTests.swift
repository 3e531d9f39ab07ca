import Foundation
import IdpPrimitives
@testable import IdpServer
import Synchronization
import Testing
import TestSupport

@Suite("The IDP's sharded audit log")
struct ShardedAuditLogTests {
    /// An entry of `user` (or of nobody) in tenant "demo", told apart by `detail`.
    static func entry(_ detail: String, user: String?, trace: String? = nil, decision: UInt64? = nil) -> AuditEntry {
        AuditEntry(time: Date(timeIntervalSince1970: 0), event: .stepServed, tenant: "demo", clientId: "KssIdpLogin", userId: user,
                   traceParent: trace, detail: detail, userDecision: decision)
    }

    /// Users whose entries live in `count` different shards of the log.
    static func usersInDistinctShards(_ count: Int) -> [String] {
        var users: [String] = []
        var shards: Set<Int> = []
        var index = 0
        while users.count < count {
            let user = "user-\(index)"
            if shards.insert(UserKey(tenant: "demo", user: user).hashValue & (ServerState.shardCount(cores: ProcessInfo.processInfo.activeProcessorCount) - 1)).inserted { users.append(user) }
            index += 1
        }
        return users
    }

    @Test("decisions appended one after another by users of different shards come back in that order, each decision's entries together and in order")
    func orderAcrossShards() {
        // Given users in eight different shards, and entries that name nobody
        let server = IdpServer()
        let users = Self.usersInDistinctShards(8) + [nil]
        var expected: [String] = []

        // When decisions of three entries each are appended in turn, round robin over them
        for index in 0..<300 {
            let user = users[index % users.count]
            let details = (0..<3).map { "\(index).\($0)" }
            server.record(details.map { Self.entry($0, user: user) })
            expected += details
        }

        // Then the log reads them back exactly in the order they were appended
        #expect(server.auditLog().map(\.detail) == expected)
    }

    @Test("an entry appended on one OS thread after another thread's append returned comes after it")
    func orderAcrossThreads() async {
        // Given two OS threads that take turns, each appending one entry of its own user per turn
        let server = IdpServer()
        let users = Self.usersInDistinctShards(2)
        let turns = 2_000
        let order = Turns()

        // When each appends on its turn and then hands the turn to the other
        await onOSThreads(2) { side in
            for turn in stride(from: side, to: turns, by: 2) {
                guard order.wait(for: turn) else { return }
                // Half the turns name nobody: those go to the thread's own shard.
                server.record([Self.entry("\(turn)", user: turn % 4 < 2 ? users[side] : nil)])
                order.pass()
            }
        }

        // Then the log holds the turns in the order they were taken
        #expect(server.auditLog().map(\.detail) == (0..<turns).map(String.init))
    }

    @Test("auditLog(traceId:) returns that trace's entries only, oldest first")
    func traceFilter() {
        // Given entries of two traces and of none, from users in different shards
        let server = IdpServer()
        let users = Self.usersInDistinctShards(3)
        let traceA = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let traceB = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        for index in 0..<60 {
            let trace = [traceA, traceB, nil][index % 3]
            server.record([Self.entry("\(index)", user: users[index % 2 == 0 ? 0 : 1 + index % 2], trace: trace)])
        }

        // Then each trace reads back only its own entries, in order
        #expect(server.auditLog(traceId: "4bf92f3577b34da6a3ce929d0e0e4736").map(\.detail) == stride(from: 0, to: 60, by: 3).map(String.init))
        #expect(server.auditLog(traceId: "0af7651916cd43dd8448eb211c80319c").map(\.detail) == stride(from: 1, to: 60, by: 3).map(String.init))
        #expect(server.auditLog().count == 60)
    }

    @Test("a shard over capacity drops its oldest entries first; other shards keep theirs")
    func capacityPerShard() {
        // Given a log whose shards keep five entries each, and two users in different shards
        let server = IdpServer(configuration: .init(auditLogCapacity: 5))
        let users = Self.usersInDistinctShards(2)

        // When one user gets eight entries and the other three
        for index in 0..<8 { server.record([Self.entry("a\(index)", user: users[0])]) }
        for index in 0..<3 { server.record([Self.entry("b\(index)", user: users[1])]) }

        // Then the first keeps its newest five, the second all three, in append order
        #expect(server.auditLog().map(\.detail) == ["a3", "a4", "a5", "a6", "a7", "b0", "b1", "b2"])
    }

    @Test("a ring over several chunks keeps its newest elements in append order, as the tail of an array does, before and after it wraps")
    func ringAcrossChunks() {
        let capacity = 2 * AuditRing<Int>.chunkCapacity + 88
        var ring = AuditRing<Int>(capacity: capacity)
        var appended: [Int] = []
        for element in 0..<(3 * capacity + 17) {
            ring.append(element)
            appended.append(element)
            if element % 97 == 0 || element == capacity - 1 || element == capacity {
                #expect(ring.elements { _ in true } == Array(appended.suffix(capacity)))
                #expect(ring.elements { $0 % 3 == 0 } == appended.suffix(capacity).filter { $0 % 3 == 0 })
            }
        }
        #expect(ring.count == capacity && ring.dropped == appended.count - capacity)
    }

    @Test("an append that would need a chunk not yet handed in does not fit; the chunk its owner makes after the lock lets it fit, and none is made under the lock")
    func appendWaitsForItsChunk() {
        let capacity = 2 * AuditRing<Int>.chunkCapacity
        var ring = AuditRing<Int>(capacity: capacity)
        // The ring's request is taken out and not answered yet (its maker is slow)
        _ = ring.takeUpkeep()
        for element in 0..<AuditRing<Int>.chunkCapacity {
            #expect(ring.fits(1))
            ring.append(element)
        }
        #expect(!ring.fits(1) && ring.fits(0))
        #expect(ring.chunkSlotsToMake == AuditRing<Int>.chunkCapacity)
        var upkeep = AuditRing<Int>.Upkeep(slots: ring.chunkSlotsToMake)
        let made = upkeep.makeSpares()
        #expect(made)
        ring.install(&upkeep)
        #expect(ring.fits(1) && ring.chunkSlotsToMake == 0)
        // Filled and wrapped: everything fits over the oldest elements
        for element in 0..<capacity { ring.append(element) }
        #expect(ring.fits(AuditRing<Int>.chunkCapacity) && ring.chunksMadeUnderLock == 0)
    }

    @Test("a ring asks for each chunk after its first, and with the chunks handed in makes none under its owner's lock")
    func ringChunksMadeByTheOwner() {
        let capacity = 3 * AuditRing<Int>.chunkCapacity + 40
        var handedIn = AuditRing<Int>(capacity: capacity), unattended = AuditRing<Int>(capacity: capacity)
        var requests: [Int] = []
        for element in 0..<(2 * capacity) {
            handedIn.append(element)
            if handedIn.wantsChunk {
                var upkeep = handedIn.takeUpkeep()
                requests.append(upkeep.slots)
                let made = upkeep.makeSpares()
                #expect(made)
                handedIn.install(&upkeep)
                #expect(upkeep.chunk == nil)
            }
            unattended.append(element)
        }
        // Chunks 2 to 4 were asked for, the last as large as what is left of the capacity.
        #expect(requests == [AuditRing<Int>.chunkCapacity, AuditRing<Int>.chunkCapacity, 40])
        #expect(handedIn.chunksMadeUnderLock == 0)
        // A ring whose requests are not answered makes those chunks itself: the count above can fail.
        #expect(unattended.chunksMadeUnderLock == 3)
        #expect(handedIn.elements { _ in true } == Array((capacity..<(2 * capacity))))
        // A chunk of the wrong size, or one more than the capacity needs, is left with its holder.
        var wrongSize = AuditRing<Int>.Upkeep(slots: 7)
        let madeWrongSize = wrongSize.makeSpares()
        #expect(madeWrongSize)
        var fresh = AuditRing<Int>(capacity: capacity)
        fresh.install(&wrongSize)
        handedIn.install(&wrongSize)
        #expect(wrongSize.chunk?.count == 7)
    }

    @Test("a log's appends hand their rings the chunks they ask for, made after the shard's lock")
    func logMakesChunksAfterItsLocks() {
        let capacity = 3 * AuditRing<AuditShard.Kept>.chunkCapacity + 40
        let log = AuditLog(capacity: capacity, shardCount: 1)
        for index in 0..<(2 * capacity) { log.append([Self.entry("\(index)", user: nil)]) }
        #expect(log.chunksMadeUnderLock == 0)
        #expect(log.entries().map(\.detail) == (capacity..<(2 * capacity)).map { "\($0)" })
    }

    @Test("userDecisions reads a user's decisions in decision order, whatever order they were appended in")
    func userDecisionsInDecisionOrder() {
        // Given a user's decisions 1 to 4 appended as 2, 1, 4, 3 (two entries each), among others'
        let server = IdpServer()
        let users = Self.usersInDistinctShards(2)
        for number in [2, 1, 4, 3] as [UInt64] {
            server.record([Self.entry("\(number)a", user: users[0], decision: number), Self.entry("\(number)b", user: users[0], decision: number)])
            server.record([Self.entry("other", user: users[1], decision: number)])
        }

        // Then they are read back by number, each decision's entries in order
        #expect(server.userDecisions(users[0], tenant: "demo").map(\.detail) == ["1a", "1b", "2a", "2b", "3a", "3b", "4a", "4b"])
    }

    @Test("appends from eight OS threads at once lose nothing, and each thread's decisions stay together and in its order")
    func concurrentAppends() async {
        // Given eight OS threads, two per user plus entries that name nobody
        let server = IdpServer(configuration: .init(auditLogCapacity: 1_000_000))
        let users = Self.usersInDistinctShards(4)
        let decisions = 1_500

        // When each appends its decisions of two entries at once
        await onOSThreads(8) { thread in
            for index in 0..<decisions {
                let user: String? = index % 3 == 0 ? nil : users[thread % 4]
                server.record([Self.entry("\(thread) \(index) first", user: user), Self.entry("\(thread) \(index) second", user: user)])
            }
        }

        // Then every entry is there, a decision's second entry right after its first, and each
        // thread's decisions in the order it made them
        let log = server.auditLog().map(\.detail)
        #expect(log.count == 8 * decisions * 2)
        var next = [Int](repeating: 0, count: 8)
        var index = 0
        while index + 1 < log.count {
            let parts = log[index].split(separator: " ")
            guard parts.count == 3, let thread = Int(parts[0]), let decision = Int(parts[1]), parts[2] == "first" else {
                Issue.record("entry \(index) is '\(log[index])', not the first of a decision")
                return
            }
            #expect(log[index + 1] == "\(thread) \(decision) second")
            #expect(decision == next[thread], "thread \(thread)'s decisions out of order")
            next[thread] = decision + 1
            index += 2
        }
        #expect(next == [Int](repeating: decisions, count: 8))
    }
}
