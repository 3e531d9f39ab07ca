import IdpWireFormats
import Synchronization

/// Identifies one `getAuthorizationCode` call across all its steps. Unique within the process.
public struct IdpSdkFlowID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number behind the id, from 1. Each thread that starts flows takes numbers in blocks
    /// of 256, so flows started on one thread are numbered in the order
    /// they start, and starting a flow writes no memory that other threads write.
    public let rawValue: UInt64

    /// The id with this number; for tests and wrappers that make their own interaction data.
    /// An id that must not collide with any other flow's comes from ``next()``.
    ///
    /// - Parameter rawValue: The flow's number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A new id, unique within the process: the next number of the calling thread's block, the
    /// numbering the engine gives its own flows. For tools and wrappers that make their own
    /// interaction data, so that their flows are named as briefly as the engine's and never share
    /// an id with one.
    ///
    /// - Returns: An id no other call returned in this process.
    public static func next() -> IdpSdkFlowID { IdpSdkFlowID(rawValue: FlowIDBlocks.next()) }

    /// Orders flows by their numbers: flows started on one thread in the order they started.
    ///
    /// - Parameters:
    ///   - lhs: A flow id.
    ///   - rhs: Another flow id.
    /// - Returns: Whether `lhs` has the lower number.
    public static func < (lhs: IdpSdkFlowID, rhs: IdpSdkFlowID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `flow-<number>`: how logs, verdicts and reports name the flow.
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

    /// A form input.
    ///
    /// - Parameters:
    ///   - id: The field id.
    ///   - label: The label the form shows next to it; `nil` if none.
    ///   - isSecret: Whether the form marks it as a password input.
    public init(id: String, label: String?, isSecret: Bool) {
        self.id = id
        self.label = label
        self.isSecret = isSecret
    }
}

/// What `provideCredentials` is asked, and everything a provider serving many flows at once
/// needs to tell them apart and follow their steps.
///
/// A value type whose fields live in one immutable shared box: copying it (into a closure, a log, a
/// wrapper's call) is one reference-count increment, not one per field.
public struct IdpSdkInteractionData: Sendable, CustomStringConvertible {
    /// Where ``inputFields`` comes from: the fields a caller gave, or the form the engine read, whose
    /// visible inputs are the fields (made only when asked for: a provider reads the ids).
    @usableFromInline
    enum FieldSource: Sendable {
        case fields([IdpSdkInputField])
        case form([XHTMLForm.Input])
    }

    /// The fields, created once per step and never changed. Inlinable, so a provider in another
    /// module reads a field with a load, not a call.
    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline let inputFieldIds: [String]
        @usableFromInline let fieldSource: FieldSource
        @usableFromInline let flowId: IdpSdkFlowID
        @usableFromInline let step: Int
        @usableFromInline let attempt: Int
        @usableFromInline let tenantId: String
        @usableFromInline let clientId: String
        @usableFromInline let userId: String?
        @usableFromInline let traceParent: String?
        @usableFromInline let previousError: IdpSdkError?

