/// Cryptographically secure random bytes for verifiers, codes, tokens and trace ids.
///
/// Backed by `SystemRandomNumberGenerator` (the kernel's CSPRNG: `getrandom` on Linux,
/// `arc4random_buf` on Apple platforms), which holds no shared state, so any thread may call in.
public enum SecureRandom {
    /// Returns fresh random bytes.
    /// - Parameter count: How many bytes; zero or a negative count gives an empty array.
    /// - Returns: `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var generator = SystemRandomNumberGenerator()
        var output = [UInt8](repeating: 0, count: count)
        // Eight bytes per generator call instead of one keeps the syscall count low.
        var index = 0
        while index < count {
            var word = generator.next()
            for _ in 0..<min(8, count - index) {
                output[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return output
    }

    /// Returns a random token, URL-safe Base 64 without padding.
    /// - Parameter byteCount: How many random bytes the token carries; 32 (256 bits) by default,
    ///   which encodes to 43 characters.
    /// - Returns: The token text.
    public static func token(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(byteCount))
    }
}
