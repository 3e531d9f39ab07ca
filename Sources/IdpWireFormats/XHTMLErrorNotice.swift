extension XHTMLForm {
    /// The error notice of an IDP page — the element with `id="kc-error-message"` — also on pages
    /// that have no form, such as an IDP error page.
    /// - Returns: Its `data-error` code and its text (tags stripped, entities decoded, white space
    ///   collapsed), or `nil` if the page has no notice or is too large or malformed to read.
    package static func errorNotice(in text: String) -> (code: String?, message: String)? {
        guard text.utf8.count <= maximumSize else { return nil }
        return try? XHTMLFormParser.withPage(text) { (parser) throws(XHTMLFormError) in try parser.errorNotice() }
    }
}
