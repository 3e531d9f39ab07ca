#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Cryptographically secure random bytes for verifiers, codes, tokens and trace ids.
///
/// Backed by the kernel's CSPRNG (`getrandom` on Linux, `arc4random_buf` on Apple platforms),
/// which holds no shared state, so any thread may call in.
public enum SecureRandom {
    /// Returns fresh random bytes.
    /// - Parameter count: How many bytes; zero or a negative count gives an empty array.
    /// - Returns: `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    #if canImport(Glibc)
    /// `/dev/urandom`, opened once: one `read` fills a whole token (the standard library's
    /// generator makes one `getrandom` call per eight bytes). -1 if it cannot be opened.
    private static let urandom = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
    #endif

    /// Fills `buffer` from the kernel's CSPRNG.
    private static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        #if canImport(Glibc)
        var filled = 0
        while filled < buffer.count, urandom >= 0 {
            let result = read(urandom, buffer.baseAddress! + filled, buffer.count - filled)
            guard result > 0 else { break }
            filled += result
        }
        // Not opened, or a read failed (interrupted by a signal, say): the standard library's
        // generator fills the rest.
        if filled < buffer.count {
            var generator = SystemRandomNumberGenerator()
            for index in filled..<buffer.count { buffer[index] = generator.next() }
        }
        #else
        arc4random_buf(buffer.baseAddress!, buffer.count)
        #endif
    }

    /// Returns a random token, URL-safe Base 64 without padding.
    /// - Parameter byteCount: How many random bytes the token carries; 32 (256 bits) by default,
    ///   which encodes to 43 characters.
    /// - Returns: The token text.
    public static func token(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(byteCount))
    }
}
