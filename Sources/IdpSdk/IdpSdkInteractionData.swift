import Synchronization

/// Identifies one `getAuthorizationCode` call across all its steps. Unique within the process.
public struct IdpSdkFlowID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    private static let counter = Atomic<UInt64>(0)

    static func next() -> IdpSdkFlowID {
        IdpSdkFlowID(rawValue: counter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    public static func < (lhs: IdpSdkFlowID, rhs: IdpSdkFlowID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "flow-\(rawValue)" }
}

/// One input of the IDP's form for the current step.
public struct IdpSdkInputField: Sendable, Equatable {
    /// The field id (`interactionData.inputFieldIds` lists these).
    public let id: String
    /// The label the form shows next to it.
    public let label: String?
    /// Whether the form marks it as a password input.
    public let isSecret: Bool

    public init(id: String, label: String?, isSecret: Bool) {
        self.id = id
        self.label = label
        self.isSecret = isSecret
    }
}

/// What `provideCredentials` is asked, and everything a provider serving many flows at once
/// needs to tell them apart and follow their steps.
public struct IdpSdkInteractionData: Sendable, CustomStringConvertible {
    /// The field ids the current step asks, in form order. Answer exactly these.
    public let inputFieldIds: [String]
    /// The same fields with their labels and whether they are secret.
    public let inputFields: [IdpSdkInputField]
    /// The flow this call belongs to; the same for every step of one `getAuthorizationCode`.
    public let flowId: IdpSdkFlowID
    /// The form step, from 1; it grows when the IDP serves a new form.
    public let step: Int
    /// The attempt at this step, from 1; it grows when the IDP rejected the previous answer.
    public let attempt: Int
    /// The tenant of the `IdpSdkService`.
    public let tenantId: String
    /// The IDP client of the flow (`KssIdpEnrollment`, `KssIdpLogin`, …).
    public let clientId: String
    /// The `userId` passed to `getAuthorizationCode`: `nil` for an activation, the enrolled user's
    /// id for a login.
    public let userId: String?
    /// The validated W3C traceparent passed to `getAuthorizationCode`, if any.
    public let traceParent: String?
    /// Why the IDP rejected the previous answer to this step (code
    /// ``IdpSdkError/Code/credentialsRejected``; the description carries the IDP's reason and
    /// message), or `nil` on a first attempt.
    public let previousError: IdpSdkError?

    public init(
        inputFields: [IdpSdkInputField],
        flowId: IdpSdkFlowID,
        step: Int,
        attempt: Int,
        tenantId: String,
        clientId: String,
        userId: String?,
        traceParent: String?,
        previousError: IdpSdkError?
    ) {
        self.inputFieldIds = inputFields.map(\.id)
        self.inputFields = inputFields
        self.flowId = flowId
        self.step = step
        self.attempt = attempt
        self.tenantId = tenantId
        self.clientId = clientId
        self.userId = userId
        self.traceParent = traceParent
        self.previousError = previousError
    }

    public var description: String {
        "IdpSdkInteractionData(\(flowId), client: \(clientId), step: \(step), attempt: \(attempt), fields: \(inputFieldIds)\(previousError.map { ", rejected: \($0.errorDescription)" } ?? ""))"
    }
}
