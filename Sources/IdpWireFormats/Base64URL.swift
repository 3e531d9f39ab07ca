/// The URL- and filename-safe Base 64 encoding (RFC 4648 §5), as used by JOSE, PKCE and tokens.
package enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes bytes with the URL-safe alphabet and without `=` padding, as RFC 7515 and
    /// RFC 7636 require.
    /// - Parameter bytes: The bytes to encode.
    /// - Returns: The encoded text; empty for no bytes.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(raw: UnsafeRawBufferPointer($0)) }) {
            return encoded
        }
        return Array(bytes).withUnsafeBytes { encode(raw: $0) }
    }

    /// Encodes `input` straight into the string's storage: no intermediate array.
    static func encode(raw input: UnsafeRawBufferPointer) -> String {
        let length = (input.count * 4 + 2) / 3
        guard length > 0 else { return "" }
        return alphabet.withUnsafeBufferPointer { alphabet in
            String(unsafeUninitializedCapacity: length) { output in
                var index = 0, written = 0
                while index + 3 <= input.count {
                    let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output[written] = alphabet[Int(group >> 18 & 0x3F)]
                    output[written + 1] = alphabet[Int(group >> 12 & 0x3F)]
                    output[written + 2] = alphabet[Int(group >> 6 & 0x3F)]
                    output[written + 3] = alphabet[Int(group & 0x3F)]
                    index += 3
                    written += 4
                }
                switch input.count - index {
                case 1:
                    let group = UInt32(input[index]) << 16
                    output[written] = alphabet[Int(group >> 18 & 0x3F)]
                    output[written + 1] = alphabet[Int(group >> 12 & 0x3F)]
                    written += 2
                case 2:
                    let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                    output[written] = alphabet[Int(group >> 18 & 0x3F)]
                    output[written + 1] = alphabet[Int(group >> 12 & 0x3F)]
                    output[written + 2] = alphabet[Int(group >> 6 & 0x3F)]
                    written += 3
                default:
                    break
                }
                return written
            }
        }
    }

    /// Decodes URL-safe Base 64, with or without `=` padding.
    ///
    /// Strict on purpose: the standard alphabet's `+` and `/`, whitespace, misplaced or partial
    /// padding, impossible lengths (a remainder of one character) and non-zero unused trailing
    /// bits are all rejected, so every byte string has exactly one accepted unpadded encoding.
    /// - Parameter text: The encoded text.
    /// - Returns: The bytes, or `nil` when the text is not valid URL-safe Base 64.
    package static func decode(_ text: String) -> [UInt8]? {
        var symbols = Array(text.utf8)
        if let firstPad = symbols.firstIndex(of: UInt8(ascii: "=")) {
            // Padding is only meaningful when it completes the last quantum exactly.
            guard symbols.count % 4 == 0 else { return nil }
            let padCount = symbols.count - firstPad
            guard padCount <= 2 else { return nil }
            for index in firstPad..<symbols.count where symbols[index] != UInt8(ascii: "=") { return nil }
            symbols.removeLast(padCount)
            guard symbols.count % 4 == 4 - padCount else { return nil }
        }
        guard symbols.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(symbols.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for symbol in symbols {
            guard let value = sextet(symbol) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // Leftover bits must be zero (RFC 4648 §3.5) or two texts would decode to the same bytes.
        guard accumulator == 0 else { return nil }
        return output
    }

    /// The 6-bit value of one URL-safe symbol, or `nil`.
    private static func sextet(_ symbol: UInt8) -> UInt8? {
        switch symbol {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): symbol - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): symbol - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): symbol - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