        init(inputFieldIds: [String], fieldSource: FieldSource, flowId: IdpSdkFlowID, step: Int, attempt: Int, tenantId: String,
             clientId: String, userId: String?, traceParent: String?, previousError: IdpSdkError?) {
            self.inputFieldIds = inputFieldIds
            self.fieldSource = fieldSource
            self.flowId = flowId
            self.step = step
            self.attempt = attempt
            self.tenantId = tenantId
            self.clientId = clientId
            self.userId = userId
            self.traceParent = traceParent
            self.previousError = previousError
        }
    }

    @usableFromInline let storage: Storage

    /// The field ids the current step asks, in form order. Answer exactly these.
    @inlinable public var inputFieldIds: [String] { storage.inputFieldIds }
    /// The same fields with their labels and whether they are secret.
    public var inputFields: [IdpSdkInputField] {
        switch storage.fieldSource {
        case .fields(let fields):
            return fields
        case .form(let inputs):
            var fields: [IdpSdkInputField] = []
            fields.reserveCapacity(storage.inputFieldIds.count)
            for index in 0..<inputs.count where inputs[index].isVisible {
                fields.append(IdpSdkInputField(id: inputs[index].id, label: inputs[index].label, isSecret: inputs[index].type == "password"))
            }
            return fields
        }
    }
    /// The flow this call belongs to; the same for every step of one `getAuthorizationCode`.
    @inlinable public var flowId: IdpSdkFlowID { storage.flowId }
    /// The form step, from 1; it grows when the IDP serves a new form.
    @inlinable public var step: Int { storage.step }
    /// The attempt at this step, from 1; it grows when the IDP rejected the previous answer.
    @inlinable public var attempt: Int { storage.attempt }
    /// The tenant of the `IdpSdkService`.
    @inlinable public var tenantId: String { storage.tenantId }
    /// The IDP client of the flow (`KssIdpEnrollment`, `KssIdpLogin`, …).
    @inlinable public var clientId: String { storage.clientId }
    /// The `userId` passed to `getAuthorizationCode`: `nil` for an activation, the enrolled user's
    /// id for a login.
    @inlinable public var userId: String? { storage.userId }
    /// The validated W3C traceparent passed to `getAuthorizationCode`, if any.
    @inlinable public var traceParent: String? { storage.traceParent }
    /// Why the IDP rejected the previous answer to this step (code
    /// ``IdpSdkError/Code/credentialsRejected``; the description carries the IDP's reason and
    /// message), or `nil` on a first attempt.
    @inlinable public var previousError: IdpSdkError? { storage.previousError }

    /// Interaction data, as the SDK builds it for each call; for tests and wrappers that call a
    /// provider themselves.
    ///
    /// - Parameters:
    ///   - inputFields: The fields the step asks, in form order.
    ///   - flowId: The flow the call belongs to.
    ///   - step: The form step, from 1.
    ///   - attempt: The attempt at this step, from 1.
    ///   - tenantId: The tenant of the flow.
    ///   - clientId: The IDP client of the flow.
    ///   - userId: The user the flow is for; `nil` for an activation.
    ///   - traceParent: The W3C traceparent of the flow, if any.
    ///   - previousError: Why the IDP rejected the previous answer; `nil` on a first attempt.
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
        var ids: [String] = []
        ids.reserveCapacity(inputFields.count)
        for index in 0..<inputFields.count { ids.append(inputFields[index].id) }
        storage = Storage(inputFieldIds: ids, fieldSource: .fields(inputFields), flowId: flowId, step: step, attempt: attempt,
                          tenantId: tenantId, clientId: clientId, userId: userId, traceParent: traceParent, previousError: previousError)
    }

    /// Interaction data for the visible inputs (``XHTMLForm/Input/isVisible``) of the form the
    /// engine read, in form order: their ids now, their fields when ``inputFields`` is read.
    init(form inputs: [XHTMLForm.Input], flowId: IdpSdkFlowID, step: Int, attempt: Int, tenantId: String,
         clientId: String, userId: String?, traceParent: String?, previousError: IdpSdkError?) {
        var ids: [String] = []
        ids.reserveCapacity(inputs.count)
        for index in 0..<inputs.count where inputs[index].isVisible { ids.append(inputs[index].id) }
        storage = Storage(inputFieldIds: ids, fieldSource: .form(inputs), flowId: flowId, step: step, attempt: attempt,
                          tenantId: tenantId, clientId: clientId, userId: userId, traceParent: traceParent, previousError: previousError)
    }

    /// The flow, client, step, attempt and field ids, and the rejection if any; never a value.
    public var description: String {
        "IdpSdkInteractionData(\(flowId), client: \(clientId), step: \(step), attempt: \(attempt), fields: \(inputFieldIds)\(previousError.map { ", rejected: \($0.errorDescription)" } ?? ""))"
    }
}
