// The parser's entity references: the five XML names and numeric references, decoded with a
// bounded scan.
extension XHTMLFormParser {
    /// Appends the bytes of `range` with entity references replaced.
    ///
    /// A reference must end with `;` within 32 bytes; scanning is bounded by that, so hostile
    /// input full of `&` stays linear.
    static func decodeEntities(
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
}
