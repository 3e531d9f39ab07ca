import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
@testable import McSdk
import Synchronization
import Testing
import StackTestSupport
import TestSupport

@Suite("Fresh tokens for concurrent callers")
struct FreshTokenTests {
    let idp = TestIDP(refreshTokenLifetime: .seconds(7_200))
    let uma = KsUserIdentifier(tenantId: "demo", userId: "uma")

    /// Uma activated and logged in on a MasterController whose token requests pass `transport`.
    func loggedIn(transport: HoldingTransport? = nil, refreshTimeout: Duration = .seconds(600)) async -> MasterController {
        let mc = idp.masterController(transport: transport, refreshTimeout: refreshTimeout)
        #expect(await idp.activate("uma", password: "pw-uma", on: mc) == .kOk)
        return mc
    }

    func holdingTransport() -> HoldingTransport { HoldingTransport(InProcessTransport(server: idp.server)) }

    @Test("a live access token is returned without a request")
    func liveToken() async throws {
        let mc = await loggedIn()
        let token = try await mc.validAccessToken(for: uma)
        #expect(token == (await mc.tokenSet(for: uma))?.accessToken)
        #expect(idp.count(.tokensRefreshed) == 0)
    }

    @Test("1,000 concurrent callers at expiry cause exactly one refresh at the IDP and all get its token")
    func singleFlight() async throws {
        let mc = await loggedIn()
        idp.clock.advance(by: .seconds(301))
        let tokens = await withTaskGroup(of: Result<String, any Error>.self) { group in
            for _ in 0..<1_000 {
                group.addTask { await Result { try await mc.validAccessToken(for: uma) } }
            }
            var tokens: [String] = []
            for await result in group { if case .success(let token) = result { tokens.append(token) } }
            return tokens
        }
        #expect(tokens.count == 1_000)
        #expect(Set(tokens).count == 1)
        #expect(idp.count(.tokensRefreshed) == 1)
        #expect(idp.server.isTokenActive(try #require(tokens.first), tenant: "demo"))
        #expect(await mc.refreshesInFlight == 0)
        // The next expiry: one more refresh
        idp.clock.advance(by: .seconds(301))
        _ = try await mc.validAccessToken(for: uma)
        #expect(idp.count(.tokensRefreshed) == 2)
    }

    @Test("a cancelled caller stops waiting; the refresh goes on and reaches the others")
    func cancelledCaller() async throws {
        let transport = holdingTransport()
        let mc = await loggedIn(transport: transport)
        idp.clock.advance(by: .seconds(301))
        transport.hold()
        let cancelled = Task { try await mc.validAccessToken(for: uma) }
        #expect(await eventually { transport.heldCount == 1 })
        let other = Task { try await mc.validAccessToken(for: uma) }
        cancelled.cancel()
        // The cancelled caller returns while the refresh is still held
        let cancelledResult = await cancelled.result
        #expect(throws: McTokenError.self) { try cancelledResult.get() }
        #expect((try? cancelledResult.get()) == nil)
        if case .failure(let error as McTokenError) = cancelledResult { #expect(error.reason == .cancelled) }
        #expect(transport.heldCount == 1)
        transport.release()
        let token = try await other.value
        #expect(idp.server.isTokenActive(token, tenant: "demo"))
        #expect(idp.count(.tokensRefreshed) == 1)
        #expect(try await mc.validAccessToken(for: uma) == token)
    }

    @Test("a caller cancelled before it waits gets cancelled at once and starts nothing it would not need")
    func cancelledBeforeWaiting() async throws {
        let transport = holdingTransport()
        let mc = await loggedIn(transport: transport)
        idp.clock.advance(by: .seconds(301))
        transport.hold()
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await mc.validAccessToken(for: uma)
        }
        if case .failure(let error as McTokenError) = await early.result {
            #expect(error.reason == .cancelled && error.status == .kUserCancel)
        } else {
            Issue.record("expected McTokenError.cancelled")
        }
        // The refresh it started goes on, and a later caller gets its token
        let later = Task { try await mc.validAccessToken(for: uma) }
        #expect(await eventually { transport.heldCount == 1 })
        transport.release()
        #expect(idp.server.isTokenActive(try await later.value, tenant: "demo"))
        #expect(idp.count(.tokensRefreshed) == 1)
    }

