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
    private mutating func findAttribute(_ name: StaticString) -> Attribute? {
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
    mutating func attribute(_ name: StaticString) -> String? {
        guard let attribute = findAttribute(name) else { return nil }
        return value(of: attribute)
    }

    private mutating func value(of attribute: Attribute) -> String {
        guard let range = attribute.value else { return "" }
        guard attribute.hasEntity else { return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        var decoded: [UInt8] = []
        // Checked when the tag was read, so this cannot fail.
        try? Self.decodeEntities(bytes, range, into: &decoded)
        return String(decoding: decoded, as: UTF8.self)
    }

    /// Whether the tag's first attribute named `name` has exactly the value `value`.
    mutating func attribute(_ name: StaticString, is value: StaticString) -> Bool {
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
    mutating func nameIs(_ range: Range<Int>, _ name: StaticString) -> Bool {
        let bytes = bytes
        return name.withUTF8Buffer { Self.nameEquals(bytes, range, $0) }
    }

    /// What the tag name at `name` is, of the names the parser tells apart.
    mutating func kind(of name: Range<Int>) -> TagKind {
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

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }
}
