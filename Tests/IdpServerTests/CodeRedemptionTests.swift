import Foundation
import IdpPrimitives
@testable import IdpServer
import Testing

/// A code's redemption holds its grant shard in sections: the claim (which reserves the family),
/// then the family's opening, then each token. These tests run the sections one by one on a shard, with other requests'
/// decisions between them.
@Suite("An authorization code's redemption")
struct CodeRedemptionTests {
    let start = Date(timeIntervalSince1970: 1_000_000)
    /// The code ``shardWithCode()`` issues: the first grant of a shard's code log.
    let code = GrantHandle.draft(route: 5).placed(in: .codes, at: 0)

    /// A shard with one issued code, bound to the RFC 7636 Appendix B challenge.
    func shardWithCode() -> GrantShard {
        var shard = GrantShard()
        let (issued, _) = shard.addCode(CodeRecord(tenant: "demo", clientId: "KssIdpLogin", userId: "alice", redirectURI: Browser.redirect,
                                                   codeChallenge: Browser.rfcChallenge, codeChallengeMethod: "S256", astClientId: "device",
                                                   expiresAt: start.addingTimeInterval(60)), as: code, now: start)
        #expect(issued == code)
        return shard
    }

    func presented(verifier: String = Browser.rfcVerifier) -> PresentedCode {
        PresentedCode(tenant: "demo", clientId: "KssIdpLogin", redirectURI: Browser.redirect, verifier: verifier, now: start)
    }

    /// Runs the sections after the claim: the family, then an access token of it; returns the
    /// token's handle.
    func openFamilyAndStoreAToken(_ shard: inout GrantShard, family: FamilyID) -> GrantHandle {
        shard.openFamily(family, TokenFamily(expiresAt: start.addingTimeInterval(3_600), astClientId: "device"))
        return shard.add(TokenRecord(kind: .access, tenant: "demo", clientId: "KssIdpLogin", userId: "alice", expiresAt: start.addingTimeInterval(300),
                                     family: family), as: .draft(route: 5), now: start).0
    }

    /// Redeems the code as the token endpoint does: its record read first, checked outside the
    /// claim, and the claim decided on that verdict.
    func redeem(_ shard: inout GrantShard, verifier: String = Browser.rfcVerifier) -> CodeRedemption {
        let presented = presented(verifier: verifier)
        let checked = shard.issuedRecord(code).map { CheckedCode($0, by: presented) }
        return shard.redeem(code, presented, checked: checked, familyEndsAt: start.addingTimeInterval(3_600), forgetAt: start.addingTimeInterval(1_800),
                            now: start)
    }

    @Test("a verdict reached on another record than the code's is not used: the claim checks the code's own")
    func verdictOnAnotherRecordIsNotUsed() {
        // Given an issued code, and a verdict of "redeemable" reached on a record that is not its
        var shard = shardWithCode()
        let wrong = presented(verifier: String(repeating: "a", count: 43))
        let plainVerifier = String(repeating: "b", count: 43)
        let other = CodeRecord(tenant: "demo", clientId: "KssIdpLogin", userId: "alice", redirectURI: Browser.redirect, codeChallenge: plainVerifier,
                               codeChallengeMethod: "plain", astClientId: "device", expiresAt: start.addingTimeInterval(60))
        let stale = CheckedCode(other, by: PresentedCode(tenant: "demo", clientId: "KssIdpLogin", redirectURI: Browser.redirect,
                                                         verifier: plainVerifier, now: start))
        #expect(stale.verdict == .redeemable)
        // When the claim is made with a wrong verifier and that verdict
        let decision = shard.redeem(code, wrong, checked: stale, familyEndsAt: start.addingTimeInterval(3_600), forgetAt: start.addingTimeInterval(1_800),
                                    now: start)
        // Then the code's own record refuses it, and the code stays issued
        guard case .refused(.wrongVerifier, _) = decision else { Issue.record("the claim was \(decision)"); return }
        #expect(shard.outstandingCodeCount == 1)
        // And the verdict reached on the code's own record is the one used
        let checked = shard.issuedRecord(code).map { CheckedCode($0, by: wrong) }
        #expect(checked?.verdict == .refused(.wrongVerifier))
    }

    @Test("a code presented again after its claim, before its family is opened, is refused as reused, and the family stays closed")
    func replayBetweenClaimAndFamily() throws {
        // Given a code claimed by its redemption
        var shard = shardWithCode()
        guard case .redeemed(_, let reserved) = redeem(&shard) else { Issue.record("the code was not redeemed"); return }
        // When it is presented again before the redemption opens the family
        let replay = redeem(&shard)
        // Then the replay is a reuse, and the family and token the redemption stores after it are dead
        guard case .reused(revoked: nil) = replay else { Issue.record("the replay was \(replay)"); return }
        let access = openFamilyAndStoreAToken(&shard, family: reserved.family)
        #expect(shard.family(reserved.family) == nil)
        #expect(shard.isRevoked(try #require(shard.token(access))))
    }

    @Test("a code presented again after its family is opened revokes the family")
    func replayAfterFamily() throws {
        // Given a redeemed code whose family and a token are stored
        var shard = shardWithCode()
        guard case .redeemed(_, let reserved) = redeem(&shard) else { Issue.record("the code was not redeemed"); return }
        let access = openFamilyAndStoreAToken(&shard, family: reserved.family)
        #expect(!shard.isRevoked(try #require(shard.token(access))))
        // When it is presented again
        let replay = redeem(&shard)
        // Then the replay is a reuse that revoked the open family, and the token is dead
        guard case .reused(revoked: .some) = replay else { Issue.record("the replay was \(replay)"); return }
        #expect(shard.isRevoked(try #require(shard.token(access))))
    }

    @Test("a wrong verifier leaves the code issued; the right one then redeems it, and the counts follow")
    func refusalKeepsTheCode() {
        // Given an issued code
        var shard = shardWithCode()
        #expect(shard.outstandingCodeCount == 1 && shard.redeemedCodeCount == 0)
        // When it is presented with a wrong verifier, then it is refused and stays issued
        guard case .refused(.wrongVerifier, _) = redeem(&shard, verifier: String(repeating: "a", count: 43)) else {
            Issue.record("a wrong verifier was not refused")
            return
        }
        #expect(shard.outstandingCodeCount == 1 && shard.redeemedCodeCount == 0)
        // When the right one follows, then it is redeemed
        guard case .redeemed = redeem(&shard) else { Issue.record("the code was not redeemed"); return }
        #expect(shard.outstandingCodeCount == 0 && shard.redeemedCodeCount == 1)
    }
}
