/// Escaping of text for XML and XHTML element content and quoted attribute values.
package enum XMLEscaping {
    /// Replaces the five XML special characters with entity references.
    ///
    /// The apostrophe becomes `&#39;` rather than `&apos;` because HTML 4 parsers do not know
    /// `&apos;`, and the same pages may be read by either kind of parser.
    /// - Parameter text: Arbitrary text.
    /// - Returns: Text safe inside element content and in single- or double-quoted attributes.
    package static func escape(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        // Working on UTF-8 bytes is safe: the five specials are ASCII and never occur inside a
        // multi-byte sequence, and a combining mark after them cannot hide them as it would in a
        // Character comparison.
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): output.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): output.append(contentsOf: "&#39;".utf8)
            default: output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
