import Foundation
import IdpPrimitives
@testable import IdpServer
import IdpWireFormats
import Testing

/// A session shard keeps its sessions in an incremental table: it grows into tables made after
/// its lock, and a step's commit checks the session's revision and writes it in one lookup.
@Suite("A session shard")
struct SessionShardTests {
    static let now = Date(timeIntervalSince1970: 0)

    static func session(_ index: Int) -> AuthSession {
        AuthSession(AuthRequest(tenant: "demo", clientId: "KssIdpLogin", redirectURI: "https://kobil/OpenIdRedirectUri", responseMode: "fragment",
                                state: "state-\(index)", nonce: nil, codeChallenge: "challenge", codeChallengeMethod: PKCE.methodS256, loginHint: nil,
                                astClientId: nil, traceParent: nil, expiresAt: now.addingTimeInterval(1_800)))
    }

    static func code(_ index: Int) -> GrantKey { GrantKey(SecureRandom.token(byteCount: 32) + "\(index % 10)") }

    /// A shard behind its lock given `count` sessions, each opened as the authorization endpoint
    /// opens one: with the upkeep after the lock, or without.
    static func shard(sessions count: Int, upkeep: Bool) -> (LockedValue<SessionShard>, [GrantKey]) {
        let shard = LockedValue(SessionShard())
        var codes: [GrantKey] = []
        for index in 0..<count {
            let code = Self.code(index)
            codes.append(code)
            if upkeep {
                _ = shard.withLockThenUpkeep { $0.open(Self.session(index), code: code, now: now) }
            } else {
                _ = shard.withLock { $0.open(Self.session(index), code: code, now: now) }
            }
        }
        return (shard, codes)
    }

    @Test("a shard that grows to 6,000 sessions makes its larger tables after its lock and keeps every session; without the upkeep it makes them under the lock")
    func growsOutsideTheLock() {
        let (shard, codes) = Self.shard(sessions: 6_000, upkeep: true)
        let (made, count) = shard.withLock { ($0.tablesMadeUnderLock, $0.count) }
        #expect(made == 0)
        #expect(count == 6_000)
        let missing = shard.withLock { shard in codes.indices.filter { shard.session(codes[$0])?.request.state != "state-\($0)" } }
        #expect(missing == [])
        let unattended = Self.shard(sessions: 6_000, upkeep: false).0.withLock { $0.tablesMadeUnderLock }
        #expect(unattended > 0)
    }

    @Test("a commit writes the session at the revision it read, as the next revision, only if the rest of the commit agrees; a stale revision writes nothing and asks nothing")
    func commitsAtItsRevision() throws {
        let (shard, codes) = Self.shard(sessions: 3, upkeep: true)
        let code = codes[1]
        let read = try #require(shard.withLock { $0.session(code) })
        var asked = 0
        // A commit whose other half refuses writes nothing.
        let refused = shard.withLock { $0.commit(.store(Self.session(7)), code: code, ifRevision: read.revision) { asked += 1; return false } }
        #expect(!refused.committed && refused.replaced == nil && asked == 1)
        #expect(shard.withLock { $0.session(code)?.request.state } == "state-1")
        // One that agrees stores the new session as the next revision and hands back the old one.
        let stored = shard.withLock { $0.commit(.store(Self.session(7)), code: code, ifRevision: read.revision) { asked += 1; return true } }
        #expect(stored.committed && stored.replaced?.request.state == "state-1" && asked == 2)
        let now = try #require(shard.withLock { $0.session(code) })
        #expect(now.request.state == "state-7" && now.revision == read.revision &+ 1)
        // The revision read before is stale now: nothing is written, and the other half is not asked.
        let stale = shard.withLock { $0.commit(.remove, code: code, ifRevision: read.revision) { asked += 1; return true } }
        #expect(!stale.committed && asked == 2)
        // A removal at the current revision removes it; the others stay.
        let removed = shard.withLock { $0.commit(.remove, code: code, ifRevision: now.revision) { true } }
        #expect(removed.committed && removed.replaced?.request.state == "state-7")
        #expect(shard.withLock { ($0.session(code), $0.count) }.1 == 2)
        #expect(shard.withLock { $0.session(codes[0])?.request.state } == "state-0")
    }
}
