// README.md's block under "Use a ready provider", verbatim between the markers (ReadmeBlockTests checks that it is).
import CredentialProviders
import Foundation
import Testing

// README block begin
@Test func tokenCacheRefreshesOnceForEveryCaller() async throws {
    let clock = ManualClock()                              // SystemClock() in the app
    let refreshes = LockedValue(0)
    let provider = TokenCacheProvider<String>(clock: clock, refresh: { previous in
        let count = refreshes.withLock { $0 += 1; return $0 }  // your server's refresh call
        return CachedToken("access-token-\(count)", expires: clock.now().addingTimeInterval(3_600))
    }, credentials: { token, _ in ["username": "alice", "password": token] })
    // 100 callers find no token at once: one refresh, and all get its token
    let tokens = try await withThrowingTaskGroup(of: String.self) { group in
        for _ in 0..<100 { group.addTask { try await provider.token() } }
        return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(Set(tokens) == ["access-token-1"] && refreshes.withLock { $0 } == 1)
}
// README block end
