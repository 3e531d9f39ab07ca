/// Comparisons whose running time does not depend on where two secrets differ.
///
/// An early-exit `==` on a verifier or token lets an attacker learn it byte by byte from response
/// times. Only the lengths leak, which for the fixed-size values compared here are public anyway.
public enum ConstantTime {
    /// Compares two byte collections, looking at every byte when the lengths match.
    /// - Parameters:
    ///   - a: The first value.
    ///   - b: The second value.
    /// - Returns: `true` when both hold the same bytes in the same order.
    public static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) {
            difference |= x ^ y
        }
        return difference == 0
    }

    /// Compares the UTF-8 encodings of two strings, looking at every byte when the lengths match.
    ///
    /// Unlike `String ==` this does not apply Unicode canonical equivalence: "é" precomposed and
    /// decomposed differ, which is what a byte-exact secret comparison wants.
    /// - Parameters:
    ///   - a: The first value.
    ///   - b: The second value.
    /// - Returns: `true` when both strings have identical UTF-8 bytes.
    public static func equals(_ a: String, _ b: String) -> Bool {
        equals(a.utf8, b.utf8)
    }
}
