// The parser's entity references: the five XML names and numeric references, decoded with a
// bounded scan.
extension XHTMLFormParser {
    /// Appends the bytes of `range` with entity references replaced.
    static func decodeEntities(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, into output: inout [UInt8]
    ) throws(XHTMLFormError) {
        try forEachPiece(bytes, range) { run in
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run]))
        } reference: { scalar in
            if scalar.isASCII {
                output.append(UInt8(truncatingIfNeeded: scalar.value))
            } else {
                UTF8.encode(scalar) { output.append($0) }
            }
        }
    }

    /// Checks the entity references of `range`, decoding nothing.
    static func checkEntities(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(XHTMLFormError) {
        try forEachPiece(bytes, range) { _ in } reference: { _ in }
    }

    /// The bytes of `range`, whose references were checked, decoded straight into a string's
    /// storage: a reference is never shorter than its character's UTF-8 (`&amp;` is five bytes
    /// for one, `&#x10000;` nine for four), so the decoded text fits in `range.count` bytes.
    static func decodedString(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(unsafeUninitializedCapacity: range.count) { output in
            var count = 0
            // Checked when the tag was read, so this cannot fail.
            try? forEachPiece(bytes, range) { run in
                precondition(count + run.count <= output.count)
                UnsafeMutableRawPointer(output.baseAddress! + count).copyMemory(from: bytes.baseAddress! + run.lowerBound, byteCount: run.count)
                count += run.count
            } reference: { scalar in
                precondition(count + UTF8.width(scalar) <= output.count)
                UTF8.encode(scalar) { byte in
                    output[count] = byte
                    count += 1
                }
            }
            return count
        }
    }

    /// Hands `literal` each run of plain bytes of `range` and `reference` each reference's
    /// character, in order.
    ///
    /// A reference must end with `;` within 32 bytes; scanning is bounded by that, so hostile
    /// input full of `&` stays linear.
    @inline(__always)
    private static func forEachPiece(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
        literal: (Range<Int>) -> Void, reference: (Unicode.Scalar) -> Void
    ) throws(XHTMLFormError) {
        var index = range.lowerBound
        while index < range.upperBound {
            // Plain text up to the next reference goes over in one piece.
            let ampersand = firstIndex(of: UInt8(ascii: "&"), in: bytes, index..<range.upperBound) ?? range.upperBound
            if ampersand > index {
                literal(index..<ampersand)
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
            reference(scalar)
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
