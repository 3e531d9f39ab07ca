import IdpPrimitives
import IdpSdk

/// One user's credentials as an immutable value: the simplest thread-safe provider, and the floor
/// the others are measured against.
///
/// ```swift
/// let provider = StaticCredentials([IdpSdkConstants.USERNAME: "alice", IdpSdkConstants.PASSWORD: "s3cret"])
/// ```
///
/// Threading: immutable, so any number of threads may call it at once with no lock. A thread that
/// answers from one instance a second time makes a copy of the values of its own (keys and values
/// of more than 15 UTF-8 bytes copied too) and answers from it from then on, so the reference
/// count an answer writes is one only that thread writes, not the one dictionary every SDK thread
/// would otherwise write. Cost: making one is one small allocation; a call looks up the calling
/// thread's copy (a thread-specific read and a comparison) and, when it asks the same fields as
/// the thread's previous answer, returns that answer again; otherwise it returns the copy itself
/// when the values are exactly the asked fields, or one dictionary lookup per requested field and
/// the answer. A thread keeps the copies of the last 8 instances (and other per-thread users) it
/// served, until it serves others or ends.
/// It answers exactly the fields a step requests; a requested field it has no value for ends the
/// flow with ``CredentialProviderError/Code/missingValue``.
public struct StaticCredentials: IdpSdkNonBlockingProvider, Sendable, CustomStringConvertible {
    /// The values by field id.
    public let values: [String: String]
    /// Each thread's copy of `values`.
    private let copies = ThreadConfined<ThreadCopy>()

    /// A provider that answers `values`.
    /// - Parameter values: The values by field id.
    public init(_ values: [String: String]) {
        self.values = values
    }

    /// Answers exactly the asked fields from ``values`` (from the calling thread's copy of them
    /// once it has one), on the calling thread, without a lock.
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: The asked fields' values, or ``CredentialProviderError/Code/missingValue`` for an
    ///   asked field without one.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        copies.withCurrent(orMake: { ThreadCopy() }) { thread in thread.answer(interactionData, from: values) }
    }

    /// Names the fields, never their values.
    public var description: String { "StaticCredentials(fields: \(values.keys.sorted()))" }
}

/// One thread's copy of a ``StaticCredentials``'s values, made at the thread's second answer (a
/// thread that answers once, from a fixture made for one call, costs no copy), and the last answer
/// it built from the copy with the field ids it answers.
private final class ThreadCopy {
    // Unchecked exclusivity: only the owning thread reaches these, and no access overlaps another.
    @exclusivity(unchecked) private var answered = false
    @exclusivity(unchecked) private var copy: [String: String]?
    @exclusivity(unchecked) private var lastIds: [String] = []
    @exclusivity(unchecked) private var last: IdpSdkProvideCredentialsResult?

    /// Answers from `values` itself the first time, from this thread's copy of them after; the
    /// same fields asked again get the same answer without building it again.
    @inline(__always)
    func answer(_ interactionData: IdpSdkInteractionData, from values: [String: String]) -> IdpSdkProvideCredentialsResult {
        let ids = interactionData.inputFieldIds
        if let last, ids == lastIds { return last }
        guard let copy else {
            if !answered {
                answered = true
                return .answering(interactionData, from: values)
            }
            self.copy = UnsharedCopy.of(values)
            return answer(interactionData, from: values)
        }
        let result = IdpSdkProvideCredentialsResult.answering(interactionData, from: copy)
        // Only answers: an error names the asking flow's user.
        if result.credentials != nil {
            lastIds = ids
            last = result
        }
        return result
    }
}

@available(*, unavailable, message: "a thread's copy belongs to its thread")
extension ThreadCopy: Sendable {}