    @Test("a logout (CLEAR_ALL) while a refresh is in flight wins: the waiter gets loginRequired and no token comes back")
    func clearDuringRefresh() async throws {
        let transport = holdingTransport()
        let mc = await loggedIn(transport: transport)
        idp.clock.advance(by: .seconds(301))
        transport.hold()
        let waiter = Task { try await mc.validAccessToken(for: uma) }
        #expect(await eventually { transport.heldCount == 1 })
        #expect(await (mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: uma)) as! KSMClearIamTokenCacheResultEvent).status == .kOk)
        transport.release()
        do {
            _ = try await waiter.value
            Issue.record("expected loginRequired")
        } catch let error as McTokenError {
            #expect(error.reason == .loginRequired)
            #expect(error.errorDescription == "the tokens of demo/uma were cleared while the refresh was in flight")
        }
        let tokens = try #require(await mc.tokenSet(for: uma))
        #expect(tokens.accessToken == nil && tokens.refreshToken == nil && tokens.offlineToken == nil)
    }

    @Test("a refresh that hangs times out for every waiter when the MC's clock passes the timeout, with no wall time waited; later callers do not present the spent token again")
    func hangingRefreshTimesOut() async throws {
        let transport = holdingTransport()
        // Given a refresh timeout of an hour on the MC's manual clock (refresh tokens live two),
        // and an IDP whose answer is held
        let mc = await loggedIn(transport: transport, refreshTimeout: .seconds(3_600))
        idp.clock.advance(by: .seconds(301))
        transport.hold()
        // When 20 callers wait on the refresh and the clock passes the timeout (no wall time waited)
        let finished = LockedValue(0)
        let waiting = Task {
            await withTaskGroup(of: Result<String, any Error>.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        defer { finished.withLock { $0 += 1 } }
                        return await Result { try await mc.validAccessToken(for: uma) }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(await eventually { transport.heldCount == 1 })
        idp.clock.advance(by: .seconds(3_599))
        #expect(finished.withLock { $0 } == 0)
        idp.clock.advance(by: .seconds(2))
        // A wall-clock timer would take an hour: every waiter ends long before
        #expect(await eventually(within: .seconds(600)) { finished.withLock { $0 } == 20 })
        let results = await waiting.value
        // Then every caller gets the timeout
        #expect(results.count == 20)
        for result in results {
            guard case .failure(let error as McTokenError) = result else { Issue.record("expected a timeout, got \(result)"); continue }
            #expect(error.reason == .timedOut && error.status == .kCannotAcquireTokenData)
        }
        #expect(transport.heldCount == 1)
        await #expect(throws: McTokenError.self) { try await mc.validAccessToken(for: uma) }
        #expect(transport.heldCount == 1)
        // When the hung answer finally arrives, its rotated tokens are kept and work
        transport.release()
        #expect(await eventually { await mc.refreshesInFlight == 0 })
        let token = try await mc.validAccessToken(for: uma)
        #expect(idp.server.isTokenActive(token, tenant: "demo"))
        #expect(idp.count(.tokensRefreshed) == 1 && idp.count(.refreshTokenReused) == 0)
    }

    @Test("a duplicate refresh (the spent refresh token presented again) fails, revokes the family, and the failure reaches every waiter")
    func duplicateRefresh() async throws {
        let mc = await loggedIn()
        let spent = try #require(await mc.tokenSet(for: uma)?.refreshToken)
        idp.clock.advance(by: .seconds(301))
        let fresh = try await mc.validAccessToken(for: uma)
        // Someone presents the spent refresh token again (a copy, a replay)
        let form = FormURLEncoding.encode([("grant_type", "refresh_token"), ("refresh_token", spent), ("client_id", "KssIdpEnrollment")])
        let replay = idp.server.handle(HTTPRequest(method: "POST", target: "/auth/realms/demo/protocol/openid-connect/token", body: Array(form.utf8)))
        #expect(replay.status == 400)
        #expect(idp.count(.refreshTokenReused) == 1)
        #expect(!idp.server.isTokenActive(fresh, tenant: "demo"))
        // The MC's next refresh fails for all its waiters: the family is revoked
        idp.clock.advance(by: .seconds(301))
        let results = await withTaskGroup(of: Result<String, any Error>.self) { group in
            for _ in 0..<50 { group.addTask { await Result { try await mc.validAccessToken(for: uma) } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for result in results {
            guard case .failure(let error as McTokenError) = result else { Issue.record("expected a refusal, got \(result)"); continue }
            #expect(error.reason == .refused("invalid_grant") && error.status == .kLoginRequired)
            #expect(error.errorDescription == "the IDP refused the refresh: invalid_grant: refresh token has been revoked")
        }
        #expect(idp.count(.tokensRefreshed) == 1)
        // OfflineLogin cannot save it either: the offline token was in the same family
        _ = await mc.receive(KSMRestartEvent())
        let offline = await mc.receive(KSMOfflineLoginEvent(userIdentifier: uma)) as! KSMOfflineLoginResultEvent
        #expect(offline.status == .kLoginRequired)
    }

    @Test("after an OfflineLogin with the offline token, the offline token refreshes the access token")
    func offlineTokenServesAfterOfflineLogin() async throws {
        let mc = await loggedIn()
        _ = await mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: uma, clearBehavior: .CLEAR_ACCESS_AND_REFRESH))
        #expect(await (mc.receive(KSMOfflineLoginEvent(userIdentifier: uma)) as! KSMOfflineLoginResultEvent).status == .kOk)
        idp.clock.advance(by: .seconds(301))
        let token = try await mc.validAccessToken(for: uma)
        #expect(idp.server.isTokenActive(token, tenant: "demo"))
        #expect(idp.server.auditLog().filter { $0.event == .tokensRefreshed }.map(\.detail) == ["offline token rotated", "offline token rotated"])
        _ = await mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: uma, clearBehavior: .CLEAR_OFFLINE))
        idp.clock.advance(by: .seconds(301))
        do {
            _ = try await mc.validAccessToken(for: uma)
            Issue.record("expected noTokenData")
        } catch let error as McTokenError {
            #expect(error.reason == .noTokenData && error.status == .kNoTokenDataAvailable)
        }
    }

    @Test("a user who is not logged in gets loginRequired; an expired refresh token is refused")
    func refusals() async throws {
        let mc = await loggedIn()
        _ = await mc.receive(KSMRestartEvent())
        await #expect(throws: McTokenError.self) { try await mc.validAccessToken(for: uma) }
        do {
            _ = try await mc.validAccessToken(for: uma)
        } catch let error as McTokenError {
            #expect(error.reason == .loginRequired && error.status == .kLoginRequired)
        }
        #expect(await (mc.receive(KSMOfflineLoginEvent()) as! KSMOfflineLoginResultEvent).status == .kOk)
        _ = await mc.receive(KSMClearIamTokenCacheEvent(userIdentifier: uma, clearBehavior: .CLEAR_OFFLINE))
        idp.clock.advance(by: .seconds(3 * 3600))
        do {
            _ = try await mc.validAccessToken(for: uma)
            Issue.record("expected a refusal")
        } catch let error as McTokenError {
            #expect(error.reason == .refused("invalid_grant"))
            #expect(error.errorDescription == "the IDP refused the refresh: invalid_grant: refresh token has expired")
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
