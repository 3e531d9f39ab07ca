import IdpPrimitives
import IdpWireFormats

// A straightforward XHTML form parser, the one the fast parser replaced, kept verbatim (but for its
// name and the two entry points below) as the reference the new parser is checked against: every page
// must give the same form, or the same error, from both.

extension ReferenceXHTMLFormParser {
    static func parse(_ text: String) throws(XHTMLFormError) -> XHTMLForm {
        let size = text.utf8.count
        guard size <= XHTMLForm.maximumSize else { throw XHTMLFormError(.tooLarge(size)) }
        var parser = ReferenceXHTMLFormParser(Array(text.utf8))
        return try parser.parse()
    }

    static func errorNotice(in text: String) -> (code: String?, message: String)? {
        guard text.utf8.count <= XHTMLForm.maximumSize else { return nil }
        var parser = ReferenceXHTMLFormParser(Array(text.utf8))
        return try? parser.errorNotice()
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The single-pass scanner behind ``XHTMLForm/parse(_:)``.
///
/// It builds no tree: it streams tags and text and keeps only the few facts a login form needs,
/// so time and memory stay linear in the page size. Tag and attribute names are compared where
/// they lie in the page (case-insensitively), and attribute values become strings only when a
/// fact needs them, so an ordinary tag costs no allocation. Every index is bounds-checked against
/// `bytes.count` before use, so truncated or random input ends in a thrown error, never a trap.
struct ReferenceXHTMLFormParser {
    /// Text being collected for an element until its matching end tag.
    private struct Capture {
        /// Lower-case tag name of the element; nested elements of the same name are counted so
        /// the right end tag closes the capture.
        var tag: [UInt8]
        var depth = 1
        var text: [UInt8] = []
    }

    private enum FormState {
        case notSeen
        case open(depth: Int)
        case closed
    }

    private static let voidElements: [[UInt8]] =
        ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"]
            .map { Array($0.utf8) }

    /// One attribute of the tag being read: where its name and value lie in the page.
    private struct Attribute {
        var name: Range<Int>
        /// `nil` for a valueless attribute, which reads as "".
        var value: Range<Int>?
        /// Whether the value holds an entity reference (and so needs decoding).
        var hasEntity: Bool
    }

    /// The first index of `byte` in `range` of `bytes`. A plain loop: a slice's generic
    /// `firstIndex(of:)` looks its types up at run time, which under ThreadSanitizer takes a lock
    /// on every call.
    private static func find(_ byte: UInt8, in bytes: [UInt8], _ range: Range<Int>) -> Int? {
        for index in range where bytes[index] == byte { return index }
        return nil
    }

    private static let titleTag = Array("title".utf8)
    private static let labelTag = Array("label".utf8)
    private static let formTag = Array("form".utf8)
    private static let inputTag = Array("input".utf8)

    private let bytes: [UInt8]
    private var position = 0

    private var formState = FormState.notSeen
    private var action = ""
    private var method = "GET"
    private var inputs: [XHTMLForm.Input] = []
    private var inputIds = Set<String>(minimumCapacity: 8)

    private var title: String?
    private var titleCapture: Capture?
    private var titleSeen = false

    private var labels: [String: String] = [:]
    private var labelCapture: Capture?
    private var labelTarget = ""

    private var errorCapture: Capture?
    private var errorSeen = false
    private var errorMessage: String?
    private var errorCode: String?

    /// Reused for every text run, so plain text costs no allocation.
    private var scratch: [UInt8] = []
    /// The attributes of the tag being read, reused from tag to tag.
    private var attributes: [Attribute] = []

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func parse() throws(XHTMLFormError) -> XHTMLForm {
        try scan()
        switch formState {
        case .notSeen: throw XHTMLFormError(.noForm)
        case .open: throw XHTMLFormError(.unterminatedForm)
        case .closed: break
        }
        let labelled = inputs.map { input in
            var input = input
            input.label = labels[input.id]
            return input
        }
        return XHTMLForm(
            title: title, action: action, method: method, inputs: labelled,
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

    private mutating func scan() throws(XHTMLFormError) {
        while position < bytes.count {
            if bytes[position] == UInt8(ascii: "<") {
                try parseMarkup()
            } else {
                let start = position
                position = Self.find(UInt8(ascii: "<"), in: bytes, start..<bytes.count) ?? bytes.count
                let capturing = titleCapture != nil || labelCapture != nil || errorCapture != nil
                if Self.find(UInt8(ascii: "&"), in: bytes, start..<position) != nil {
                    // Decoded even when nothing captures it: a malformed reference is an error
                    // wherever it is.
                    scratch.removeAll(keepingCapacity: true)
                    try Self.decodeEntities(bytes, start..<position, into: &scratch)
                    if capturing { appendToCaptures(scratch) }
                } else if capturing {
                    appendToCaptures(bytes[start..<position])
                }
            }
        }
        // A title, label or error element left open at the end of the page keeps what it has:
        // only the form itself must be complete to be submitted safely.
        finishTitle()
        finishLabel()
        finishError()
    }

    // MARK: - Markup

    private mutating func parseMarkup() throws(XHTMLFormError) {
        let start = position
        if hasPrefix("<!--", at: start) {
            guard let end = find("-->", from: start + 4) else { throw XHTMLFormError(.unterminatedComment(offset: start)) }
            position = end + 3
        } else if hasPrefix("<![CDATA[", at: start) {
            guard let end = find("]]>", from: start + 9) else { throw XHTMLFormError(.malformedTag(offset: start)) }
            // CDATA is literal text: no entity decoding.
            appendToCaptures(bytes[(start + 9)..<end])
            position = end + 3
        } else if hasPrefix("<!", at: start) {
            guard let end = find(">", from: start + 2) else { throw XHTMLFormError(.malformedTag(offset: start)) }
            position = end + 1
        } else if hasPrefix("<?", at: start) {
            guard let end = find("?>", from: start + 2) else { throw XHTMLFormError(.malformedTag(offset: start)) }
            position = end + 2
        } else if hasPrefix("</", at: start) {
            position = start + 2
            let name = readName()
            guard !name.isEmpty else { throw XHTMLFormError(.malformedTag(offset: start)) }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
                throw XHTMLFormError(.malformedTag(offset: start))
            }
            position += 1
            handleEndTag(name)
        } else {
            position = start + 1
            let name = readName()
            guard !name.isEmpty else { throw XHTMLFormError(.malformedTag(offset: start)) }
            let selfClosing = try readAttributes(tagOffset: start)
            try handleStartTag(name, selfClosing: selfClosing, offset: start)
        }
    }

    /// Reads attributes up to and including `>` or `/>` into ``attributes``; returns whether the
    /// tag closed itself. Every value's entity references are checked here, used or not.
    private mutating func readAttributes(tagOffset: Int) throws(XHTMLFormError) -> Bool {
        attributes.removeAll(keepingCapacity: true)
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
            switch bytes[position] {
            case UInt8(ascii: ">"):
                position += 1
                return false
            case UInt8(ascii: "/"):
                guard position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: ">") else {
                    throw XHTMLFormError(.malformedTag(offset: tagOffset))
                }
                position += 2
                return true
            default:
                break
            }
            let nameStart = position
            while position < bytes.count, !Self.endsAttributeName(bytes[position]) {
                position += 1
            }
            guard position > nameStart else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
            var attribute = Attribute(name: nameStart..<position, value: nil, hasEntity: false)
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "=") {
                position += 1
                skipWhitespace()
                guard position < bytes.count else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
                let quote = bytes[position]
                let valueRange: Range<Int>
                if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                    guard let close = Self.find(quote, in: bytes, (position + 1)..<bytes.count) else {
                        throw XHTMLFormError(.malformedTag(offset: tagOffset))
                    }
                    valueRange = (position + 1)..<close
                    position = close + 1
                } else {
                    // HTML-style unquoted value: up to whitespace or the end of the tag.
                    let valueStart = position
                    while position < bytes.count, !Self.isWhitespace(bytes[position]),
                          bytes[position] != UInt8(ascii: ">"), bytes[position] != UInt8(ascii: "<"),
                          bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "'") {
                        position += 1
                    }
                    guard position > valueStart else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
                    valueRange = valueStart..<position
                }
                attribute.value = valueRange
                if Self.find(UInt8(ascii: "&"), in: bytes, valueRange) != nil {
                    attribute.hasEntity = true
                    scratch.removeAll(keepingCapacity: true)
                    try Self.decodeEntities(bytes, valueRange, into: &scratch)
                }
            }
            attributes.append(attribute)
        }
    }

    /// The value of the tag's first attribute named `name` (lower case), entity-decoded.
    private func attribute(_ name: StaticString) -> String? {
        guard let attribute = attributes.first(where: { nameEquals($0.name, name) }) else { return nil }
        guard let range = attribute.value else { return "" }
        guard attribute.hasEntity else { return String(decoding: bytes[range], as: UTF8.self) }
        var decoded: [UInt8] = []
        // Checked when the tag was read, so this cannot fail.
        try? Self.decodeEntities(bytes, range, into: &decoded)
        return String(decoding: decoded, as: UTF8.self)
    }

    /// Whether the tag's first attribute named `name` has exactly the value `value`.
    private func attribute(_ name: StaticString, is value: StaticString) -> Bool {
        guard let attribute = attributes.first(where: { nameEquals($0.name, name) }) else { return false }
        guard !attribute.hasEntity else {
            return self.attribute(name).map { decoded in value.withUTF8Buffer { decoded.utf8.elementsEqual($0) } } ?? false
        }
        let range = attribute.value ?? 0..<0
        return value.withUTF8Buffer { bytes[range].elementsEqual($0) }
    }

    /// Whether the name at `range` is `name` (lower case), ignoring ASCII case.
    private func nameEquals(_ range: Range<Int>, _ name: StaticString) -> Bool {
        name.withUTF8Buffer { nameEquals(range, $0) }
    }

    private func nameEquals(_ range: Range<Int>, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard range.upperBound - range.lowerBound == name.count else { return false }
        // Plain loops over plain values, here and below: an unoptimized build (the suite's)
        // calls generic algorithms unspecialized, each asking the runtime for type metadata.
        var index = 0
        while index < name.count {
            guard Self.lowercased(bytes[range.lowerBound + index]) == name[index] else { return false }
            index += 1
        }
        return true
    }

    private func nameEquals(_ range: Range<Int>, _ name: [UInt8]) -> Bool {
        name.withUnsafeBufferPointer { nameEquals(range, $0) }
    }

    // MARK: - Elements

    private mutating func handleStartTag(_ name: Range<Int>, selfClosing: Bool, offset: Int) throws(XHTMLFormError) {
        let opensContent = !selfClosing && !Self.voidElements.contains { nameEquals(name, $0) }
        // Existing captures first, so a capture started by this very tag begins at depth 1.
        if opensContent {
            if let tag = titleCapture?.tag, nameEquals(name, tag) { titleCapture?.depth += 1 }
            if let tag = labelCapture?.tag, nameEquals(name, tag) { labelCapture?.depth += 1 }
            if let tag = errorCapture?.tag, nameEquals(name, tag) { errorCapture?.depth += 1 }
        }

        if !titleSeen, nameEquals(name, Self.titleTag) {
            titleSeen = true
            if opensContent { titleCapture = Capture(tag: Self.titleTag) }
        }
        if labelCapture == nil, opensContent, nameEquals(name, Self.labelTag), let target = attribute("for") {
            labelTarget = target
            labelCapture = Capture(tag: Self.labelTag)
        }
        if !errorSeen, attribute("id", is: "kc-error-message") {
            errorSeen = true
            errorCode = attribute("data-error")
            if opensContent { errorCapture = Capture(tag: bytes[name].map(Self.lowercased)) }
        }

        if nameEquals(name, Self.formTag) {
            switch formState {
            case .notSeen:
                guard let action = attribute("action"), !Self.isBlank(action) else {
                    throw XHTMLFormError(.missingAction)
                }
                self.action = action
                if let method = attribute("method"), !Self.isBlank(method) {
                    self.method = String(decoding: method.utf8.map(Self.uppercased), as: UTF8.self)
                }
                formState = opensContent ? .open(depth: 1) : .closed
            case .open(let depth):
                if opensContent { formState = .open(depth: depth + 1) }
            case .closed:
                break
            }
        }

        if case .open = formState, nameEquals(name, Self.inputTag) {
            let idAttribute = Self.nonEmpty(attribute("id")), nameAttribute = Self.nonEmpty(attribute("name"))
            let id = idAttribute ?? nameAttribute
            let fieldName = nameAttribute ?? idAttribute
            guard let id, let fieldName else { throw XHTMLFormError(.inputWithoutId(offset: offset)) }
            guard inputIds.insert(id).inserted else { throw XHTMLFormError(.duplicateInputId(id)) }
            let type = Self.nonEmpty(attribute("type")).map { String(decoding: $0.utf8.map(Self.lowercased), as: UTF8.self) }
            inputs.append(XHTMLForm.Input(id: id, name: fieldName, type: type ?? "text", value: attribute("value")))
        }
    }

    private mutating func handleEndTag(_ name: Range<Int>) {
        if let tag = titleCapture?.tag, nameEquals(name, tag) {
            titleCapture?.depth -= 1
            if titleCapture?.depth == 0 { finishTitle() }
        }
        if let tag = labelCapture?.tag, nameEquals(name, tag) {
            labelCapture?.depth -= 1
            if labelCapture?.depth == 0 { finishLabel() }
        }
        if let tag = errorCapture?.tag, nameEquals(name, tag) {
            errorCapture?.depth -= 1
            if errorCapture?.depth == 0 { finishError() }
        }
        if nameEquals(name, Self.formTag), case .open(let depth) = formState {
            formState = depth > 1 ? .open(depth: depth - 1) : .closed
        }
    }

    private mutating func appendToCaptures(_ text: some Collection<UInt8>) {
        titleCapture?.text.append(contentsOf: text)
        labelCapture?.text.append(contentsOf: text)
        errorCapture?.text.append(contentsOf: text)
    }

    private mutating func finishTitle() {
        guard let capture = titleCapture else { return }
        titleCapture = nil
        title = Self.nonEmpty(Self.trimmed(capture.text))
    }

    private mutating func finishLabel() {
        guard let capture = labelCapture else { return }
        labelCapture = nil
        // The first label for an id wins, like a browser's accessible name.
        if labels[labelTarget] == nil, let text = Self.nonEmpty(Self.trimmed(capture.text)) {
            labels[labelTarget] = text
        }
    }

    private mutating func finishError() {
        guard let capture = errorCapture else { return }
        errorCapture = nil
        errorMessage = Self.nonEmpty(Self.collapsed(capture.text))
    }

    // MARK: - Entities

    /// Appends the bytes of `range` with entity references replaced.
    ///
    /// A reference must end with `;` within 32 bytes; scanning is bounded by that, so hostile
    /// input full of `&` stays linear.
    private static func decodeEntities(
        _ bytes: [UInt8], _ range: Range<Int>, into output: inout [UInt8]
    ) throws(XHTMLFormError) {
        var index = range.lowerBound
        while index < range.upperBound {
            // Plain text up to the next reference goes over in one copy.
            let ampersand = Self.find(UInt8(ascii: "&"), in: bytes, index..<range.upperBound) ?? range.upperBound
            if ampersand > index {
                output.append(contentsOf: bytes[index..<ampersand])
                index = ampersand
                continue
            }
            let limit = min(range.upperBound, index + 32)
            var end = index + 1
            while end < limit, bytes[end] != UInt8(ascii: ";"), bytes[end] != UInt8(ascii: "&"),
                  bytes[end] != UInt8(ascii: "<"), !isWhitespace(bytes[end]) {
                end += 1
            }
            guard end < limit, bytes[end] == UInt8(ascii: ";") else {
                throw XHTMLFormError(.invalidEntity(String(decoding: bytes[index..<end], as: UTF8.self)))
            }
            let reference = String(decoding: bytes[index...end], as: UTF8.self)
            guard let scalar = entityValue(bytes[(index + 1)..<end]) else {
                throw XHTMLFormError(.invalidEntity(reference))
            }
            output.append(contentsOf: String(Character(scalar)).utf8)
            index = end + 1
        }
    }

    /// The character an entity name (between `&` and `;`) stands for, or `nil`.
    private static func entityValue(_ name: ArraySlice<UInt8>) -> Unicode.Scalar? {
        switch String(decoding: name, as: UTF8.self) {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        default: break
        }
        guard name.first == UInt8(ascii: "#") else { return nil }
        var digits = name.dropFirst()
        var radix: UInt32 = 10
        if digits.first == UInt8(ascii: "x") || digits.first == UInt8(ascii: "X") {
            radix = 16
            digits = digits.dropFirst()
        }
        // Eight digits cannot overflow UInt32 in either radix and cover every scalar value.
        guard !digits.isEmpty, digits.count <= 8 else { return nil }
        var value: UInt32 = 0
        for digit in digits {
            guard let digitValue = Self.hexValue(digit), UInt32(digitValue) < radix else { return nil }
            value = value * radix + UInt32(digitValue)
        }
        // XML forbids the NUL character even as a reference.
        guard value != 0 else { return nil }
        return Unicode.Scalar(value)
    }

    // MARK: - Scanning helpers

    private func hasPrefix(_ prefix: StaticString, at offset: Int) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        return prefix.withUTF8Buffer { pattern in
            var index = 0
            while index < count {
                guard bytes[offset + index] == pattern[index] else { return false }
                index += 1
            }
            return true
        }
    }

    /// Whether `pattern` after its first byte stands in `bytes` after `offset` (the caller has
    /// matched the first byte and left room for the rest).
    private static func matches(_ bytes: [UInt8], at offset: Int, _ pattern: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 1
        while index < pattern.count {
            guard bytes[offset + index] == pattern[index] else { return false }
            index += 1
        }
        return true
    }

    /// The offset of the first occurrence of `pattern` at or after `start`.
    private func find(_ pattern: StaticString, from start: Int) -> Int? {
        pattern.withUTF8Buffer { pattern -> Int? in
            guard let first = pattern.first, start <= bytes.count else { return nil }
            var index = start
            while index + pattern.count <= bytes.count {
                if bytes[index] == first, Self.matches(bytes, at: index, pattern) {
                    return index
                }
                index += 1
            }
            return nil
        }
    }

    /// Reads a tag name (letter first, then letters, digits, `-`, `_`, `:`, `.`): where it lies.
    private mutating func readName() -> Range<Int> {
        guard position < bytes.count, Self.isLetter(bytes[position]) else { return position..<position }
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            guard Self.isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
            else { break }
            position += 1
        }
        return start..<position
    }

    private mutating func skipWhitespace() {
        while position < bytes.count, Self.isWhitespace(bytes[position]) {
            position += 1
        }
    }

    private static func endsAttributeName(_ byte: UInt8) -> Bool {
        isWhitespace(byte) || byte == UInt8(ascii: "=") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/")
            || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "<")
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    private static func uppercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
    }

    private static func isBlank(_ text: String) -> Bool {
        text.utf8.allSatisfy(isWhitespace)
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// The text without leading and trailing XML whitespace.
    private static func trimmed(_ text: [UInt8]) -> String {
        guard let first = text.firstIndex(where: { !isWhitespace($0) }),
              let last = text.lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        return String(decoding: text[first...last], as: UTF8.self)
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
