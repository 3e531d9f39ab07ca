/// Base-16 text for digests, trace ids and test vectors.
package enum Hex {
    /// Encodes bytes as lower-case hexadecimal, two digits per byte.
    /// - Parameter bytes: The bytes to encode.
    /// - Returns: The hex text; empty for no bytes.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            output.append(digit(byte >> 4))
            output.append(digit(byte & 0x0F))
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Encodes raw bytes as lower-case hexadecimal straight into the string's storage.
    static func encode(raw bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for index in 0..<bytes.count {
                buffer[2 * index] = digit(bytes[index] >> 4)
                buffer[2 * index + 1] = digit(bytes[index] & 0x0F)
            }
            return bytes.count * 2
        }
    }

    /// The lower-case hex digit, as a UTF-8 byte, of a value below 16: for callers that write hex
    /// text into a buffer of their own (trace ids, UUIDs).
    @inlinable @inline(__always)
    package static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Decodes hexadecimal text; upper- and lower-case digits are both accepted.
    /// - Parameter text: Hex digits with no separators or prefix.
    /// - Returns: The bytes, or `nil` when the length is odd or a character is not a hex digit.
    package static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(of: utf8[index]), let low = value(of: utf8[index + 1]) else { return nil }
            output.append(high << 4 | low)
            index += 2
        }
        return output
    }

    /// The value of one hex digit, or `nil`; internal so the other parsers share one definition.
    static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
