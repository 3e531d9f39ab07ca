import Foundation
import IdpPrimitives

// The token endpoint's planted bugs (`PlantedBug.idpSkipsPkceCheck`, `idpCodeStaysRedeemable`,
// `idpRedeemsOnEarlierRead`, `idpReuseRevokesNothing`, `idpChecksVerifierUnderGrantLock`,
// `idpIssuesExpiredAccessTokens`),
// beside it: one hook per site; a release build compiles each to the unplanted behaviour.
extension IdpServer {
    #if DEBUG
    /// In `codeGrantRequest`: the request, carrying the endpoint's planted bug to the code's decision.
    func plantedRequest(_ presented: PresentedCode) -> PresentedCode {
        var presented = presented
        presented.planted = configuration.plantedBug
        return presented
    }

    /// In `redeemCode`, under the grant shard's lock: the request a planted endpoint decides on
    /// (`idpChecksVerifierUnderGrantLock`: made again there, its verifier's SHA-256 with it).
    func plantedUnderLock(_ presented: PresentedCode) -> PresentedCode {
        guard presented.planted.isOn(.idpChecksVerifierUnderGrantLock) else { return presented }
        var again = PresentedCode(tenant: presented.tenant, clientId: presented.clientId, redirectURI: presented.redirectURI, verifier: presented.verifier,
                                  now: presented.now)
        again.planted = presented.planted
        return again
    }

    /// In `openFamily`: the access tokens' lifetime at a planted endpoint
    /// (`idpIssuesExpiredAccessTokens`: none); `nil`: the configured one.
    var plantedAccessLifetime: TimeInterval? { configuration.plantedBug.isOn(.idpIssuesExpiredAccessTokens) ? 0 : nil }

    /// In `refreshDecision`: whether a planted endpoint leaves the family of a rotated refresh
    /// token presented again live (`idpReuseRevokesNothing`).
    var plantedReuseRevokesNothing: Bool { configuration.plantedBug.isOn(.idpReuseRevokesNothing) }
    #else
    @inline(__always)
    func plantedRequest(_ presented: PresentedCode) -> PresentedCode { presented }
    @inline(__always)
    func plantedUnderLock(_ presented: PresentedCode) -> PresentedCode { presented }
    @inline(__always)
    var plantedAccessLifetime: TimeInterval? { nil }
    @inline(__always)
    var plantedReuseRevokesNothing: Bool { false }
    #endif
}

extension PresentedCode {
    #if DEBUG
    /// In `refusal(of:)`: whether a planted endpoint skips the PKCE check (`idpSkipsPkceCheck`).
    var plantedSkipsVerifier: Bool { planted.isOn(.idpSkipsPkceCheck) }
    /// In `GrantShard.redeem`: whether a planted endpoint leaves a redeemed code issued
    /// (`idpCodeStaysRedeemable`).
    var plantedKeepsCode: Bool { planted.isOn(.idpCodeStaysRedeemable) }
    /// In `GrantShard.redeem`, on a code found redeemed: the record a planted endpoint redeems it
    /// again on (`idpRedeemsOnEarlierRead`: the one the request's earlier lock section found
    /// issued and redeemable); `nil`: none, the reuse is refused.
    func plantedEarlierRead(_ checked: CheckedCode?) -> CodeRecord? {
        guard planted.isOn(.idpRedeemsOnEarlierRead), let checked, checked.verdict == .redeemable else { return nil }
        return checked.record
    }
    /// In `GrantShard.redeem`, on a code presented again: whether a planted endpoint leaves the
    /// family its redemption opened live (`idpReuseRevokesNothing`).
    var plantedReuseRevokesNothing: Bool { planted.isOn(.idpReuseRevokesNothing) }
    #else
    @inline(__always) var plantedSkipsVerifier: Bool { false }
    @inline(__always) var plantedKeepsCode: Bool { false }
    @inline(__always) func plantedEarlierRead(_ checked: CheckedCode?) -> CodeRecord? { nil }
    @inline(__always) var plantedReuseRevokesNothing: Bool { false }
    #endif
}
