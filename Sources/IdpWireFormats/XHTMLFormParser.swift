#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The single-pass scanner behind ``XHTMLForm/parse(_:)``.
///
/// It builds no tree: it streams tags and text and keeps only the few facts a login form needs,
/// so time and memory stay linear in the page size. It reads the page's UTF-8 bytes in place
/// (``withPage(_:_:)`` lends it the string's own storage, no copy). Each tag's name is classified
/// once (title, label, form, input, another void element, other); tag and attribute names are
/// compared where they lie in the page (ASCII case-insensitively, length first), and attribute
/// values become strings only when a fact needs them, so an ordinary tag costs no allocation.
/// Every index is checked against `bytes.count` before use, so truncated or random input ends in
/// a thrown error, never a trap.
///
/// Its methods are `mutating` even where they only read: a non-mutating method of this large,
/// noncopyable struct is handed all of it, copied byte for byte, on every call, and a mutating one
/// only its address.
struct XHTMLFormParser: ~Copyable {
    /// Text being collected for an element until its matching end tag.
    private struct Capture {
        var active = false
        /// Where the element's name lies in the page; nested elements of the same name (ignoring
        /// case) are counted so the right end tag closes the capture.
        var tag: Range<Int> = 0..<0
        var depth = 0
        /// Reused from capture to capture.
        var text: [UInt8] = []

        mutating func start(tag: Range<Int>) {
            active = true
            self.tag = tag
            depth = 1
            text.removeAll(keepingCapacity: true)
        }
    }

    private enum FormState {
        case notSeen
        case open(depth: Int)
        case closed
    }

    /// What a start tag's name says, decided once per tag.
    enum TagKind {
        case title, label, form, input
        /// One of the HTML void elements other than `input` (`br`, `img`, `meta`, …).
        case void
        case other
    }

    /// One attribute of the tag being read: where its name and value lie in the page.
    struct Attribute {
        var name: Range<Int>
        /// `nil` for a valueless attribute, which reads as "".
        var value: Range<Int>?
        /// Whether the value holds an entity reference (and so needs decoding).
        var hasEntity: Bool
    }

    /// The page's UTF-8 bytes, lent for the parse.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    var position = 0

    private var formState = FormState.notSeen
    private var action = ""
    private var method = "GET"
    private var inputs: [XHTMLForm.Input] = []
    /// The input ids, for the duplicate check once a form has more than a few inputs (a
    /// linear search over ``inputs`` before that).
    private var inputIds: Set<String>?

    private var title: String?
    private var titleCapture = Capture()
    private var titleSeen = false

    /// Label texts by target id in document order; the first label for an id wins.
    private var labels: [(target: String, text: String)] = []
    private var labelCapture = Capture()
    private var labelTarget = ""

    private var errorCapture = Capture()
    private var errorSeen = false
    private var errorMessage: String?
    private var errorCode: String?

    /// Reused for every text run with references, so plain text costs no allocation.
    var scratch: [UInt8] = []
    /// The attributes of the tag being read: the first ``attributeCount`` of the array, whose
    /// slots are reused from tag to tag.
    var attributes: [Attribute] = []
    /// How many of ``attributes`` belong to the tag being read.
    var attributeCount = 0

    /// Lends a parser the UTF-8 bytes of `text` in place.
    static func withPage<Result>(
        _ text: String, _ body: (inout XHTMLFormParser) throws(XHTMLFormError) -> Result
    ) throws(XHTMLFormError) -> Result {
        var text = text
        // withUTF8 makes a bridged string native and contiguous first, so this always succeeds.
        return try text.withUTF8 { bytes in Swift.Result { () throws(XHTMLFormError) in try withBytes(bytes, body) } }.get()
    }

