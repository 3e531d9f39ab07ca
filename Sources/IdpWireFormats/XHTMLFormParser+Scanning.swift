#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The parser's scanning helpers: byte searches, comparisons and classes over the page, and the
// strings it makes of its bytes.
extension XHTMLFormParser {
    /// The offset of the first `byte` within `range` of `bytes`.
    static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        firstIndex(of: byte, or: byte, in: bytes, range)
    }

    /// The offset of the first `a` or `b` within `range` of `bytes`, read eight bytes at a time:
    /// most of a page's bytes are in values and text runs, searched for their end, and most of
    /// those are too short for a call to `memchr` to pay.
    static func firstIndex(of a: UInt8, or b: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        guard let base = bytes.baseAddress else { return nil }
        let ones: UInt64 = 0x0101_0101_0101_0101, highBits: UInt64 = 0x8080_8080_8080_8080
        let patternA = ones &* UInt64(a), patternB = ones &* UInt64(b)
        var index = range.lowerBound
        // A whole word is read only where eight bytes of the range remain.
        while range.upperBound - index >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            // A byte of `x` that is zero is a match. `(x - ones) & ~x` sets the high bit of the
            // first zero byte and of none before it (bytes after it may be flagged falsely), so the
            // lowest flag is the first match.
            let x = word ^ patternA, y = word ^ patternB
            let found = ((x &- ones) & ~x | (y &- ones) & ~y) & highBits
            if found != 0 { return index + found.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < range.upperBound {
            if base[index] == a || base[index] == b { return index }
            index += 1
        }
        return nil
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
        isIn(whitespace, byte)
    }

    /// Whether `byte` is below 64 and its bit is set in `set` (bit `n` for byte `n`): a byte
    /// class tested with one shift instead of a comparison per member.
    @inline(__always)
    static func isIn(_ set: UInt64, _ byte: UInt8) -> Bool {
        byte < 64 && (set &>> UInt64(byte)) & 1 != 0
    }

    /// Space, tab, line feed, form feed, carriage return, for ``isIn(_:_:)``.
    static var whitespace: UInt64 {
        1 << 0x20 | 1 << 0x09 | 1 << 0x0A | 1 << 0x0C | 1 << 0x0D
    }

    static func uppercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte.asciiLowercased
    }

    /// `text` with `transform` applied to each byte (an ASCII case change), by index; `text`
    /// itself when no byte changes.
    static func mapBytes(_ text: String, _ transform: (UInt8) -> UInt8) -> String {
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

    /// Whether `text` is only whitespace, or empty.
    static func isBlank(_ text: String) -> Bool {
        for byte in text.utf8 where !isWhitespace(byte) { return false }
        return true
    }

    /// Whether `bytes` are only whitespace, or none.
    static func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where !isWhitespace(byte) { return false }
        return true
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// The text without leading and trailing XML whitespace.
    static func trimmed(_ text: UnsafeBufferPointer<UInt8>) -> String {
        var first = 0, end = text.count
        while first < end, isWhitespace(text[first]) { first += 1 }
        while end > first, isWhitespace(text[end - 1]) { end -= 1 }
        return string(UnsafeBufferPointer(rebasing: text[first..<end]))
    }

    /// The string of `utf8`, which is UTF-8. One of at most 15 bytes, what a `String` holds
    /// inline on 64-bit platforms (most ids, names and labels), is written in place, which costs
    /// less than `String(decoding:as:)`; a longer one is decoded, which costs less than writing it.
    static func string(_ utf8: UnsafeBufferPointer<UInt8>) -> String {
        guard !utf8.isEmpty, utf8.count <= 15, let source = utf8.baseAddress else { return String(decoding: utf8, as: UTF8.self) }
        // The buffer holds at least the capacity asked for.
        return String(unsafeUninitializedCapacity: utf8.count) { output in
            UnsafeMutableRawPointer(output.baseAddress!).copyMemory(from: source, byteCount: utf8.count)
            return utf8.count
        }
    }

    /// The text trimmed, with each run of XML whitespace inside it replaced by one space, written
    /// straight into the string's storage (never longer than the text).
    static func collapsed(_ text: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: text.count) { output in
            var count = 0
            var pendingSpace = false
            for byte in text {
                if isWhitespace(byte) {
                    pendingSpace = count > 0
                } else {
                    // A space written stands for a whitespace byte read before it, so no more
                    // bytes are written than read: `count` stays within `output`.
                    if pendingSpace {
                        output[count] = UInt8(ascii: " ")
                        count += 1
                    }
                    pendingSpace = false
                    output[count] = byte
                    count += 1
                }
            }
            return count
        }
    }
}
