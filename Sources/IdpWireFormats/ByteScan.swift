/// Searches of text's bytes for a few ASCII bytes, eight bytes at a time: the form decoder cuts
/// long values (verifiers, codes, tokens, URIs) at a handful of delimiters, and a loop that tests
/// byte by byte takes a branch per byte of them.
package enum ByteScan {
    /// The index of the first byte of `bytes[start..<end]` that is `first` or `second`, or `end`
    /// when there is none.
    ///
    /// Per word: a byte equal to a wanted one is a zero byte of the word's XOR with that byte
    /// repeated, and the lowest zero byte of a word `x` sets the lowest set bit of
    /// `(x - 0x01…01) & ~x & 0x80…80`. A borrow out of a byte starts only at a zero byte, so a
    /// higher bit may be set falsely, never a lower one: the lowest set bit is the answer.
    package static func firstIndex(of first: UInt8, or second: UInt8? = nil, in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int {
        let second = second ?? first
        var index = start
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs = ones &* 0x80
            let firsts = ones &* UInt64(first), seconds = ones &* UInt64(second)
            while index + 8 <= end {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let x = word ^ firsts, y = word ^ seconds
                let found = ((x &- ones) & ~x | (y &- ones) & ~y) & highs
                if found != 0 { return index + found.trailingZeroBitCount / 8 }
                index += 8
            }
        }
        while index < end, bytes[index] != first, bytes[index] != second { index += 1 }
        return index
    }

    /// The index of the first byte of `bytes[start..<end]` that is not ASCII (0x80 or above), or
    /// `end`: a word's high bits are its bytes' own.
    package static func firstNonASCII(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int {
        var index = start
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            while index + 8 <= end {
                let high = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)) & 0x8080_8080_8080_8080
                if high != 0 { return index + high.trailingZeroBitCount / 8 }
                index += 8
            }
        }
        while index < end, bytes[index] < 0x80 { index += 1 }
        return index
    }

    /// Whether every byte of `bytes` is visible ASCII, `!` (0x21) to `~` (0x7E): no space, no
    /// control character, nothing above ASCII. Per word: a byte below 0x21 sets its high bit in
    /// `(x - 0x21…21) & ~x`, a byte of 0x7F or above in `(x + 0x01…01) | x`; a borrow or carry
    /// out of a byte starts only at such a byte, so a word has one exactly when a high bit is set.
    package static func isVisibleASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs = ones &* 0x80, spaces = ones &* 0x21
            while index + 8 <= bytes.count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                if ((word &- spaces) & ~word | (word &+ ones) | word) & highs != 0 { return false }
                index += 8
            }
        }
        while index < bytes.count {
            guard bytes[index] > 0x20 && bytes[index] < 0x7F else { return false }
            index += 1
        }
        return true
    }

    /// Whether every byte of `bytes` is ASCII.
    package static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        firstNonASCII(in: bytes, from: 0, to: bytes.count) == bytes.count
    }
}