    /// Lends a parser `bytes`, which must be UTF-8 (every string the parser makes is cut from them
    /// at ASCII delimiters).
    static func withBytes<Result>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ body: (inout XHTMLFormParser) throws(XHTMLFormError) -> Result
    ) throws(XHTMLFormError) -> Result {
        var parser = XHTMLFormParser(bytes)
        return try body(&parser)
    }

    /// A parser of `bytes`, which must stay valid while it is used.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        attributes.reserveCapacity(8)
        inputs.reserveCapacity(8)
    }

    mutating func parse() throws(XHTMLFormError) -> XHTMLForm {
        try scan()
        switch formState {
        case .notSeen: throw XHTMLFormError(.noForm)
        case .open: throw XHTMLFormError(.unterminatedForm)
        case .closed: break
        }
        if !labels.isEmpty {
            // Few labels: a linear search each; many: one dictionary (first label per id wins).
            var index: [String: String]?
            if labels.count > 16 {
                var table = [String: String](minimumCapacity: labels.count)
                for label in labels where table[label.target] == nil { table[label.target] = label.text }
                index = table
            }
            for position in inputs.indices {
                let id = inputs[position].id
                inputs[position].label = index.map { $0[id] } ?? labels.first { $0.target == id }?.text
            }
        }
        return XHTMLForm(
            title: title, action: action, method: method, inputs: inputs,
            errorMessage: errorMessage, errorCode: errorCode
        )
    }

    /// Scans the whole page and returns its error notice, if any; a page without a form (an
    /// IDP error page) is fine here.
    mutating func errorNotice() throws(XHTMLFormError) -> (code: String?, message: String)? {
        try scan()
        guard errorSeen else { return nil }
        return (errorCode, errorMessage ?? "")
    }

    /// Whether the text being read belongs to an element whose text is collected.
    var capturing: Bool { mutating get { titleCapture.active || labelCapture.active || errorCapture.active } }

    private mutating func scan() throws(XHTMLFormError) {
        let count = bytes.count
        while position < count {
            if bytes[position] == UInt8(ascii: "<") {
                try parseMarkup()
                continue
            }
            let start = position
            position = Self.firstIndex(of: UInt8(ascii: "<"), in: bytes, start..<count) ?? count
            if Self.firstIndex(of: UInt8(ascii: "&"), in: bytes, start..<position) != nil {
                // Decoded even when nothing captures it: a malformed reference is an error
                // wherever it is.
                scratch.removeAll(keepingCapacity: true)
                try Self.decodeEntities(bytes, start..<position, into: &scratch)
                if capturing { appendScratchToCaptures() }
            } else if capturing {
                appendToCaptures(start..<position)
            }
        }
        // A title, label or error element left open at the end of the page keeps what it has:
        // only the form itself must be complete to be submitted safely.
        finishTitle()
        finishLabel()
        finishError()
    }

    // MARK: - Elements

    /// Takes what a start tag says: a capture's nesting, the title, a label, the error notice,
    /// the form, an input of the form.
    mutating func handleStartTag(_ name: Range<Int>, selfClosing: Bool, offset: Int) throws(XHTMLFormError) {
        let kind = kind(of: name)
        let opensContent = !selfClosing && kind != .void && kind != .input
        // Existing captures first, so a capture started by this very tag begins at depth 1.
        if opensContent {
            if titleCapture.active, namesEqual(name, titleCapture.tag) { titleCapture.depth += 1 }
            if labelCapture.active, namesEqual(name, labelCapture.tag) { labelCapture.depth += 1 }
            if errorCapture.active, namesEqual(name, errorCapture.tag) { errorCapture.depth += 1 }
        }

        if !titleSeen, kind == .title {
            titleSeen = true
            if opensContent { titleCapture.start(tag: name) }
        }
        if !labelCapture.active, opensContent, kind == .label, let target = attribute("for") {
            labelTarget = target
            labelCapture.start(tag: name)
        }
        if !errorSeen, attribute("id", is: "kc-error-message") {
            errorSeen = true
            errorCode = attribute("data-error")
            if opensContent { errorCapture.start(tag: name) }
        }

        if kind == .form {
            switch formState {
            case .notSeen:
                guard let action = attribute("action"), !Self.isBlank(action) else {
                    throw XHTMLFormError(.missingAction)
                }
                self.action = action
                if let method = attribute("method"), !Self.isBlank(method) {
                    self.method = Self.mapBytes(method, Self.uppercased)
                }
                formState = opensContent ? .open(depth: 1) : .closed
            case .open(let depth):
                if opensContent { formState = .open(depth: depth + 1) }
            case .closed:
                break
            }
        }

        if kind == .input, case .open = formState {
            try addInput(offset: offset)
        }
    }

    private mutating func addInput(offset: Int) throws(XHTMLFormError) {
        let idAttribute = Self.nonEmpty(attribute("id")), nameAttribute = Self.nonEmpty(attribute("name"))
        let id = idAttribute ?? nameAttribute
        let fieldName = nameAttribute ?? idAttribute
        guard let id, let fieldName else { throw XHTMLFormError(.inputWithoutId(offset: offset)) }
        if inputIds == nil, inputs.count >= 16 { inputIds = Set(inputs.map(\.id)) }
        if inputIds != nil {
            guard inputIds!.insert(id).inserted else { throw XHTMLFormError(.duplicateInputId(id)) }
        } else {
            var index = 0
            while index < inputs.count {
                guard inputs[index].id != id else { throw XHTMLFormError(.duplicateInputId(id)) }
                index += 1
            }
        }
        let type = Self.nonEmpty(attribute("type")).map { Self.mapBytes($0, \.asciiLowercased) } ?? "text"
        inputs.append(XHTMLForm.Input(id: id, name: fieldName, type: type, value: attribute("value")))
    }

    /// Closes what an end tag closes: a capture whose element ends, the form.
    mutating func handleEndTag(_ name: Range<Int>) {
        if titleCapture.active, namesEqual(name, titleCapture.tag) {
            titleCapture.depth -= 1
            if titleCapture.depth == 0 { finishTitle() }
        }
        if labelCapture.active, namesEqual(name, labelCapture.tag) {
            labelCapture.depth -= 1
            if labelCapture.depth == 0 { finishLabel() }
        }
        if errorCapture.active, namesEqual(name, errorCapture.tag) {
            errorCapture.depth -= 1
            if errorCapture.depth == 0 { finishError() }
        }
        if case .open(let depth) = formState, nameIs(name, "form") {
            formState = depth > 1 ? .open(depth: depth - 1) : .closed
        }
    }

    /// Appends the text at `range` to every active capture.
    mutating func appendToCaptures(_ range: Range<Int>) {
        let text = UnsafeBufferPointer(rebasing: bytes[range])
        if titleCapture.active { titleCapture.text.append(contentsOf: text) }
        if labelCapture.active { labelCapture.text.append(contentsOf: text) }
        if errorCapture.active { errorCapture.text.append(contentsOf: text) }
    }

    private mutating func appendScratchToCaptures() {
        if titleCapture.active { titleCapture.text.append(contentsOf: scratch) }
        if labelCapture.active { labelCapture.text.append(contentsOf: scratch) }
        if errorCapture.active { errorCapture.text.append(contentsOf: scratch) }
    }

    private mutating func finishTitle() {
        guard titleCapture.active else { return }
        titleCapture.active = false
        title = Self.nonEmpty(Self.trimmed(titleCapture.text))
    }

    private mutating func finishLabel() {
        guard labelCapture.active else { return }
        labelCapture.active = false
        // The first label for an id wins, like a browser's accessible name (see `parse`).
        if let text = Self.nonEmpty(Self.trimmed(labelCapture.text)) {
            labels.append((labelTarget, text))
        }
    }

    private mutating func finishError() {
        guard errorCapture.active else { return }
        errorCapture.active = false
        errorMessage = Self.nonEmpty(Self.collapsed(errorCapture.text))
    }

    // MARK: - Scanning helpers

    /// The offset of the first `byte` within `range` of `bytes` (`memchr`: values and text runs
    /// are most of a page's bytes).
    static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, let base = bytes.baseAddress else { return nil }
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        guard let found = memchr(base + range.lowerBound, Int32(byte), range.count) else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }

    /// Whether `a` and `b` hold the same bytes: a count and a `memcmp`, never a generic sequence
    /// comparison.
    static func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let left = a.baseAddress, let right = b.baseAddress else { return true }
        return memcmp(left, right, a.count) == 0
    }

    /// Whether `byte` is whitespace as HTML reads it: space, tab, line feed, form feed, carriage
    /// return.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C
    }

    private static func uppercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
    }

    /// `text` with `transform` applied to each byte (an ASCII case change), by index; `text`
    /// itself when no byte changes.
    private static func mapBytes(_ text: String, _ transform: (UInt8) -> UInt8) -> String {
        var text = text
        return text.withUTF8 { bytes in
            var index = 0
            while index < bytes.count, transform(bytes[index]) == bytes[index] { index += 1 }
            guard index < bytes.count else { return nil }
            return String(unsafeUninitializedCapacity: bytes.count) { output in
                for offset in 0..<bytes.count { output[offset] = transform(bytes[offset]) }
                return bytes.count
            }
        } ?? text
    }

    private static func isBlank(_ text: String) -> Bool {
        for byte in text.utf8 where !isWhitespace(byte) { return false }
        return true
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// The text without leading and trailing XML whitespace.
    private static func trimmed(_ text: [UInt8]) -> String {
        var first = 0, end = text.count
        while first < end, isWhitespace(text[first]) { first += 1 }
        while end > first, isWhitespace(text[end - 1]) { end -= 1 }
        return text.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[first..<end]), as: UTF8.self) }
    }

    /// The text trimmed, with each run of XML whitespace inside it replaced by one space.
    private static func collapsed(_ text: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var pendingSpace = false
        for byte in text {
            if isWhitespace(byte) {
                pendingSpace = !output.isEmpty
            } else {
                if pendingSpace { output.append(UInt8(ascii: " ")) }
                pendingSpace = false
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
