/// `application/x-www-form-urlencoded` bodies and RFC 3986 percent-encoding.
public enum FormURLEncoding {
    private static let upperHexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Encodes name/value pairs as a form body, in the given order.
    ///
    /// Only the RFC 3986 unreserved characters (ALPHA DIGIT - . _ ~) are kept; a space becomes
    /// `+`; every other UTF-8 byte becomes `%XX` with upper-case hex. That is stricter than the
    /// WHATWG serializer (which keeps `*`) but decodes identically everywhere.
    /// - Parameter pairs: The fields; names may repeat.
    /// - Returns: The body text, e.g. `a=1&b=x+y`.
    public static func encode(_ pairs: [(String, String)]) -> String {
        var output: [UInt8] = []
        // Most fields need no escape: their length plus the separators is usually all it takes.
        output.reserveCapacity(pairs.reduce(pairs.count * 2) { $0 + $1.0.utf8.count + $1.1.utf8.count } + 16)
        for (index, (name, value)) in pairs.enumerated() {
            if index > 0 { output.append(UInt8(ascii: "&")) }
            appendEncoded(name, to: &output, spaceAsPlus: true)
            output.append(UInt8(ascii: "="))
            appendEncoded(value, to: &output, spaceAsPlus: true)
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes a form body into its pairs, in order.
    ///
    /// Empty text gives no pairs, empty segments (`a=1&&b=2`) are skipped, and a segment without
    /// `=` is a name with an empty value.
    /// - Parameter text: The body text.
    /// - Returns: The pairs, names may repeat.
    /// - Throws: ``FormURLEncodingError`` for a malformed `%` escape (offset into `text`) or
    ///   bytes that do not decode to UTF-8.
    public static func decode(_ text: String) throws(FormURLEncodingError) -> [(name: String, value: String)] {
        var contiguous = text
        // The text's own UTF-8 storage, read in place (withUTF8 makes a bridged string native).
        let decoded: Result<[(name: String, value: String)], FormURLEncodingError> = contiguous.withUTF8 { bytes in
            var pairs: [(name: String, value: String)] = []
            var start = 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
                if end > start {
                    var equals = start
                    while equals < end, bytes[equals] != UInt8(ascii: "=") { equals += 1 }
                    let nameRange = start..<equals
                    let valueRange = equals < end ? (equals + 1)..<end : end..<end
                    do throws(FormURLEncodingError) {
                        let name = try decodeBytes(bytes, range: nameRange, plusAsSpace: true, text: text)
                        let value = try decodeBytes(bytes, range: valueRange, plusAsSpace: true, text: text)
                        pairs.append((name: name, value: value))
                    } catch {
                        return .failure(error)
                    }
                }
                start = end + 1
            }
            return .success(pairs)
        }
        return try decoded.get()
    }

    /// Percent-encodes text for a URI component: unreserved characters are kept, everything else,
    /// space included, becomes `%XX` of its UTF-8 bytes.
    /// - Parameter text: Arbitrary text.
    /// - Returns: The encoded text, e.g. `a%20b%26c`.
    public static func percentEncode(_ text: String) -> String {
        var output: [UInt8] = []
        appendEncoded(text, to: &output, spaceAsPlus: false)
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (either case of hex digit).
    /// - Parameters:
    ///   - text: Percent-encoded text.
    ///   - plusAsSpace: Whether `+` means a space, as in form bodies and query strings.
    /// - Returns: The decoded text.
    /// - Throws: ``FormURLEncodingError`` for a malformed escape or bytes that are not UTF-8.
    public static func percentDecode(_ text: String, plusAsSpace: Bool) throws(FormURLEncodingError) -> String {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { (bytes) throws(FormURLEncodingError) in
            try decodeBytes(bytes, range: 0..<bytes.count, plusAsSpace: plusAsSpace, text: text)
        }
    }

    /// Decodes one form component (`+` as space), or `nil` when an escape is malformed or decodes
    /// to bytes that are not UTF-8: for parsers that report the raw component themselves.
    /// `bytes` must be a piece of UTF-8 text cut at ASCII delimiters (`&`, `=`), as
    /// ``decode(_:)`` cuts them.
    static func decodeComponent(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { buffer in
            try? decodeBytes(buffer, range: 0..<buffer.count, plusAsSpace: true, text: "")
        }
    }

    private static func decodeBytes(
        _ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>, plusAsSpace: Bool, text: String
    ) throws(FormURLEncodingError) -> String {
        // Nothing to decode: the bytes are a piece of `text` cut at ASCII delimiters, so they are
        // valid UTF-8 as they stand.
        if !bytes[range].contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
        var output: [UInt8] = []
        output.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < range.upperBound,
                      let high = Hex.value(of: bytes[index + 1]),
                      let low = Hex.value(of: bytes[index + 2])
                else {
                    throw FormURLEncodingError(.malformedEscape(offset: index), text: text)
                }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        guard let decoded = String(validating: output, as: UTF8.self) else {
            throw FormURLEncodingError(.invalidUTF8, text: text)
        }
        return decoded
    }

    private static func appendEncoded(_ text: String, to output: inout [UInt8], spaceAsPlus: Bool) {
        var text = text
        text.withUTF8 { utf8 in
            // Runs of unreserved bytes (most of every field) go over in one copy.
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                if byte.isURIUnreserved { continue }
                if index > runStart { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                runStart = index + 1
                if byte == UInt8(ascii: " "), spaceAsPlus {
                    output.append(UInt8(ascii: "+"))
                } else {
                    output.append(UInt8(ascii: "%"))
                    output.append(upperHexDigits[Int(byte >> 4)])
                    output.append(upperHexDigits[Int(byte & 0x0F)])
                }
            }
            if utf8.count > runStart { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count])) }
        }
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
