/// Why an IDP page could not be read as a login form.
package struct XHTMLFormError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong with the page. Offsets count UTF-8 bytes from the start of the page.
    package enum Reason: Sendable, Equatable {
        /// The page has this many bytes, more than ``XHTMLForm/maximumSize``.
        case tooLarge(Int)
        /// The page has no `<form>` element.
        case noForm
        /// The first `<form>` has no (or an empty) `action` attribute.
        case missingAction
        /// The first `<form>` is not closed before the end of the page.
        case unterminatedForm
        /// The `<input>` at this offset has neither an `id` nor a `name`.
        case inputWithoutId(offset: Int)
        /// Two inputs of the form share this id.
        case duplicateInputId(String)
        /// The markup starting at this offset is not a well-formed tag, declaration or
        /// processing instruction.
        case malformedTag(offset: Int)
        /// The comment starting at this offset has no closing `-->`.
        case unterminatedComment(offset: Int)
        /// This entity reference is unknown or malformed (for example `&nbsp;` or `&amp`).
        case invalidEntity(String)
    }

    /// What was wrong.
    package let reason: Reason

    /// Creates an error.
    /// - Parameter reason: What was wrong.
    package init(_ reason: Reason) {
        self.reason = reason
    }

    /// A message naming the problem, and the input id or offset where there is one.
    package var description: String {
        let problem = switch reason {
        case .tooLarge(let size): "page is \(size) bytes, more than the \(XHTMLForm.maximumSize) allowed"
        case .noForm: "page has no <form> element"
        case .missingAction: "the <form> has no action attribute"
        case .unterminatedForm: "the <form> is not closed by </form>"
        case .inputWithoutId(let offset): "the <input> at offset \(offset) has neither an id nor a name"
        case .duplicateInputId(let id): "more than one input has the id '\(id)'"
        case .malformedTag(let offset): "malformed tag at offset \(offset)"
        case .unterminatedComment(let offset): "the comment at offset \(offset) is not closed by -->"
        case .invalidEntity(let entity): "unknown or malformed entity reference '\(entity)'"
        }
        return "invalid XHTML form: \(problem)"
    }
}
