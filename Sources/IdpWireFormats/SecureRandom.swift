import IdpPrimitives
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Cryptographically secure random bytes for verifiers, codes, tokens and salts; and, through
/// ``fillUnique(_:)``, bytes that must not repeat but need not be secret, for trace ids.
///
/// Backed by the kernel's CSPRNG (`getrandom`/`/dev/urandom` on Linux, `arc4random_buf` on Apple
/// platforms). Any thread may call in at once.
///
/// On Linux each thread keeps a small pool of kernel randomness (4 KiB, refilled by one `read`),
/// so a 32-byte token costs a copy instead of a system call; no byte is handed out twice, and a
/// forked child discards the pool it inherited (a `pthread_atfork` handler), so parent and child
/// never share bytes.
package enum SecureRandom {
    /// Returns fresh random bytes.
    /// - Parameter count: How many bytes; zero or a negative count gives an empty array.
    /// - Returns: `count` random bytes.
    package static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Returns a random token, URL-safe Base 64 without padding.
    /// - Parameter byteCount: How many random bytes the token carries; 32 (256 bits) by default,
    ///   which encodes to 43 characters.
    /// - Returns: The token text.
    package static func token(byteCount: Int = 32) -> String {
        token(byteCount: byteCount) { _ in }
    }

    /// ``token(byteCount:)`` with the drawn bytes handed to `shape` before they are encoded: for a
    /// token that carries a few chosen bits (a shard number, say) beside its randomness.
    package static func token(byteCount: Int = 32, shaping shape: (UnsafeMutableRawBufferPointer) -> Void) -> String {
        guard byteCount > 0 else { return "" }
        // The bytes stay on the stack (the allocation falls back to the heap only for large counts).
        return withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 1) { buffer in
            fill(buffer)
            shape(buffer)
            return Base64URL.encode(raw: UnsafeRawBufferPointer(buffer))
        }
    }

    /// The length of a token of `byteCount` random bytes, as ``token(byteCount:)`` encodes it.
    package static func tokenLength(byteCount: Int) -> Int { Base64URL.encodedLength(max(0, byteCount)) }

    /// Writes a new token of `byteCount` random bytes, as ``token(byteCount:)`` makes it, into
    /// `buffer` from `offset`, which must leave room for ``tokenLength(byteCount:)`` bytes: for a
    /// caller that writes the token into a text of its own, with no string made for it.
    /// - Returns: The offset after the token.
    package static func writeToken(byteCount: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        guard byteCount > 0 else { return offset }
        return withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 1) { drawn in
            fill(drawn)
            return offset + Base64URL.write(UnsafeRawBufferPointer(drawn), into: UnsafeMutableBufferPointer(rebasing: buffer[offset...]))
        }
    }

    /// A `RandomNumberGenerator` over the same pooled kernel randomness: for uniform choices
    /// (`Int.random(in:using:)`) without a system call per number, which
    /// `SystemRandomNumberGenerator` makes on Linux.
    ///
    /// ```swift
    /// var generator = SecureRandom.Generator()
    /// let digit = Int.random(in: 0...9, using: &generator)
    /// ```
    package struct Generator: RandomNumberGenerator {
        /// A generator that draws from the system's secure random source.
        package init() {}

        /// 64 bits from the system's secure random source.
        ///
        /// - Returns: A uniformly random value.
        package mutating func next() -> UInt64 {
            var value: UInt64 = 0
            withUnsafeMutableBytes(of: &value) { SecureRandom.fill($0) }
            return value
        }
    }

    /// `count` uniformly random decimal digits, as text (one-time codes).
    package static func digits(_ count: Int) -> String {
        guard count > 0 else { return "" }
        var generator = Generator()
        return String(unsafeUninitializedCapacity: count) { buffer in
            for index in 0..<count { buffer[index] = UInt8(ascii: "0") + UInt8(Int.random(in: 0...9, using: &generator)) }
            return count
        }
    }

    /// Fills `buffer` from the kernel's CSPRNG.
    package static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count > 0 else { return }
        LockProfiler.noteHeavyWork(.random)
        #if canImport(Glibc)
        if buffer.count > Pool.capacity / 4 {
            // Large requests straight from the kernel: a pool would only copy them twice.
            readKernel(into: buffer)
        } else {
            Pool.current.take(into: buffer)
        }
        #else
        arc4random_buf(buffer.baseAddress!, buffer.count)
        #endif
    }

    /// Fills `buffer` with bytes for identifiers that must not repeat but need not be secret
    /// (W3C trace and parent ids): from the calling thread's xoshiro256** generator
    /// (`SeededRandom`), seeded with 256 bits of its pool's kernel randomness at the thread's first
    /// draw and again in a forked child. Streams seeded so never meet in practice, and a draw costs
    /// a few instructions instead of the kernel's bytes. Never for a token, code, verifier or salt:
    /// whoever sees a few outputs of a thread can tell its next ones.
    package static func fillUnique(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count > 0 else { return }
        #if canImport(Glibc)
        Pool.current.takeUnique(into: buffer)
        #else
        arc4random_buf(buffer.baseAddress!, buffer.count)
        #endif
    }

    #if canImport(Glibc)
    /// `/dev/urandom`, opened once; -1 if it cannot be opened.
    private static let urandom = open("/dev/urandom", O_RDONLY | O_CLOEXEC)

    /// Fills `buffer` with one `read` of `/dev/urandom` (more if interrupted); whatever a failed
    /// read leaves comes from the standard library's generator (also the kernel's).
    private static func readKernel(into buffer: UnsafeMutableRawBufferPointer) {
        var filled = 0
        while filled < buffer.count, urandom >= 0 {
            let result = read(urandom, buffer.baseAddress! + filled, buffer.count - filled)
            guard result > 0 else { break }
            filled += result
        }
        if filled < buffer.count {
            var generator = SystemRandomNumberGenerator()
            for index in filled..<buffer.count { buffer[index] = generator.next() }
        }
    }

    /// Bumped in a forked child, so every pool it inherited is refilled before use.
    private static let forkGeneration = Atomic<UInt64>(0)
    private static let forkHandlerInstalled: Bool = {
        let status = pthread_atfork(nil, nil) { SecureRandom.forkGeneration.add(1, ordering: .relaxed) }
        precondition(status == 0, "pthread_atfork failed: \(status)")
        return true
    }()

    /// One thread's buffered kernel randomness. Only the thread that created it touches it (it
    /// is reached through thread-specific storage), so it needs no lock and is not `Sendable`.
    private final class Pool {
        static let capacity = 4_096
        private let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        /// Bytes from here on are unused; `capacity` means empty.
        private var next = capacity
        private var generation: UInt64
        /// The thread's generator for ``SecureRandom/fillUnique(_:)``; `nil` until its first draw.
        private var identifiers: SeededRandom?
        /// The fork generation `identifiers` was seeded in.
        private var identifiersGeneration: UInt64 = 0

        init() {
            _ = SecureRandom.forkHandlerInstalled
            generation = SecureRandom.forkGeneration.load(ordering: .relaxed)
        }

        deinit { storage.deallocate() }

        /// Copies the next unused bytes into `buffer` (at most a quarter of the pool) and wipes
        /// them from the pool, refilling it first when it runs short or after a fork.
        func take(into buffer: UnsafeMutableRawBufferPointer) {
            let current = SecureRandom.forkGeneration.load(ordering: .relaxed)
            if current != generation || Self.capacity - next < buffer.count {
                generation = current
                SecureRandom.readKernel(into: storage)
                next = 0
            }
            let source = UnsafeMutableRawBufferPointer(rebasing: storage[next..<(next + buffer.count)])
            buffer.copyMemory(from: UnsafeRawBufferPointer(source))
            source.initializeMemory(as: UInt8.self, repeating: 0)
            next += buffer.count
        }

        /// Fills `buffer` from the identifier generator, seeding it from the pool first at the
        /// thread's first draw and after a fork.
        func takeUnique(into buffer: UnsafeMutableRawBufferPointer) {
            let current = SecureRandom.forkGeneration.load(ordering: .relaxed)
            if identifiers == nil || current != identifiersGeneration {
                var seed: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
                withUnsafeMutableBytes(of: &seed) { take(into: $0) }
                identifiers = SeededRandom(state: seed.0, seed.1, seed.2, seed.3)
                identifiersGeneration = current
            }
            var generator = identifiers.unsafelyUnwrapped
            var offset = 0
            while offset < buffer.count {
                var word = generator.next()
                let count = min(8, buffer.count - offset)
                withUnsafeBytes(of: &word) { buffer.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: count) }
                offset += count
            }
            identifiers = generator
        }

        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            let status = pthread_key_create(&key) { pointer in
                if let pointer { Unmanaged<Pool>.fromOpaque(pointer).release() }
            }
            precondition(status == 0, "pthread_key_create failed: \(status)")
            return key
        }()

        /// The calling thread's pool, created on first use and released when the thread exits.
        static var current: Pool {
            if let pointer = pthread_getspecific(key) { return Unmanaged<Pool>.fromOpaque(pointer).takeUnretainedValue() }
            let pool = Pool()
            pthread_setspecific(key, Unmanaged.passRetained(pool).toOpaque())
            return pool
        }
    }
    #endif
}
