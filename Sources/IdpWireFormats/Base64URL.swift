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
        let length = encodedLength(input.count)
        guard length > 0 else { return "" }
        return String(unsafeUninitializedCapacity: length) { write(input, into: $0) }
    }

    /// Appends the encoding of `input` (as ``encode(_:)`` writes it) to `output`: for a caller
    /// that writes a token into a body of its own, with no string made.
    /// - Parameters:
    ///   - input: The bytes to encode.
    ///   - output: The bytes the encoding is appended to.
    package static func append(raw input: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        let start = output.count, length = encodedLength(input.count)
        output.append(contentsOf: repeatElement(0, count: length))
        output.withUnsafeMutableBufferPointer { buffer in
            _ = write(input, into: UnsafeMutableBufferPointer(rebasing: buffer[start..<(start + length)]))
        }
    }

    /// The length of the unpadded encoding of `count` bytes.
    static func encodedLength(_ count: Int) -> Int { (count * 4 + 2) / 3 }

    /// Writes the encoding of `input` at the start of `output` (which has room for
    /// ``encodedLength(_:)`` bytes); returns how many bytes it wrote.
    static func write(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) -> Int {
        alphabet.withUnsafeBufferPointer { alphabet in
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

    /// Decodes URL-safe Base 64, with or without `=` padding.
    ///
    /// Strict on purpose: the standard alphabet's `+` and `/`, whitespace, misplaced or partial
    /// padding, impossible lengths (a remainder of one character) and non-zero unused trailing
    /// bits are all rejected, so every byte string has exactly one accepted unpadded encoding.
    /// - Parameter text: The encoded text.
    /// - Returns: The bytes, or `nil` when the text is not valid URL-safe Base 64.
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { symbols in
            // Room for every symbol's six bits; padding only makes the bytes fewer. No room: no
            // symbol (the empty text) or one (never valid).
            let capacity = symbols.count * 3 / 4
            guard capacity > 0 else { return symbols.isEmpty ? [] : nil }
            var decoded: Int?
            let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                decoded = decode(symbols, into: UnsafeMutableRawBufferPointer(buffer))
                count = decoded ?? 0
            }
            return decoded == nil ? nil : bytes
        }
    }

    /// Decodes URL-safe Base 64 as ``decode(_:)`` does, into `output`: for a caller that keeps
    /// the bytes in storage of its own (a fixed-size handle), with no array made.
    /// - Parameters:
    ///   - text: The encoded text.
    ///   - output: Where the bytes go, from its start.
    /// - Returns: How many bytes were written, or `nil` when the text is not valid URL-safe
    ///   Base 64 or its bytes do not fit in `output`.
    package static func decode(_ text: String, into output: UnsafeMutableRawBufferPointer) -> Int? {
        var text = text
        return text.withUTF8 { decode($0, into: output) }
    }

    private static func decode(_ symbols: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableRawBufferPointer) -> Int? {
        var end = symbols.count
        var firstPad = 0
        while firstPad < symbols.count, symbols[firstPad] != UInt8(ascii: "=") { firstPad += 1 }
        if firstPad < symbols.count {
            // Padding is only meaningful when it completes the last quantum exactly.
            guard symbols.count % 4 == 0 else { return nil }
            let padCount = symbols.count - firstPad
            guard padCount <= 2 else { return nil }
            for index in firstPad..<symbols.count where symbols[index] != UInt8(ascii: "=") { return nil }
            end = firstPad
            guard end % 4 == 4 - padCount else { return nil }
        }
        guard end % 4 != 1, end * 3 / 4 <= output.count else { return nil }
        return sextets.withUnsafeBufferPointer { sextets -> Int? in
            var accumulator: UInt32 = 0
            var bitCount = 0
            var written = 0
            for index in 0..<end {
                let value = sextets[Int(symbols[index])]
                guard value != notASymbol else { return nil }
                accumulator = accumulator << 6 | UInt32(value)
                bitCount += 6
                if bitCount >= 8 {
                    bitCount -= 8
                    output[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount))
                    written += 1
                    accumulator &= (1 << UInt32(bitCount)) - 1
                }
            }
            // Leftover bits must be zero (RFC 4648 §3.5) or two texts would decode to the same bytes.
            guard accumulator == 0 else { return nil }
            return written
        }
    }

    /// Whether every UTF-8 byte of `text` is a symbol of the alphabet (no padding), by the table
    /// the decoder reads.
    package static func isAlphabet(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            sextets.withUnsafeBufferPointer { sextets in
                for index in 0..<utf8.count where sextets[Int(utf8[index])] == notASymbol { return false }
                return true
            }
        }
    }

    /// Each byte's 6-bit value (``sextet(_:)``), ``notASymbol`` for a byte outside the alphabet:
    /// by table, as a branch per symbol on the character ranges mispredicted on random tokens.
    private static let sextets: [UInt8] = (0...255).map { sextet(UInt8($0)) ?? notASymbol }
    private static let notASymbol: UInt8 = 0xFF

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
