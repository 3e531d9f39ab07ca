// The parser's tokenizer: comments, CDATA sections, declarations, processing instructions and
// tags read where they lie in the page; a start tag's attributes, read and looked up; its name
// classified.
extension XHTMLFormParser {
    /// Reads the markup that starts at ``position`` (a `<`) and acts on it; moves past it.
    mutating func parseMarkup() throws(XHTMLFormError) {
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

    /// Reads attributes up to and including `>` or `/>`, keeping the known ones in
    /// ``attributes``; returns whether the tag closed itself. Every value's entity references are
    /// checked here, used or not.
    private mutating func readAttributes(tagOffset: Int) throws(XHTMLFormError) -> Bool {
        attributes.removeAll()
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
            while position < count, !Self.isIn(Self.endsAttributeName, bytes[position]) {
                position += 1
            }
            guard position > nameStart else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
            let known = knownAttribute(nameStart..<position)
            var attribute = Attribute(value: nil, hasEntity: false)
            skipWhitespace()
            if position < count, bytes[position] == UInt8(ascii: "=") {
                position += 1
                skipWhitespace()
                guard position < count else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
                let quote = bytes[position]
                let valueRange: Range<Int>
                var hasEntity = false
                if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                    // One pass to the closing quote or a reference before it, the usual value
                    // having none.
                    var close = Self.firstIndex(of: quote, or: UInt8(ascii: "&"), in: bytes, (position + 1)..<count)
                    if let ampersand = close, bytes[ampersand] != quote {
                        hasEntity = true
                        close = Self.firstIndex(of: quote, in: bytes, (ampersand + 1)..<count)
                    }
                    guard let close else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
                    valueRange = (position + 1)..<close
                    position = close + 1
                } else {
                    // HTML-style unquoted value: up to whitespace or the end of the tag.
                    let valueStart = position
                    while position < count {
                        let byte = bytes[position]
                        if Self.isIn(Self.endsUnquotedValue, byte) { break }
                        if byte == UInt8(ascii: "&") { hasEntity = true }
                        position += 1
                    }
                    guard position > valueStart else { throw XHTMLFormError(.malformedTag(offset: tagOffset)) }
                    valueRange = valueStart..<position
                }
                attribute.value = valueRange
                if hasEntity {
                    attribute.hasEntity = true
                    try Self.checkEntities(bytes, valueRange)
                }
            }
            if let known { attributes.add(known, attribute) }
        }
    }

    /// Which of the attributes a fact reads the name at `range` is, if any: one integer compared
    /// with constants (``key(of:)``), or for the one longer name, its bytes.
    @inline(__always)
    private mutating func knownAttribute(_ range: Range<Int>) -> KnownAttribute? {
        if range.count == 10 { return nameIs(range, "data-error") ? .dataError : nil }
        return switch key(of: range) {
        case Self.key("id"): .id
        case Self.key("name"): .name
        case Self.key("type"): .type
        case Self.key("value"): .value
        case Self.key("for"): .for
        case Self.key("action"): .action
        case Self.key("method"): .method
        default: nil
        }
    }

    /// The value of the tag's first attribute named `known`, entity-decoded.
    mutating func attribute(_ known: KnownAttribute) -> String? {
        guard let attribute = attributes[known] else { return nil }
        return value(of: attribute)
    }

    /// The value of `attribute`, entity-decoded.
    mutating func value(of attribute: Attribute) -> String {
        guard let range = attribute.value else { return "" }
        guard attribute.hasEntity else { return Self.string(UnsafeBufferPointer(rebasing: bytes[range])) }
        return Self.decodedString(bytes, range)
    }

    /// The value of `attribute`, which is not empty, with `transform` (an ASCII case change)
    /// applied to each byte: made from the page's bytes in one go when it holds no reference.
    mutating func mappedValue(of attribute: Attribute, _ transform: (UInt8) -> UInt8) -> String {
        guard !attribute.hasEntity, let range = attribute.value else { return Self.mapBytes(value(of: attribute), transform) }
        // The closures here and below capture `bytes`, never `self`: a closure that captured the
        // parser would copy all of it on every call.
        let bytes = bytes
        return String(unsafeUninitializedCapacity: range.count) { output in
            for offset in 0..<range.count { output[offset] = transform(bytes[range.lowerBound + offset]) }
            return range.count
        }
    }

    /// ``mappedValue(of:_:)``, or `nil` when the value is blank.
    mutating func nonBlankValue(of attribute: Attribute, _ transform: (UInt8) -> UInt8) -> String? {
        guard let range = attribute.value else { return nil }
        if attribute.hasEntity {
            let decoded = value(of: attribute)
            return Self.isBlank(decoded) ? nil : Self.mapBytes(decoded, transform)
        }
        guard !Self.isBlank(UnsafeBufferPointer(rebasing: bytes[range])) else { return nil }
        return mappedValue(of: attribute, transform)
    }

    /// The upper-case method of a form whose `method` is `post` or `get` in any case: a literal,
    /// no string to make.
    mutating func usualMethod(_ attribute: Attribute) -> String? {
        guard !attribute.hasEntity, let range = attribute.value else { return nil }
        return switch key(of: range) {
        case Self.key("post"): "POST"
        case Self.key("get"): "GET"
        default: nil
        }
    }

    /// The lower-case type of an input whose `type` is one of the usual ones in any case: a
    /// literal, no string to make.
    mutating func usualType(_ attribute: Attribute) -> String? {
        guard !attribute.hasEntity, let range = attribute.value else { return nil }
        if range.count == 8 { return nameIs(range, "password") ? "password" : nil }
        return switch key(of: range) {
        case Self.key("text"): "text"
        case Self.key("hidden"): "hidden"
        case Self.key("submit"): "submit"
        default: nil
        }
    }

    /// Whether `a` and `b` have the same bytes in the page, and so the same value.
    mutating func sameValue(_ a: Attribute, _ b: Attribute) -> Bool {
        guard let first = a.value, let second = b.value else { return a.value == nil && b.value == nil }
        return Self.bytesEqual(UnsafeBufferPointer(rebasing: bytes[first]), UnsafeBufferPointer(rebasing: bytes[second]))
    }

    /// Whether the tag's first attribute named `known` has exactly the value `value`.
    mutating func attribute(_ known: KnownAttribute, is value: StaticString) -> Bool {
        guard let attribute = attributes[known] else { return false }
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
    @inline(__always)
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
    mutating func namesEqual(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count else { return false }
        var other = b.lowerBound
        for index in a {
            guard bytes[index].asciiLowercased == bytes[other].asciiLowercased else { return false }
            other += 1
        }
        return true
    }

    /// Whether the name at `range` is `name`, which is lower-case ASCII.
    @inline(__always)
    mutating func nameIs(_ range: Range<Int>, _ name: StaticString) -> Bool {
        let bytes = bytes
        return name.withUTF8Buffer { Self.nameEquals(bytes, range, $0) }
    }

    /// What the tag name at `name` is, of the names the parser tells apart: one integer compared
    /// with constants.
    mutating func kind(of name: Range<Int>) -> TagKind {
        switch key(of: name) {
        case Self.key("input"): .input
        case Self.key("label"): .label
        case Self.key("form"): .form
        case Self.key("title"): .title
        case Self.key("br"), Self.key("hr"), Self.key("col"), Self.key("img"), Self.key("wbr"), Self.key("area"), Self.key("base"),
             Self.key("link"), Self.key("meta"), Self.key("embed"), Self.key("param"), Self.key("track"), Self.key("source"):
            .void
        default: .other
        }
    }

    /// The name at `range` folded to lower case and packed into an integer, its first byte lowest
    /// and its length in the top byte, so that two names of up to seven bytes have the same key
    /// exactly when they are equal ignoring ASCII case; 0 for a longer name.
    @inline(__always)
    mutating func key(of range: Range<Int>) -> UInt64 {
        guard range.count <= 7 else { return 0 }
        let length = UInt64(range.count) << 56
        guard range.lowerBound <= bytes.count - 8, let base = bytes.baseAddress else {
            // Near the end of the page: byte by byte.
            var key = length
            var shift: UInt64 = 0
            for index in range {
                key |= UInt64(bytes[index].asciiLowercased) << shift
                shift += 8
            }
            return key
        }
        // The eight bytes from the name's start (all within the page), folded at once: the
        // high bit of each byte of `upper` marks an ASCII `A`–`Z` (of `x`'s low seven bits, at
        // least `A` and not beyond `Z`, the byte itself below 0x80), shifted down to its 0x20.
        let x = UInt64(littleEndian: UnsafeRawPointer(base + range.lowerBound).loadUnaligned(as: UInt64.self))
        let low = x & 0x7F7F_7F7F_7F7F_7F7F
        let atLeastA = low &+ 0x3F3F_3F3F_3F3F_3F3F, beyondZ = low &+ 0x2525_2525_2525_2525
        let upper = atLeastA & ~beyondZ & ~x & 0x8080_8080_8080_8080
        let folded = x | upper >> 2
        return folded & ((1 << (8 * UInt64(range.count))) - 1) | length
    }

    /// The key of `name`, lower-case ASCII of two to seven bytes, as ``key(of:)`` makes it from the
    /// page (inlined, a constant).
    @inline(__always)
    static func key(_ name: StaticString) -> UInt64 {
        name.withUTF8Buffer { name in
            var key = UInt64(name.count) << 56
            for index in 0..<name.count { key |= UInt64(name[index]) << (8 * UInt64(index)) }
            return key
        }
    }

    // MARK: - Scanning

    private mutating func hasPrefix(_ prefix: StaticString, at offset: Int) -> Bool {
        let bytes = bytes
        return prefix.withUTF8Buffer { pattern in
            guard offset + pattern.count <= bytes.count else { return false }
            for index in 0..<pattern.count where bytes[offset + index] != pattern[index] { return false }
            return true
        }
    }

    /// The offset of the first occurrence of `pattern` at or after `start`.
    private mutating func find(_ pattern: StaticString, from start: Int) -> Int? {
        let bytes = bytes
        return pattern.withUTF8Buffer { pattern -> Int? in
            guard let first = pattern.first, start <= bytes.count else { return nil }
            var index = start
            while let candidate = Self.firstIndex(of: first, in: bytes, index..<bytes.count),
                  candidate + pattern.count <= bytes.count {
                var offset = 1
                while offset < pattern.count, bytes[candidate + offset] == pattern[offset] { offset += 1 }
                if offset == pattern.count { return candidate }
                index = candidate + 1
            }
            return nil
        }
    }

    /// Reads a tag name (letter first, then letters, digits, `-`, `_`, `:`, `.`): where it lies.
    private mutating func readName() -> Range<Int> {
        guard position < bytes.count, Self.isLetter(bytes[position]) else { return position..<position }
        let start = position
        position += 1
        while position < bytes.count {
            let byte = bytes[position]
            guard Self.isLetter(byte) || Self.isIn(Self.nameDigitsAndMarks, byte) || byte == UInt8(ascii: "_") else { break }
            position += 1
        }
        return start..<position
    }

    private mutating func skipWhitespace() {
        while position < bytes.count, Self.isWhitespace(bytes[position]) {
            position += 1
        }
    }

    /// Whitespace, `=`, `>`, `/`, quotes and `<`, for ``isIn(_:_:)``.
    private static var endsAttributeName: UInt64 {
        whitespace | 1 << UInt8(ascii: "=") | 1 << UInt8(ascii: ">") | 1 << UInt8(ascii: "/")
            | 1 << UInt8(ascii: "\"") | 1 << UInt8(ascii: "'") | 1 << UInt8(ascii: "<")
    }

    /// Whitespace, `>`, `<` and quotes, for ``isIn(_:_:)``.
    private static var endsUnquotedValue: UInt64 {
        whitespace | 1 << UInt8(ascii: ">") | 1 << UInt8(ascii: "<") | 1 << UInt8(ascii: "\"") | 1 << UInt8(ascii: "'")
    }

    /// The digits, `-`, `:` and `.` (a tag name's bytes below 64), for ``isIn(_:_:)``.
    private static var nameDigitsAndMarks: UInt64 {
        0x3FF << UInt8(ascii: "0") | 1 << UInt8(ascii: "-") | 1 << UInt8(ascii: ":") | 1 << UInt8(ascii: ".")
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }
}
