/// The form of one step of a login flow, read from the XHTML page the IDP serves.
///
/// Only what a client needs to fill in and submit the step is kept: where to send it, the
/// inputs with their labels, and the error the IDP shows after a failed attempt.
///
/// `WebViewSimulator` (a test helper of this package) hands each step's form to the closure that fills it:
///
/// ```swift
/// let location = try await webView.load(request.url, headers: request.headers, until: redirectURI) { form in
///     form.visibleInputs.contains { $0.id == "password" } ? ["username": "alice", "password": "s3cret"] : nil
/// }
/// ```
public struct XHTMLForm: Sendable, Equatable {
    /// One `<input>` element of the form.
    public struct Input: Sendable, Equatable {
        /// The `id` attribute, or the `name` when there is no id.
        public var id: String
        /// The `name` attribute (the submitted field name), or the `id` when there is no name.
        public var name: String
        /// The `type` attribute, lower case; `text` when absent.
        public var type: String
        /// The `value` attribute, entity-decoded; `nil` when absent.
        public var value: String?
        /// The trimmed text of the `<label for="…">` naming this input's id, if any.
        public var label: String?

        /// Creates an input description.
        /// - Parameters:
        ///   - id: The element id.
        ///   - name: The submitted field name.
        ///   - type: The lower-case input type.
        ///   - value: The preset value.
        ///   - label: The label text.
        public init(id: String, name: String, type: String = "text", value: String? = nil, label: String? = nil) {
            self.id = id
            self.name = name
            self.type = type
            self.value = value
            self.label = label
        }

        /// Whether a user fills this input in: any type but hidden, submit, button, reset and image.
        @inlinable
        public var isVisible: Bool {
            // By length first: the types that are not visible have five or six bytes, so `text`
            // and `password` are told apart without comparing any text.
            switch type.utf8.count {
            case 5: type != "reset" && type != "image"
            case 6: type != "hidden" && type != "submit" && type != "button"
            default: true
            }
        }
    }

    /// The trimmed text of the page's `<title>`, or `nil` when there is none or it is empty.
    public var title: String?
    /// Where the form is submitted: the first form's `action`, entity-decoded.
    public var action: String
    /// The submission method, upper case; `GET` when the form does not say.
    public var method: String
    /// The form's inputs in document order.
    public var inputs: [Input]
    /// The text of the element with id `kc-error-message`, whitespace collapsed; `nil` when there
    /// is no such element or it has no text.
    public var errorMessage: String?
    /// The `data-error` attribute of the `kc-error-message` element.
    public var errorCode: String?

    /// The largest page, in UTF-8 bytes, that ``parse(_:)`` accepts; bigger pages are refused
    /// rather than parsed, to bound the work a hostile server can cause.
    package static let maximumSize = 1 << 20

    /// Creates a form description.
    /// - Parameters:
    ///   - title: The page title.
    ///   - action: The submission target.
    ///   - method: The upper-case submission method.
    ///   - inputs: The inputs in document order.
    ///   - errorMessage: The error text shown on the page.
    ///   - errorCode: The machine-readable error code.
    public init(
        title: String? = nil, action: String, method: String = "GET", inputs: [Input] = [],
        errorMessage: String? = nil, errorCode: String? = nil
    ) {
        self.title = title
        self.action = action
        self.method = method
        self.inputs = inputs
        self.errorMessage = errorMessage
        self.errorCode = errorCode
    }

    /// The inputs a user fills in: every type except hidden, submit, button, reset and image.
    public var visibleInputs: [Input] {
        inputsMatching(\.isVisible)
    }

    /// The inputs of type `hidden`, which a client submits unchanged.
    public var hiddenInputs: [Input] {
        inputsMatching({ $0.type == "hidden" })
    }

    /// The inputs that match, in page order, in one allocation (`filter` grew its result from one
    /// element up, reallocating on the way; a step's form has a handful of inputs).
    private func inputsMatching(_ isIncluded: (Input) -> Bool) -> [Input] {
        var matching: [Input] = []
        matching.reserveCapacity(inputs.count)
        for input in inputs where isIncluded(input) { matching.append(input) }
        return matching
    }

    /// Reads the first form of a page.
    ///
    /// Tolerates an XML declaration, a doctype, comments, CDATA, upper-case names, single or
    /// double quotes, unclosed `<input>` and valueless attributes. Runs in time linear in the page
    /// size and never traps, whatever the input.
    /// - Parameter text: The page.
    /// - Returns: The form.
    /// - Throws: ``XHTMLFormError`` when the page is too large, malformed, or has no usable form.
    package static func parse(_ text: String) throws(XHTMLFormError) -> XHTMLForm {
        let size = text.utf8.count
        guard size <= maximumSize else { throw XHTMLFormError(.tooLarge(size)) }
        return try XHTMLFormParser.withPage(text) { (parser) throws(XHTMLFormError) in try parser.parse() }
    }

    /// Reads the first form of a page given as the bytes of an HTTP body, as ``parse(_:)`` reads
    /// its text: in place, once the bytes are known to be UTF-8 (no string of the page is made).
    /// - Parameter body: The page's bytes.
    /// - Returns: The form, or `nil` when the bytes are not UTF-8.
    /// - Throws: ``XHTMLFormError`` when the page is too large, malformed, or has no usable form.
    package static func parse(body: [UInt8]) throws(XHTMLFormError) -> XHTMLForm? {
        guard body.count <= maximumSize else { throw XHTMLFormError(.tooLarge(body.count)) }
        return try body.withUnsafeBufferPointer { (bytes) throws(XHTMLFormError) -> XHTMLForm? in
            guard isUTF8(bytes) else { return nil }
            return try XHTMLFormParser.withBytes(bytes) { (parser) throws(XHTMLFormError) in try parser.parse() }
        }
    }

    /// Whether `bytes` are well-formed UTF-8, as `String(validating:as:)` judges them (Unicode's
    /// table 3-7: no overlong form, no surrogate, nothing above U+10FFFF, no sequence cut short).
    /// Runs of ASCII, most of a page, are read 32 and then eight bytes at a time; every read is
    /// within `bytes`, whose count is checked before each.
    static func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        let highBits: UInt64 = 0x8080_8080_8080_8080
        while index < count {
            if count - index >= 32 {
                let raw = UnsafeRawPointer(base + index)
                let words = raw.loadUnaligned(as: UInt64.self) | raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                    | raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
                if words & highBits == 0 {
                    index += 32
                    continue
                }
            }
            if count - index >= 8, UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) & highBits == 0 {
                index += 8
                continue
            }
            let lead = base[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            // The sequence's length, and the range its second byte must lie in; every later
            // byte is a continuation byte.
            let length: Int
            var second: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; second = 0xA0...0xBF
            case 0xED: length = 3; second = 0x80...0x9F
            case 0xE1...0xEF: length = 3
            case 0xF0: length = 4; second = 0x90...0xBF
            case 0xF4: length = 4; second = 0x80...0x8F
            case 0xF1...0xF3: length = 4
            default: return false
            }
            guard count - index >= length, second.contains(base[index + 1]) else { return false }
            var offset = 2
            while offset < length {
                guard (0x80...0xBF).contains(base[index + offset]) else { return false }
                offset += 1
            }
            index += length
        }
        return true
    }
}
