/// Why percent-encoded or form-encoded text could not be decoded.
package struct FormURLEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong with the text.
    package enum Reason: Sendable, Equatable {
        /// The `%` at this UTF-8 byte offset is not followed by two hex digits.
        case malformedEscape(offset: Int)
        /// The decoded bytes are not valid UTF-8.
        case invalidUTF8
    }

    /// What was wrong.
    package let reason: Reason
    /// The text that was being decoded; offsets in ``reason`` count UTF-8 bytes into it.
    package let text: String

    /// Creates an error.
    /// - Parameters:
    ///   - reason: What was wrong.
    ///   - text: The text that was being decoded.
    package init(_ reason: Reason, text: String) {
        self.reason = reason
        self.text = text
    }

    /// A message naming the problem and quoting the text (its first 64 characters).
    package var description: String {
        let excerpt = text.count > 64 ? String(text.prefix(64)) + "…" : text
        return switch reason {
        case .malformedEscape(let offset):
            "malformed percent-escape at offset \(offset) in '\(excerpt)'"
        case .invalidUTF8:
            "percent-decoded bytes are not valid UTF-8 in '\(excerpt)'"
        }
    }
}
