/// `application/x-www-form-urlencoded` bodies and RFC 3986 percent-encoding.
package enum FormURLEncoding {
    /// Encodes name/value pairs as a form body, in the given order.
    ///
    /// Only the RFC 3986 unreserved characters (ALPHA DIGIT - . _ ~) are kept; a space becomes
    /// `+`; every other UTF-8 byte becomes `%XX` with upper-case hex. That is stricter than the
    /// WHATWG serializer (which keeps `*`) but decodes identically everywhere.
    /// - Parameter pairs: The fields; names may repeat.
    /// - Returns: The body text, e.g. `a=1&b=x+y`.
    package static func encode(_ pairs: [(String, String)]) -> String {
        // Measured first, then written once into the string's own storage: no byte array between.
        byteClasses.withUnsafeBufferPointer { classes in
            String(unsafeUninitializedCapacity: encodedLength(pairs, classes)) { write(pairs, into: $0, classes) }
        }
    }

    /// `prefix`, the ASCII byte `separator` and the pairs encoded as ``encode(_:)`` encodes them,
    /// written once into one string: a URI with its query or fragment, with no string made for
    /// the encoded pairs or for the URI before them.
    /// - Parameters:
    ///   - pairs: The fields; names may repeat.
    ///   - prefix: The text before them, copied as it is.
    ///   - separator: An ASCII byte between `prefix` and the pairs (`?`, `&` or `#`).
    /// - Returns: The text, e.g. `https://app/cb#code=1&state=x+y`.
    package static func encode(_ pairs: [(String, String)], after prefix: String, separator: UInt8) -> String {
        var prefix = prefix
        return prefix.withUTF8 { head in
            byteClasses.withUnsafeBufferPointer { classes in
                String(unsafeUninitializedCapacity: head.count + 1 + encodedLength(pairs, classes)) { buffer in
                    _ = UnsafeMutableBufferPointer(rebasing: buffer[..<head.count]).initialize(fromContentsOf: head)
                    buffer[head.count] = separator
                    return head.count + 1 + write(pairs, into: UnsafeMutableBufferPointer(rebasing: buffer[(head.count + 1)...]), classes)
                }
            }
        }
    }

    /// The same encoding as ``encode(_:)``, as the bytes of a request body, written once.
    package static func encodeBytes(_ pairs: [(String, String)]) -> [UInt8] {
        byteClasses.withUnsafeBufferPointer { classes in
            let length = encodedLength(pairs, classes)
            guard length > 0 else { return [] }
            return [UInt8](unsafeUninitializedCapacity: length) { buffer, count in count = write(pairs, into: buffer, classes) }
        }
    }

    /// The length in UTF-8 bytes of `text` encoded as ``encode(_:)`` encodes each name and value:
    /// for a caller that writes a form or query of its own with ``write(component:into:at:)``.
    package static func componentLength(_ text: String) -> Int {
        byteClasses.withUnsafeBufferPointer { classes in encodedLength(text, spaceAsPlus: true, classes) }
    }

    /// Writes `text` encoded as ``encode(_:)`` encodes each name and value into `buffer` from
    /// `offset`, which must leave room for ``componentLength(_:)`` bytes.
    /// - Returns: The offset after what was written.
    package static func write(component text: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        byteClasses.withUnsafeBufferPointer { classes in writeEncoded(text, into: buffer, at: offset, spaceAsPlus: true, classes) }
    }

    /// Copies the UTF-8 bytes of `text` as they are into `buffer` from `offset`, which must leave
    /// room for them: the fixed parts of a form or query written with ``write(component:into:at:)``.
    /// - Returns: The offset after what was written.
    package static func write(verbatim text: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        var text = text
        return text.withUTF8 { utf8 in
            _ = UnsafeMutableBufferPointer(rebasing: buffer[offset..<(offset + utf8.count)]).initialize(fromContentsOf: utf8)
            return offset + utf8.count
        }
    }

    /// Whether every UTF-8 byte of `text` is RFC 3986 unreserved (``Swift/UInt8/isURIUnreserved``),
    /// read by the table the encoder reads.
    package static func isUnreserved(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            byteClasses.withUnsafeBufferPointer { classes in
                for index in 0..<utf8.count where classes[Int(utf8[index])] != ByteClass.unreserved { return false }
                return true
            }
        }
    }

    /// What each byte becomes, by table: a branch per byte on the character ranges mispredicted
    /// on random text (tokens, verifiers), five times slower than this lookup.
    private enum ByteClass {
        static let unreserved: UInt8 = 0, space: UInt8 = 1, escaped: UInt8 = 2
    }

    private static let byteClasses: [UInt8] = (0...255).map { value in
        let byte = UInt8(value)
        return byte.isURIUnreserved ? ByteClass.unreserved : byte == UInt8(ascii: " ") ? ByteClass.space : ByteClass.escaped
    }

    private static func encodedLength(_ pairs: [(String, String)], _ classes: UnsafeBufferPointer<UInt8>) -> Int {
        var length = max(0, pairs.count * 2 - 1)
        for index in 0..<pairs.count {
            length += encodedLength(pairs[index].0, spaceAsPlus: true, classes) + encodedLength(pairs[index].1, spaceAsPlus: true, classes)
        }
        return length
    }

    private static func write(_ pairs: [(String, String)], into buffer: UnsafeMutableBufferPointer<UInt8>, _ classes: UnsafeBufferPointer<UInt8>) -> Int {
        var offset = 0
        for index in 0..<pairs.count {
            if index > 0 {
                buffer[offset] = UInt8(ascii: "&")
                offset += 1
            }
            offset = writeEncoded(pairs[index].0, into: buffer, at: offset, spaceAsPlus: true, classes)
            buffer[offset] = UInt8(ascii: "=")
            offset += 1
            offset = writeEncoded(pairs[index].1, into: buffer, at: offset, spaceAsPlus: true, classes)
        }
        return offset
    }

    /// Runs `body` over the UTF-8 bytes of `text`: where they lie when the string is native or
    /// small (no copy of the string to call the mutating `withUTF8` on), else over a native copy.
    @inline(__always)
    private static func withUTF8<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var text = text
        return text.withUTF8(body)
    }

    /// Decodes a form body into its pairs, in order.
    ///
    /// Empty text gives no pairs, empty segments (`a=1&&b=2`) are skipped, and a segment without
    /// `=` is a name with an empty value.
    /// - Parameter text: The body text.
    /// - Returns: The pairs, names may repeat.
    /// - Throws: ``FormURLEncodingError`` for a malformed `%` escape (offset into `text`) or
    ///   bytes that do not decode to UTF-8.
    package static func decode(_ text: String) throws(FormURLEncodingError) -> [(name: String, value: String)] {
        var contiguous = text
        // The text's own UTF-8 storage, read in place (withUTF8 makes a bridged string native);
        // its error comes out as a value, as withUTF8 does not keep a thrown error's type.
        let decoded = contiguous.withUTF8 { bytes in Result { () throws(FormURLEncodingError) in try decode(bytes, text: { text }) } }
        return try decoded.get()
    }

    /// ``decode(_:)`` of a part of a text (a request target's query), read where it lies: no
    /// string is made of it unless an error quotes it.
    package static func decode(_ text: Substring) throws(FormURLEncodingError) -> [(name: String, value: String)] {
        var contiguous = text
        let decoded = contiguous.withUTF8 { bytes in Result { () throws(FormURLEncodingError) in try decode(bytes, text: { String(text) }) } }
        return try decoded.get()
    }

    /// ``decode(_:)`` of a body's bytes, or `nil` when they are not UTF-8. Bytes that are all
    /// ASCII (a form body always is) are read where they lie: no string is made of them unless
    /// an error quotes them.
    package static func decode(utf8 bytes: [UInt8]) throws(FormURLEncodingError) -> [(name: String, value: String)]? {
        try bytes.withUnsafeBufferPointer { (bytes) throws(FormURLEncodingError) -> [(name: String, value: String)]? in
            if ByteScan.isASCII(bytes) { return try decode(bytes, text: { String(decoding: bytes, as: UTF8.self) }) }
            guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
            return try decode(text)
        }
    }

    /// The pairs in `bytes`, which must be UTF-8 text; `text` makes that text for an error.
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, text: () -> String) throws(FormURLEncodingError) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        // One pair per '&'-separated piece at most: room for all of them, made once.
        var pieces = 1
        var amp = ByteScan.firstIndex(of: UInt8(ascii: "&"), in: bytes, from: 0, to: bytes.count)
        while amp < bytes.count {
            pieces += 1
            amp = ByteScan.firstIndex(of: UInt8(ascii: "&"), in: bytes, from: amp + 1, to: bytes.count)
        }
        pairs.reserveCapacity(pieces)
        var start = 0
        while start <= bytes.count {
            let end = ByteScan.firstIndex(of: UInt8(ascii: "&"), in: bytes, from: start, to: bytes.count)
            if end > start {
                let equals = ByteScan.firstIndex(of: UInt8(ascii: "="), in: bytes, from: start, to: end)
                let nameRange = start..<equals
                let valueRange = equals < end ? (equals + 1)..<end : end..<end
                let name = try decodeBytes(bytes, range: nameRange, plusAsSpace: true, text: text)
                let value = try decodeBytes(bytes, range: valueRange, plusAsSpace: true, text: text)
                pairs.append((name: name, value: value))
            }
            start = end + 1
        }
        return pairs
    }

    /// Percent-encodes text for a URI component: unreserved characters are kept, everything else,
    /// space included, becomes `%XX` of its UTF-8 bytes.
    /// - Parameter text: Arbitrary text.
    /// - Returns: The encoded text, e.g. `a%20b%26c`.
    package static func percentEncode(_ text: String) -> String {
        byteClasses.withUnsafeBufferPointer { classes in
            String(unsafeUninitializedCapacity: encodedLength(text, spaceAsPlus: false, classes)) { buffer in
                writeEncoded(text, into: buffer, at: 0, spaceAsPlus: false, classes)
            }
        }
    }

    /// Decodes `%XX` escapes (either case of hex digit).
    /// - Parameters:
    ///   - text: Percent-encoded text.
    ///   - plusAsSpace: Whether `+` means a space, as in form bodies and query strings.
    /// - Returns: The decoded text.
    /// - Throws: ``FormURLEncodingError`` for a malformed escape or bytes that are not UTF-8.
    package static func percentDecode(_ text: String, plusAsSpace: Bool) throws(FormURLEncodingError) -> String {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { (bytes) throws(FormURLEncodingError) in
            try decodeBytes(bytes, range: 0..<bytes.count, plusAsSpace: plusAsSpace, text: { text })
        }
    }

    /// Decodes one form component (`+` as space), the bytes in `range`, read where they lie; or
    /// `nil` when an escape is malformed or decodes to bytes that are not UTF-8: for parsers that
    /// report the raw component themselves. `bytes` must be UTF-8 text and `range` a piece of it
    /// cut at ASCII delimiters (`&`, `=`), as ``decode(_:)`` cuts them.
    static func decodeComponent(_ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>) -> String? {
        try? decodeBytes(bytes, range: range, plusAsSpace: true, text: { "" })
    }

    private static func decodeBytes(
        _ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>, plusAsSpace: Bool, text: () -> String
    ) throws(FormURLEncodingError) -> String {
        // Nothing to decode: the bytes are a piece of `text` cut at ASCII delimiters, so they are
        // valid UTF-8 as they stand. Found by index, as the loop below reads them: a generic
        // sequence algorithm over a slice looks its types up at run time for every byte in an
        // unoptimized build, under a lock every thread shares.
        let plain = ByteScan.firstIndex(of: UInt8(ascii: "%"), or: UInt8(ascii: "+"), in: bytes, from: range.lowerBound, to: range.upperBound)
        if plain == range.upperBound {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
        // Decoded into scratch room (on the stack when small), then copied once into the string.
        let outcome: Result<String, FormURLEncodingError> = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: range.count) { output in
            var index = range.lowerBound, written = 0
            while index < range.upperBound {
                let byte = bytes[index]
                if byte == UInt8(ascii: "%") {
                    guard index + 2 < range.upperBound,
                          let high = Hex.value(of: bytes[index + 1]),
                          let low = Hex.value(of: bytes[index + 2])
                    else {
                        return .failure(FormURLEncodingError(.malformedEscape(offset: index), text: text()))
                    }
                    output[written] = high << 4 | low
                    index += 3
                } else {
                    output[written] = plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte
                    index += 1
                }
                written += 1
            }
            guard let decoded = String(validating: UnsafeBufferPointer(rebasing: output[..<written]), as: UTF8.self) else {
                return .failure(FormURLEncodingError(.invalidUTF8, text: text()))
            }
            return .success(decoded)
        }
        return try outcome.get()
    }

    /// The length in bytes of `text` encoded as ``writeEncoded(_:into:at:spaceAsPlus:_:)`` writes it.
    private static func encodedLength(_ text: String, spaceAsPlus: Bool, _ classes: UnsafeBufferPointer<UInt8>) -> Int {
        // Over the string's own UTF-8 storage (its utf8 view stepped a byte at a time, slowly).
        withUTF8(of: text) { utf8 in
            var length = utf8.count
            for byte in utf8 {
                switch classes[Int(byte)] {
                case ByteClass.unreserved: break
                case ByteClass.space where spaceAsPlus: break
                default: length += 2
                }
            }
            return length
        }
    }

    /// Writes `text` percent-encoded into `buffer` from `offset` (which must have room for
    /// ``encodedLength(_:spaceAsPlus:_:)`` bytes); returns the offset after it.
    private static func writeEncoded(_ text: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int, spaceAsPlus: Bool,
                                     _ classes: UnsafeBufferPointer<UInt8>) -> Int {
        withUTF8(of: text) { utf8 in
            var offset = offset
            for byte in utf8 {
                switch classes[Int(byte)] {
                case ByteClass.unreserved:
                    buffer[offset] = byte
                    offset += 1
                case ByteClass.space where spaceAsPlus:
                    buffer[offset] = UInt8(ascii: "+")
                    offset += 1
                default:
                    buffer[offset] = UInt8(ascii: "%")
                    buffer[offset + 1] = upperHexDigit(byte >> 4)
                    buffer[offset + 2] = upperHexDigit(byte & 0x0F)
                    offset += 3
                }
            }
            return offset
        }
    }

    @inline(__always)
    private static func upperHexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") - 10 + value
    }
}

extension UInt8 {
    /// RFC 3986 unreserved: ALPHA DIGIT - . _ ~ (form encoding copies these as they are; PKCE
    /// verifiers and realm names are made of them).
    var isURIUnreserved: Bool {
        switch self {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// The byte with ASCII `A`–`Z` folded to `a`–`z`; every other byte as it is (case-insensitive
    /// matching of ASCII names: XHTML tag and attribute names, HTTP field names).
    var asciiLowercased: UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self) ? self + 32 : self
    }
}
