import IdpSdk

/// Lets a provider written for the standard field ids serve an IDP client with custom ones.
///
/// ```swift
/// // The IDP asks "corp-user" and "corp-secret"; the store knows "username" and "password".
/// let provider = FieldMappingProvider(store, mapping: ["corp-user": "username", "corp-secret": "password"])
/// ```
///
/// The wrapped provider is asked the mapped ids; its answer is keyed back to the IDP's ids. Ids
/// without a mapping pass through unchanged. Immutable: thread-safe at no cost beyond two small
/// dictionaries per call.
public struct FieldMappingProvider: IdpSdkFlowObserving, IdpSdkNonBlockingProvider, Sendable, CustomStringConvertible {
    /// The wrapped provider.
    public let base: any IdpSdkInteractionInterface & Sendable
    /// Whether `base` observes flows: found once, so that a flow's end costs no cast when it does not.
    private let baseObservesFlows: Bool
    /// IDP field id → the id the wrapped provider knows.
    public let mapping: [String: String]

    /// Wraps `base`, asking it the mapped field ids.
    /// - Parameters:
    ///   - base: The wrapped provider.
    ///   - mapping: IDP field id → the id `base` knows.
    public init(_ base: any IdpSdkInteractionInterface & Sendable, mapping: [String: String]) {
        self.base = base
        baseObservesFlows = base is any IdpSdkFlowObserving
        self.mapping = mapping
    }

    /// Asks the wrapped provider the mapped field ids and keys its answer back to the IDP's ids, on
    /// the calling thread.
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: The wrapped provider's values under the IDP's field ids, or its error unchanged.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let fields = interactionData.inputFields.map { IdpSdkInputField(id: mapping[$0.id] ?? $0.id, label: $0.label, isSecret: $0.isSecret) }
        let mapped = IdpSdkInteractionData(
            inputFields: fields, flowId: interactionData.flowId, step: interactionData.step, attempt: interactionData.attempt,
            tenantId: interactionData.tenantId, clientId: interactionData.clientId, userId: interactionData.userId,
            traceParent: interactionData.traceParent, previousError: interactionData.previousError
        )
        let result = base.provideCredentials(mapped)
        guard let credentials = result.credentials else { return result }
        var answer: [String: String] = [:]
        for original in interactionData.inputFieldIds {
            if let value = credentials[mapping[original] ?? original] { answer[original] = value }
        }
        return .init(credentials: answer)
    }

    /// As the wrapped provider's: `true` only if it is an `IdpSdkNonBlockingProvider` that never blocks.
    public var providesCredentialsWithoutBlocking: Bool {
        (base as? any IdpSdkNonBlockingProvider)?.providesCredentialsWithoutBlocking ?? false
    }

    /// Passes the end on to the wrapped provider, if it observes flows.
    ///
    /// - Parameter flowId: The flow that ended during a call.
    public func flowEndedDuringCall(_ flowId: IdpSdkFlowID) {
        guard baseObservesFlows else { return }
        (base as? any IdpSdkFlowObserving)?.flowEndedDuringCall(flowId)
    }

    /// Passes the end on to the wrapped provider, if it observes flows.
    ///
    /// - Parameters:
    ///   - flowId: The flow that ended.
    ///   - result: How it ended.
    public func flowDidEnd(_ flowId: IdpSdkFlowID, result: IdpSdkResult) {
        guard baseObservesFlows else { return }
        (base as? any IdpSdkFlowObserving)?.flowDidEnd(flowId, result: result)
    }

    /// The wrapped provider and the mapping; never a value.
    public var description: String { "FieldMappingProvider(\(base), mapping: \(mapping))" }
}
