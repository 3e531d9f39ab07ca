import Foundation
import IdpPrimitives
@testable import IdpServer
import IdpWireFormats
import Testing

@Suite("A grant log and the handles that name its grants")
struct GrantLogTests {
    /// What the run's log stores.
    struct Grant {
        let value: Int
        let expiresAt: Date
    }

    /// One grant of ``run(planting:seed:changes:)``'s record, kept beside the log.
    struct Recorded {
        let handle: GrantHandle
        let value: Int
        let expiresAt: Date
        var removed = false
    }

    /// What a seeded run of random appends, lookups, removals and prunes found wrong in a
    /// ``GrantLog`` built with `defect`, judged against a record of its own: the grants in the
    /// order they were appended, each marked when it is removed, and the head, moved the way the
    /// log's documentation says a prune moves it.
    static func run(planting defect: PlantedBug?, seed: UInt64, changes: Int = 20_000) -> [String] {
        var log = GrantLog<Grant>(.refreshTokens, planting: PlantedBugSwitch(defect))
        var record: [Recorded] = []
        var head = 0
        /// The record's grants at or after `head` not removed: what the log must count.
        var live = 0
        var random = SeededRandom(seed: seed)
        var findings: [String] = []
        let start = Date(timeIntervalSince1970: 0)
        var now = 0.0
        func note(_ finding: String) { if findings.count < 5 { findings.append(finding) } }
        func expected(_ index: Int) -> Int? { index >= head && !record[index].removed ? record[index].value : nil }
        for change in 0..<changes {
            now += Double(random.below(3))
            switch random.below(10) {
            case 0..<4:
                // Grants of one log share a lifetime; a few outlive it.
                let expiresAt = start.addingTimeInterval(now + 100 + (random.below(20) == 0 ? 400 : 0))
                let handle = log.append(Grant(value: change, expiresAt: expiresAt), as: .draft(route: random.below(64)), expiresAt: expiresAt)
                if handle.position != UInt64(record.count) || handle.log != .refreshTokens { note("change \(change): appended at \(handle.position)") }
                record.append(Recorded(handle: handle, value: change, expiresAt: expiresAt))
                live += 1
            case 4..<7 where !record.isEmpty:
                let index = record.count - 1 - random.below(min(record.count, 600))
                let read = log[record[index].handle]?.value
                if read != expected(index) { note("change \(change): grant \(index) read \(String(describing: read))") }
                // The same position with one random byte changed, or named as another log's.
                let forged = Self.forged(record[index].handle, byte: 7 + random.below(25))
                if let found = log[forged] { note("change \(change): a forged handle of grant \(index) found \(found.value)") }
                let otherLog = record[index].handle.placed(in: .shortTokens, at: record[index].handle.position)
                if log[otherLog] != nil { note("change \(change): grant \(index) was found through another log's handle") }
            case 7 where !record.isEmpty:
                let index = record.count - 1 - random.below(min(record.count, 600))
                let removed = log.remove(record[index].handle)?.value
                if removed != expected(index) { note("change \(change): removing grant \(index) gave \(String(describing: removed))") }
                if index >= head && !record[index].removed { live -= 1 }
                record[index].removed = true
            default:
                let before = start.addingTimeInterval(now)
                let pruned = log.prune(before: before) { $0.expiresAt }
                var dropped: [Int] = []
                var passed = 0
                while passed < prunedPerRequest, head < record.count {
                    if !record[head].removed {
                        guard record[head].expiresAt <= before else { break }
                        dropped.append(record[head].value)
                        live -= 1
                    }
                    head += 1
                    passed += 1
                }
                if pruned.count(where: { _ in true }) != dropped.count || pruned.count(where: { dropped.contains($0.value) }) != dropped.count {
                    note("change \(change): a prune dropped \(pruned.count(where: { _ in true })) grants, the record \(dropped)")
                }
            }
            if log.count != live { note("change \(change): count \(log.count), \(live) live in the record"); break }
        }
        return findings
    }

    /// `handle` with byte `byte` (7…31, the random part) changed.
    static func forged(_ handle: GrantHandle, byte: Int) -> GrantHandle {
        var bytes = Base64URL.decode(handle.text)!
        bytes[byte] ^= 0x5A
        return GrantHandle(text: Base64URL.encode(bytes))!
    }

    @Test("a seeded run of appends, lookups, forged lookups, removals and prunes matches the record of its own", arguments: [1, 2, 3] as [UInt64])
    func matchesTheRecord(seed: UInt64) {
        #expect(Self.run(planting: nil, seed: seed) == [])
    }

