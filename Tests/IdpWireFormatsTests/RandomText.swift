import IdpPrimitives

/// The random pages the parser tests feed both parsers, made with plain arithmetic.
extension SeededRandom {
    /// Up to `maximum` bytes of any value, read as UTF-8 (invalid sequences repaired).
    mutating func randomBytesText(upTo maximum: Int) -> String {
        let count = below(maximum + 1)
        return String(unsafeUninitializedCapacity: count) { bytes in
            for index in 0..<count { bytes[index] = UInt8(truncatingIfNeeded: next()) }
            return count
        }
    }

    /// Up to `maximum` of `fragments`, each picked at random, one after another.
    mutating func soup(of fragments: [String], upTo maximum: Int) -> String {
        var text = ""
        for _ in 0..<below(maximum + 1) { text += fragments[below(fragments.count)] }
        return text
    }
}
