import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// The truth of a run: which user each flow is for and what that user's answers are. The
    /// provider under test answers from it (``SystemStress/Options/makeProvider``); used as the
    /// provider itself by default.
    public final class Credentials: IdpSdkInteractionInterface, Sendable {
        private let answers = LockedValue<[String: [String: String]]>([:])

        /// What the flow of `interactionData` should answer (by its traceparent's trace id), or `nil`.
        public func values(for interactionData: IdpSdkInteractionData) -> [String: String]? {
            guard let trace = TraceParent.seamTrace(interactionData.traceParent) else { return nil }
            return answers.withLock { $0[trace] }
        }

        func set(_ values: [String: String], trace: String) { answers.withLock { $0[trace] = values } }

        /// Answers exactly the asked fields from the flow's truth (found by its trace id), on the
        /// calling thread.
        ///
        /// - Parameter interactionData: The step to answer.
        /// - Returns: The values, or an error when the flow has no truth.
        public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
            guard let values = values(for: interactionData) else {
                return .init(error: IdpSdkError("IdpHarness.Stress.Credentials", 1, "no answers for this flow's trace"))
            }
            var answer: [String: String] = [:]
            for id in interactionData.inputFieldIds { answer[id] = values[id] }
            return .init(credentials: answer)
        }
    }
}