    #if DEBUG
    @Test("the run catches a planted defect by what it breaks: forged handles found, unexpired grants pruned",
          arguments: [(PlantedBug.idpGrantLogAcceptsAnyHandleAtItsPosition, "a forged handle"), (.idpGrantLogPrunesUnexpired, "a prune dropped")])
    func catchesPlantedDefects(defect: PlantedBug, finding: String) {
        let findings = Self.run(planting: defect, seed: 1)
        #expect(findings.contains { $0.contains(finding) }, "\(findings)")
    }
    #endif

    @Test("a handle's text is 43 characters of URL-safe Base 64 that spell it back, starting with its route; other texts name no handle")
    func handleText() {
        for route in [0, 5, 63] {
            let handle = GrantHandle.draft(route: route).placed(in: .offlineTokens, at: 0x0000_1234_5678_9ABC)
            let text = handle.text
            #expect(text.utf8.count == 43)
            #expect(GrantHandle(text: text) == handle)
            #expect(ShardRouting.route(of: text) == route && handle.route == route)
            #expect(handle.position == 0x0000_1234_5678_9ABC && handle.log == .offlineTokens)
        }
        let text = GrantHandle.draft(route: 9).placed(in: .codes, at: 7).text
        for malformed in ["", String(text.dropLast()), text + "A", String(text.dropLast()) + "+", String(text.dropLast()) + "=", text.uppercased() + "=="] {
            #expect(GrantHandle(text: malformed) == nil, "\(malformed)")
        }
        // Two drafts for one route differ in their random bytes.
        #expect(GrantHandle.draft(route: 3).placed(in: .codes, at: 0) != GrantHandle.draft(route: 3).placed(in: .codes, at: 0))
    }

    /// A grant shard behind its lock given `count` access tokens, each entered as the token
    /// endpoint enters one: with the upkeep after the lock, or without.
    static func shard(tokens count: Int, upkeep: Bool) -> (LockedValue<GrantShard>, [GrantHandle]) {
        let shard = LockedValue(GrantShard())
        let now = Date(timeIntervalSince1970: 0)
        var handles: [GrantHandle] = []
        for index in 0..<count {
            let record = TokenRecord(kind: .access, tenant: "demo", clientId: "KssIdpLogin", userId: "user-\(index)",
                                     expiresAt: now.addingTimeInterval(300), family: FamilyID(position: UInt64(index)))
            let draft = GrantHandle.draft(route: 1)
            if upkeep {
                handles.append(shard.withLockThenUpkeep { $0.add(record, as: draft, now: now) }.0)
            } else {
                handles.append(shard.withLock { $0.add(record, as: draft, now: now) }.0)
            }
        }
        return (shard, handles)
    }

    @Test("a grant shard's logs grow into chunks made after its lock, and keep every token where its handle says")
    func upkeepMakesChunksOutsideTheLock() {
        let count = 6_000
        let (shard, handles) = Self.shard(tokens: count, upkeep: true)
        let (chunksMadeUnderLock, stored) = shard.withLock { ($0.chunksMadeUnderLock, $0.tokenCount) }
        #expect(chunksMadeUnderLock == 0)
        #expect(stored == count)
        let misplaced = shard.withLock { shard in
            handles.indices.filter { shard.token(handles[$0])?.family.position != UInt64($0) || handles[$0].position != UInt64($0) }
        }
        #expect(misplaced == [])
        // Without the upkeep, every chunk after the first is made under the lock: the count above
        // can fail.
        let withoutUpkeep = Self.shard(tokens: count, upkeep: false).0.withLock { $0.chunksMadeUnderLock }
        #expect(withoutUpkeep == (count - 1) / GrantLog<TokenRecord>.chunkCapacity)
    }

    @Test("a token or code with one character changed is unknown to the server, and the real one still works")
    func alteredGrantsAreUnknown() throws {
        let browser = Browser()
        let login = try browser.login()
        let access = try #require(login["access_token"] as? String), refresh = try #require(login["refresh_token"] as? String)
        for token in [access, refresh] {
            for index in [1, 8, 20, 42] {
                var characters = Array(token)
                characters[index] = characters[index] == "A" ? "B" : "A"
                let altered = String(characters)
                #expect(browser.server.introspect(altered, tenant: "demo") == nil, "\(altered)")
                #expect(!browser.server.isTokenActive(altered, tenant: "demo"))
            }
        }
        var characters = Array(refresh)
        characters[30] = characters[30] == "A" ? "B" : "A"
        #expect(browser.refresh(String(characters)).json["error_description"] as? String == "refresh token is unknown")
        #expect(browser.server.isTokenActive(access, tenant: "demo"))
        #expect(browser.refresh(refresh).status == 200)
        // A code altered the same way is unknown; the code itself is then still redeemable.
        let code = try browser.code()
        var codeCharacters = Array(code)
        codeCharacters[25] = codeCharacters[25] == "A" ? "B" : "A"
        #expect(browser.exchange(String(codeCharacters)).json["error_description"] as? String == "authorization code is unknown")
        #expect(browser.exchange(code).status == 200)
    }
}
