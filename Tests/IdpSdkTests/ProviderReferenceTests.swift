@testable import IdpSdk
import Testing

@Suite("A flow sees its provider's roles as a cast would, whatever the thread has cached")
struct ProviderReferenceTests {
    struct Plain: IdpSdkInteractionInterface {
        func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { .init(credentials: [:]) }
    }

    /// Non-blocking as each instance says: two of one type may answer differently.
    struct Switchable: IdpSdkNonBlockingProvider {
        let neverBlocks: Bool
        var providesCredentialsWithoutBlocking: Bool { neverBlocks }
        func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { .init(credentials: [:]) }
    }

    final class Observing: IdpSdkFlowObserving, IdpSdkNonBlockingProvider {
        func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { .init(credentials: [:]) }
        func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {}
    }

    class Base: IdpSdkInteractionInterface {
        func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { .init(credentials: [:]) }
    }

    /// Adds both roles to a base that has neither.
    final class Derived: Base, IdpSdkFlowObserving, IdpSdkNonBlockingProvider, @unchecked Sendable {
        func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {}
    }

    /// What two casts of `provider` find, the answer the cache must give.
    static func cast(_ provider: any IdpSdkInteractionInterface) -> (observes: Bool, neverBlocks: Bool) {
        (provider is any IdpSdkFlowObserving, (provider as? any IdpSdkNonBlockingProvider)?.providesCredentialsWithoutBlocking ?? false)
    }

    @Test("providers of more types than a thread keeps, taken in turn, each get their own roles")
    func rolesFollowTheType() {
        // Given providers of six types (more than the cache holds), a subclass held as its base
        // among them
        let asBase: Base = Derived()
        let providers: [any IdpSdkInteractionInterface] = [
            Plain(), Switchable(neverBlocks: true), Observing(), Base(), asBase, Switchable(neverBlocks: false), ClosureProviderStandIn(),
        ]

        // When a flow's reference is made for each, round after round on one thread
        for round in 0..<3 {
            for (index, provider) in providers.enumerated() {
                let reference = ProviderReference(provider)

                // Then it has the roles the casts find, and an observing object is its own observer
                let expected = Self.cast(provider)
                #expect(reference.neverBlocks == expected.neverBlocks, "round \(round), provider \(index)")
                #expect((reference.observer != nil) == expected.observes, "round \(round), provider \(index)")
                if let object = (provider as? Observing).map({ $0 as AnyObject }) ?? (provider as? Derived).map({ $0 as AnyObject }) {
                    #expect(reference.observer as? AnyObject === object, "round \(round), provider \(index)")
                }
            }
        }
        #expect(ProviderReference(asBase).observer != nil && ProviderReference(asBase).neverBlocks)
    }

    @Test("two providers of one type that answer differently whether they block are each taken at their word")
    func neverBlocksIsPerInstance() {
        for _ in 0..<3 {
            #expect(ProviderReference(Switchable(neverBlocks: true)).neverBlocks)
            #expect(!ProviderReference(Switchable(neverBlocks: false)).neverBlocks)
        }
    }

    struct ClosureProviderStandIn: IdpSdkFlowObserving {
        func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { .init(credentials: [:]) }
        func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {}
    }
}
