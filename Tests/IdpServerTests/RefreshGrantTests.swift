import Foundation
import IdpPrimitives
import IdpWireFormats
@testable import IdpServer
import Testing

extension Browser {
    func refresh(_ token: String, clientId: String = "KssIdpLogin") -> (status: Int, json: [String: Any]) {
        self.token([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", clientId)])
    }

    /// A full login for alice: the code grant's JSON.
    func login() throws -> [String: Any] {
        let (status, json) = exchange(try code())
        #expect(status == 200)
        return json
    }
}

@Suite("The refresh-token grant")
struct RefreshGrantTests {
    @Test("a refresh token is rotated: new access and refresh tokens; the old refresh token is spent")
    func rotation() throws {
        let browser = Browser()
        let login = try browser.login()
        let refresh = try #require(login["refresh_token"] as? String)
        let (status, json) = browser.refresh(refresh)
        #expect(status == 200)
        let access = try #require(json["access_token"] as? String)
        let rotated = try #require(json["refresh_token"] as? String)
        #expect(rotated != refresh && access != login["access_token"] as? String)
        #expect(json["refresh_token_type"] as? String == "Refresh" && json["user_id"] as? String == "alice")
        #expect(browser.server.isTokenActive(access, tenant: "demo") && browser.server.isTokenActive(rotated, tenant: "demo"))
        #expect(browser.count(.tokensRefreshed) == 1)
    }

    @Test("presenting a spent refresh token fails and revokes the whole family, offline token included")
    func reuseRevokesTheFamily() throws {
        let browser = Browser()
        let login = try browser.login()
        let refresh = try #require(login["refresh_token"] as? String)
        let offline = try #require(login["offline_token"] as? String)
        let rotated = try #require(browser.refresh(refresh).json["refresh_token"] as? String)
        // When the spent token is presented again
        let (status, json) = browser.refresh(refresh)
        // Then it fails, and nothing of that login is usable any more
        #expect(status == 400)
        #expect(json["error"] as? String == "invalid_grant")
        #expect(json["error_description"] as? String == "refresh token was already used; its token family is revoked")
        for token in [rotated, offline, login["access_token"] as! String] {
            #expect(!browser.server.isTokenActive(token, tenant: "demo"))
        }
        #expect(browser.refresh(rotated).json["error_description"] as? String == "refresh token has been revoked")
        #expect(browser.count(.refreshTokenReused) == 1)
        // A second login is a new family, untouched
        let again = try #require(try browser.login()["refresh_token"] as? String)
        #expect(browser.refresh(again).status == 200)
    }

    @Test("a code presented again revokes everything that login led to: its first tokens, rotations and exchanged tokens")
    func codeReuseRevokesTheFamily() throws {
        let browser = Browser()
        let code = try browser.code()
        let login = browser.exchange(code).json
        let access = try #require(login["access_token"] as? String)
        let refresh = try #require(login["refresh_token"] as? String)
        let rotated = try #require(browser.refresh(refresh).json["refresh_token"] as? String)
        let exchanged = try #require(browser.token([
            ("grant_type", IdpServer.tokenExchangeGrantType), ("subject_token", access),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"), ("audience", "payments"), ("client_id", "KssIdpLogin"),
        ]).json["access_token"] as? String)
        let other = try browser.login()
        #expect(browser.server.isTokenActive(rotated, tenant: "demo") && browser.server.isTokenActive(exchanged, tenant: "demo"))
        // When the code is presented again
        let (status, json) = browser.exchange(code)
        // Then it fails, and every token that came of it is dead; another login's are not
        #expect(status == 400)
        #expect(json["error_description"] as? String == "authorization code was already used; the tokens it issued are revoked")
        for token in [access, rotated, exchanged, login["offline_token"] as! String] {
            #expect(!browser.server.isTokenActive(token, tenant: "demo"))
        }
        #expect(browser.server.introspect(exchanged, tenant: "demo")?.active == false)
        #expect(browser.refresh(rotated).json["error_description"] as? String == "refresh token has been revoked")
        let otherAccess = try #require(other["access_token"] as? String)
        #expect(browser.server.isTokenActive(otherAccess, tenant: "demo"))
    }

    @Test("a revoked family's tokens are dead at once, and an expired token is kept and told as expired for a day")
    func revokedAndExpired() throws {
        let browser = Browser()
        let login = try browser.login()
        let refresh = try #require(login["refresh_token"] as? String)
        _ = browser.refresh(refresh)
        _ = browser.refresh(refresh)  // reuse: the family (three tokens, then two rotated) is revoked
        for token in ["access_token", "refresh_token", "offline_token"] {
            #expect(!browser.server.isTokenActive(try #require(login[token] as? String), tenant: "demo"))
        }
        let live = try browser.login()
        #expect(browser.server.statistics().tokens == 8)
        // Expired, but within the day they are kept: a late one is told as expired.
        browser.clock.advance(by: .seconds(1_801))
        _ = try browser.login()
        #expect(browser.server.statistics().tokens == 11)
        let liveRefresh = try #require(live["refresh_token"] as? String)
        #expect(browser.refresh(liveRefresh).json["error_description"] as? String == "refresh token has expired")
    }

    @Test("a token entered drops up to two tokens of its kind that expired a day ago or more, and keeps the rest")
    func pruning() {
        // Given a shard with four access tokens and a refresh token that expire at 300 s
        var shard = GrantShard()
        let start = Date(timeIntervalSince1970: 0)
        func add(_ kind: TokenRecord.Kind, expiresAt: TimeInterval, now: Date = start) -> GrantHandle {
            shard.add(TokenRecord(kind: kind, tenant: "demo", clientId: "KssIdpLogin", userId: "alice", expiresAt: start.addingTimeInterval(expiresAt),
                                  family: FamilyID(position: 0)), as: .draft(route: 1), now: now).0
        }
        for _ in 0..<4 { _ = add(.access, expiresAt: 300) }
        let refresh = add(.refresh, expiresAt: 300)
        // When an access token is entered less than a day after they expired, then all are kept
        let late = add(.access, expiresAt: 600, now: start.addingTimeInterval(300 + keptAfterExpiry - 1))
        #expect(shard.tokenCount == 6)
        // When two are entered a day after, then each drops two expired access tokens, and the
        // refresh token, of another kind, and the access token that is not a day expired stay
        let dayAfter = start.addingTimeInterval(300 + keptAfterExpiry)
        let next1 = add(.access, expiresAt: 900, now: dayAfter)
        #expect(shard.tokenCount == 5)
        let next2 = add(.access, expiresAt: 900, now: dayAfter)
        #expect(shard.tokenCount == 4)
        #expect(shard.tokenHandles.map(\.text).sorted() == [refresh, late, next1, next2].map(\.text).sorted())
    }

    @Test("an expiry queue gives back its expired keys oldest first, a few at a time, and keeps the rest through its growth")
    func expiryQueue() {
        var queue = ExpiryQueue<Int>()
        let start = Date(timeIntervalSince1970: 0)
        for key in 0..<100 { queue.append(key, expiresAt: start.addingTimeInterval(Double(key))) }
        var popped: [Int] = []
        queue.popExpired(now: start.addingTimeInterval(9.5), limit: 4) { popped.append($0) }
        #expect(popped == [0, 1, 2, 3])
        queue.popExpired(now: start.addingTimeInterval(9.5), limit: 100) { popped.append($0) }
        #expect(popped == Array(0...9))
        for key in 100..<300 { queue.append(key, expiresAt: start.addingTimeInterval(Double(key))) }
        popped = []
        queue.popExpired(now: start.addingTimeInterval(1_000), limit: 1_000) { popped.append($0) }
        #expect(popped == Array(10..<300) && queue.count == 0)
    }

    @Test("an offline token is rotated too, but its session ends at Offline Session Max from the login")
    func offlineSessionMax() throws {
        let browser = Browser()
        #expect(browser.server.configuration.offlineSessionMax == .seconds(30 * 24 * 3600))
        var offline = try #require(try browser.login()["offline_token"] as? String)
        // Rotating it every 10 days keeps it going only until day 30
        for daysLeft in [20, 10] {
            browser.clock.advance(by: .seconds(10 * 24 * 3600))
            let (status, json) = browser.refresh(offline)
            #expect(status == 200)
            #expect(json["refresh_token_type"] as? String == "Offline")
            #expect(json["refresh_expires_in"] as? Int == daysLeft * 24 * 3600)
            offline = try #require(json["refresh_token"] as? String)
        }
        browser.clock.advance(by: .seconds(10 * 24 * 3600))
        let (status, json) = browser.refresh(offline)
        #expect(status == 400)
        #expect(json["error_description"] as? String == "the offline session has ended (Offline Session Max)")
        #expect(!browser.server.isTokenActive(offline, tenant: "demo"))
    }

    @Test("an expired refresh token, an access token, another client's token and missing parameters are refused by name")
    func refusals() throws {
        let browser = Browser()
        let login = try browser.login()
        let refresh = try #require(login["refresh_token"] as? String)
        #expect(browser.refresh(login["access_token"] as! String).json["error_description"] as? String == "refresh token is unknown")
        #expect(browser.refresh(refresh, clientId: "KssIdpEnrollment").json["error_description"] as? String == "refresh token was issued to another client")
        #expect(browser.token([("grant_type", "refresh_token"), ("client_id", "KssIdpLogin")]).json["error_description"] as? String == "missing parameter 'refresh_token'")
        #expect(browser.token([("grant_type", "refresh_token"), ("refresh_token", refresh)]).json["error_description"] as? String == "missing parameter 'client_id'")
        browser.clock.advance(by: .seconds(1800))
        #expect(browser.refresh(refresh).json["error_description"] as? String == "refresh token has expired")
    }

    @Test("a locked user's refresh is refused with the lock")
    func lockedUserRefresh() throws {
        let browser = Browser(lockout: LockoutPolicy(maximumFailures: 1, lockoutDuration: .seconds(60)))
        let offline = try #require(try browser.login()["offline_token"] as? String)
        let lock = try #require(Browser.lockout(in: try browser.attempt("wrong")))
        let (status, json) = browser.refresh(offline)
        #expect(status == 400)
        #expect(LockoutInformation(error: json["error"] as? String ?? "", lockedUntil: json["locked_until"] as? String) == lock)
        browser.clock.set(lock.lockedUntil)
        #expect(browser.refresh(offline).status == 200)
    }
}
