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
    private enum TagKind {
        case title, label, form, input
        /// One of the HTML void elements other than `input` (`br`, `img`, `meta`, …).
        case void
        case other
    }

    /// One attribute of the tag being read: where its name and value lie in the page.
    private struct Attribute {
        var name: Range<Int>
        /// `nil` for a valueless attribute, which reads as "".
        var value: Range<Int>?
        /// Whether the value holds an entity reference (and so needs decoding).
        var hasEntity: Bool
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

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
    private var scratch: [UInt8] = []
    /// The attributes of the tag being read: the first ``attributeCount`` of the array, whose
    /// slots are reused from tag to tag.
    private var attributes: [Attribute] = []
    private var attributeCount = 0

    /// Lends a parser the UTF-8 bytes of `text` in place.
    static func withPage<Result>(
        _ text: String, _ body: (inout XHTMLFormParser) throws(XHTMLFormError) -> Result
    ) throws(XHTMLFormError) -> Result {
        var text = text
        // withUTF8 makes a bridged string native and contiguous first, so this always succeeds.
        let outcome: Swift.Result<Result, XHTMLFormError> = text.withUTF8 { bytes in
            var parser = XHTMLFormParser(bytes)
            do throws(XHTMLFormError) {
                return .success(try body(&parser))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
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

    private var capturing: Bool { titleCapture.active || labelCapture.active || errorCapture.active }

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

    // MARK: - Markup

    private mutating func parseMarkup() throws(XHTMLFormError) {
        let start = position
        let next: UInt8 = start + 1 < bytes.count ? bytes[start + 1] : 0
        switch next {
        case UInt8(ascii: "!"):
            if hasPrefix("<!--", at: start) {
                guard let end = find("-->", from: start + 4) else { throw XHTMLFormError(.unterminatedComment(offset: start)) }
                position = end + 3
            } else if hasPrefix("<![CDATA[", at: start) {
                guard let end = find("]]>", from: start + 9) else { throw XHTMLFormError(.malformedTag(offset: start)) }
                // CDATA is literal text: no entity decoding.
                if capturing { appendToCaptures((start + 9)..<end) }
                position = end + 3
            } else {
                guard let end = find(">", from: start + 2) else { throw XHTMLFormError(.malformedTag(offset: start)) }
                position = end + 1
            }
        case UInt8(ascii: "?"):
            guard let end = find("?>", from: start + 2) else { throw XHTMLFormError(.malformedTag(offset: start)) }
            position = end + 2
        case UInt8(ascii: "/"):
            position = start + 2
            let name = readName()
            guard !name.isEmpty else { throw XHTMLFormError(.malformedTag(offset: start)) }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
                throw XHTMLFormError(.malformedTag(offset: start))
            }
            position += 1
            handleEndTag(name)
        default:
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
        attributeCount = 0
        let count = bytes.count
        while true {
            skipWhitespace()
            guard position < count else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
            switch bytes[position] {
            case UInt8(ascii: ">"):
                position += 1
                return false
            case UInt8(ascii: "/"):
                guard position + 1 < count, bytes[position + 1] == UInt8(ascii: ">") else {
                    throw XHTMLFormError(.malformedTag(offset: tagOffset))
                }
                position += 2
                return true
            default:
                break
            }
            let nameStart = position
            while position < count, !Self.endsAttributeName(bytes[position]) {
                position += 1
            }
            guard position > nameStart else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
            var attribute = Attribute(name: nameStart..<position, value: nil, hasEntity: false)
            skipWhitespace()
            if position < count, bytes[position] == UInt8(ascii: "=") {
                position += 1
                skipWhitespace()
                guard position < count else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
                let quote = bytes[position]
                let valueRange: Range<Int>
                var hasEntity = false
                if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                    guard let close = Self.firstIndex(of: quote, in: bytes, (position + 1)..<count) else {
                        throw XHTMLFormError(.malformedTag(offset: tagOffset))
                    }
                    valueRange = (position + 1)..<close
                    hasEntity = Self.firstIndex(of: UInt8(ascii: "&"), in: bytes, valueRange) != nil
                    position = close + 1
                } else {
                    // HTML-style unquoted value: up to whitespace or the end of the tag.
                    let valueStart = position
                    while position < count {
                        let byte = bytes[position]
                        if Self.isWhitespace(byte) || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "<")
                            || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { break }
                        if byte == UInt8(ascii: "&") { hasEntity = true }
                        position += 1
                    }
                    guard position > valueStart else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
                    valueRange = valueStart..<position
                }
                attribute.value = valueRange
                if hasEntity {
                    attribute.hasEntity = true
                    scratch.removeAll(keepingCapacity: true)
                    try Self.decodeEntities(bytes, valueRange, into: &scratch)
                }
            }
            if attributeCount < attributes.count {
                attributes[attributeCount] = attribute
            } else {
                attributes.append(attribute)
            }
            attributeCount += 1
        }
    }

    /// The tag's first attribute named `name` (lower case), ignoring ASCII case.
    ///
    /// The closures here and below capture only `bytes` and `attributes`, never `self`: a
    /// closure that captured the parser copied all of it on every call.
    private func findAttribute(_ name: StaticString) -> Attribute? {
        let bytes = bytes, attributes = attributes, count = attributeCount
        return name.withUTF8Buffer { name in
            var index = 0
            while index < count {
                if Self.nameEquals(bytes, attributes[index].name, name) { return attributes[index] }
                index += 1
            }
            return nil
        }
    }

    /// The value of the tag's first attribute named `name` (lower case), entity-decoded.
    private func attribute(_ name: StaticString) -> String? {
        guard let attribute = findAttribute(name) else { return nil }
        return value(of: attribute)
    }

    private func value(of attribute: Attribute) -> String {
        guard let range = attribute.value else { return "" }
        guard attribute.hasEntity else { return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        var decoded: [UInt8] = []
        // Checked when the tag was read, so this cannot fail.
        try? Self.decodeEntities(bytes, range, into: &decoded)
        return String(decoding: decoded, as: UTF8.self)
    }

    /// Whether the tag's first attribute named `name` has exactly the value `value`.
    private func attribute(_ name: StaticString, is value: StaticString) -> Bool {
        guard let attribute = findAttribute(name) else { return false }
        guard !attribute.hasEntity else {
            var decoded = self.value(of: attribute)
            return value.withUTF8Buffer { expected in decoded.withUTF8 { Self.bytesEqual($0, expected) } }
        }
        let range = attribute.value ?? 0..<0
        let bytes = bytes
        return value.withUTF8Buffer { expected in
            Self.bytesEqual(UnsafeBufferPointer(rebasing: bytes[range]), expected)
        }
    }

    /// Whether the name at `range` of `bytes` is `name` (lower case), ignoring ASCII case.
    private static func nameEquals(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard range.count == name.count else { return false }
        var offset = 0
        for index in range {
            guard bytes[index].asciiLowercased == name[offset] else { return false }
            offset += 1
        }
        return true
    }

    /// Whether the names at `a` and `b` are equal, ignoring ASCII case.
    private func namesEqual(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count else { return false }
        var other = b.lowerBound
        for index in a {
            guard bytes[index].asciiLowercased == bytes[other].asciiLowercased else { return false }
            other += 1
        }
        return true
    }

    /// Whether the name at `range` is `name`, which is lower-case ASCII.
    private func nameIs(_ range: Range<Int>, _ name: StaticString) -> Bool {
        let bytes = bytes
        return name.withUTF8Buffer { Self.nameEquals(bytes, range, $0) }
    }

    private func kind(of name: Range<Int>) -> TagKind {
        switch name.count {
        case 2:
            return nameIs(name, "br") || nameIs(name, "hr") ? .void : .other
        case 3:
            return nameIs(name, "col") || nameIs(name, "img") || nameIs(name, "wbr") ? .void : .other
        case 4:
            if nameIs(name, "form") { return .form }
            return nameIs(name, "area") || nameIs(name, "base") || nameIs(name, "link") || nameIs(name, "meta") ? .void : .other
        case 5:
            if nameIs(name, "input") { return .input }
            if nameIs(name, "title") { return .title }
            if nameIs(name, "label") { return .label }
            return nameIs(name, "embed") || nameIs(name, "param") || nameIs(name, "track") ? .void : .other
        case 6:
            return nameIs(name, "source") ? .void : .other
        default:
            return .other
        }
    }

    // MARK: - Elements

    private mutating func handleStartTag(_ name: Range<Int>, selfClosing: Bool, offset: Int) throws(XHTMLFormError) {
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

    private mutating func handleEndTag(_ name: Range<Int>) {
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

    private mutating func appendToCaptures(_ range: Range<Int>) {
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

    // MARK: - Entities

    /// Appends the bytes of `range` with entity references replaced.
    ///
    /// A reference must end with `;` within 32 bytes; scanning is bounded by that, so hostile
    /// input full of `&` stays linear.
    private static func decodeEntities(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, into output: inout [UInt8]
    ) throws(XHTMLFormError) {
        var index = range.lowerBound
        while index < range.upperBound {
            // Plain text up to the next reference goes over in one copy.
            let ampersand = firstIndex(of: UInt8(ascii: "&"), in: bytes, index..<range.upperBound) ?? range.upperBound
            if ampersand > index {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<ampersand]))
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
                throw XHTMLFormError(.invalidEntity(String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)))
            }
            guard let scalar = entityValue(UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end])) else {
                throw XHTMLFormError(.invalidEntity(String(decoding: UnsafeBufferPointer(rebasing: bytes[index...end]), as: UTF8.self)))
            }
            if scalar.isASCII {
                output.append(UInt8(truncatingIfNeeded: scalar.value))
            } else {
                UTF8.encode(scalar) { output.append($0) }
            }
            index = end + 1
        }
    }

    /// The character an entity name (between `&` and `;`) stands for, or `nil`.
    private static func entityValue(_ name: UnsafeBufferPointer<UInt8>) -> Unicode.Scalar? {
        func named(_ text: StaticString) -> Bool {
            text.withUTF8Buffer { Self.bytesEqual(name, $0) }
        }
        if named("amp") { return "&" }
        if named("lt") { return "<" }
        if named("gt") { return ">" }
        if named("quot") { return "\"" }
        if named("apos") { return "'" }
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
            guard let digitValue = Hex.value(of: digit), UInt32(digitValue) < radix else { return nil }
            value = value * radix + UInt32(digitValue)
        }
        // XML forbids the NUL character even as a reference.
        guard value != 0 else { return nil }
        return Unicode.Scalar(value)
    }

    // MARK: - Scanning helpers

    /// The offset of the first `byte` within `range` of `bytes` (`memchr`: values and text runs
    /// are most of a page's bytes).
    private static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, let base = bytes.baseAddress else { return nil }
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        guard let found = memchr(base + range.lowerBound, Int32(byte), range.count) else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }

    /// Whether `a` and `b` hold the same bytes: a count and a `memcmp`, never a generic sequence
    /// comparison.
    private static func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let left = a.baseAddress, let right = b.baseAddress else { return true }
        return memcmp(left, right, a.count) == 0
    }

    private func hasPrefix(_ prefix: StaticString, at offset: Int) -> Bool {
        let bytes = bytes
        return prefix.withUTF8Buffer { pattern in
            guard offset + pattern.count <= bytes.count else { return false }
            for index in 0..<pattern.count where bytes[offset + index] != pattern[index] { return false }
            return true
        }
    }

    /// The offset of the first occurrence of `pattern` at or after `start`.
    private func find(_ pattern: StaticString, from start: Int) -> Int? {
        let bytes = bytes
        return pattern.withUTF8Buffer { pattern -> Int? in
            guard let first = pattern.first, start <= bytes.count else { return nil }
            var index = start
            scan: while index + pattern.count <= bytes.count {
                if bytes[index] == first {
                    for offset in 1..<pattern.count where bytes[index + offset] != pattern[offset] {
                        index += 1
                        continue scan
                    }
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
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
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
