/// Why a `traceparent` header value was rejected.
package struct TraceParentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rule of W3C Trace Context Level 1 §3.2 that the value breaks. Lengths and positions
    /// count UTF-8 bytes from zero.
    package enum Reason: Sendable, Equatable {
        /// The value is empty.
        case empty
        /// The value has this many bytes: version 00 needs exactly 55, any version at least 55.
        case wrongLength(Int)
        /// The version is not two lower-case hex digits.
        case invalidVersion
        /// The version is `ff`, which the specification forbids.
        case forbiddenVersion
        /// The byte at this position is not a lower-case hex digit.
        case invalidCharacter(position: Int)
        /// The byte at this position should be `-`.
        case missingDash(position: Int)
        /// The trace-id is all zeros.
        case zeroTraceId
        /// The parent-id is all zeros.
        case zeroParentId
    }

    /// The broken rule.
    package let reason: Reason
    /// The rejected value, cut to its first 64 characters so a hostile header cannot flood logs.
    package let input: String

    /// Creates an error.
    /// - Parameters:
    ///   - reason: The broken rule.
    ///   - input: The rejected value; only its first 64 characters are kept.
    package init(_ reason: Reason, input: String) {
        self.reason = reason
        self.input = String(input.prefix(64))
    }

    /// A message naming the value and the broken rule, e.g.
    /// `invalid traceparent '00-000…': trace-id is all zeros`.
    package var description: String {
        let problem = switch reason {
        case .empty: "value is empty"
        case .wrongLength(let length): "length is \(length), expected 55"
        case .invalidVersion: "version is not two lower-case hex digits"
        case .forbiddenVersion: "version ff is forbidden"
        case .invalidCharacter(let position): "character at position \(position) is not a lower-case hex digit"
        case .missingDash(let position): "expected '-' at position \(position)"
        case .zeroTraceId: "trace-id is all zeros"
        case .zeroParentId: "parent-id is all zeros"
        }
        return "invalid traceparent '\(input)': \(problem)"
    }
}
