/// Comparisons whose running time does not depend on where two secrets differ.
///
/// An early-exit `==` on a verifier or token lets an attacker learn it byte by byte from response
/// times. Only the lengths leak, which for the fixed-size values compared here are public anyway.
package enum ConstantTime {
    /// Compares two byte collections, looking at every byte when the lengths match.
    /// - Parameters:
    ///   - a: The first value.
    ///   - b: The second value.
    /// - Returns: `true` when both hold the same bytes in the same order.
    @inlinable
    package static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        // Over contiguous bytes when both have them: no generic call per byte pair.
        let contiguous = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in buffersEqual(x, y) }
        }
        if let contiguous, let result = contiguous { return result }
        var difference: UInt8 = 0
        var x = a.startIndex, y = b.startIndex
        while x != a.endIndex {
            difference |= a[x] ^ b[y]
            a.formIndex(after: &x)
            b.formIndex(after: &y)
        }
        return difference == 0
    }

    /// Every byte of two buffers of equal length, without an early exit.
    @usableFromInline
    static func buffersEqual(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        var difference: UInt8 = 0
        for index in 0..<min(x.count, y.count) {
            difference |= x[index] ^ y[index]
        }
        return difference == 0 && x.count == y.count
    }

    /// Compares the UTF-8 encodings of two strings, looking at every byte when the lengths match.
    ///
    /// Unlike `String ==` this does not apply Unicode canonical equivalence: "é" precomposed and
    /// decomposed differ, which is what a byte-exact secret comparison wants.
    /// - Parameters:
    ///   - a: The first value.
    ///   - b: The second value.
    /// - Returns: `true` when both strings have identical UTF-8 bytes.
    @inlinable
    package static func equals(_ a: String, _ b: String) -> Bool {
        equals(a.utf8, b.utf8)
    }
}
