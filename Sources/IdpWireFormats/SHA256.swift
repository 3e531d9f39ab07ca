import IdpPrimitives
/// An incremental SHA-256 hash (FIPS 180-4 §6.2).
///
/// The package has no dependencies, so PKCE challenges, token fingerprints and the benchmarks
/// need their own digest. The value type copies cheaply, so a partially fed hash can be forked.
///
/// ```swift
/// var hash = SHA256()
/// hash.update("ab")
/// hash.update("c")
/// Hex.encode(hash.finalize()) // "ba7816bf…"
/// ```
package struct SHA256: Sendable {
    /// The eight working words H0…H7; a struct rather than an array so the round loop stays in
    /// registers and never touches the heap.
    private struct State: Sendable {
        var h0: UInt32 = 0x6a09_e667
        var h1: UInt32 = 0xbb67_ae85
        var h2: UInt32 = 0x3c6e_f372
        var h3: UInt32 = 0xa54f_f53a
        var h4: UInt32 = 0x510e_527f
        var h5: UInt32 = 0x9b05_688c
        var h6: UInt32 = 0x1f83_d9ab
        var h7: UInt32 = 0x5be0_cd19
    }

    private static let blockSize = 64

    private var state = State()
    /// Holds the tail of the input that does not yet fill a block: 64 bytes inline (eight words),
    /// stored by index, so a hash allocates nothing but its digest.
    private var buffer: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var bufferCount = 0
    /// Total message length in bytes; the padding needs it in bits, modulo 2^64.
    private var totalLength: UInt64 = 0

    /// Creates a hash with the FIPS 180-4 initial value and no input.
    package init() {}

    /// Feeds more message bytes.
    ///
    /// Arrays, `Data`-like contiguous collections and buffer slices take a fast path that hashes
    /// whole blocks straight from their storage.
    /// - Parameter bytes: The next bytes of the message.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { storage in
            update(raw: UnsafeRawBufferPointer(storage))
        }
        if handled != nil { return }
        // Non-contiguous sequences (lazy maps, linked structures) are staged through the block
        // buffer one byte at a time.
        for byte in bytes {
            let index = bufferCount
            withUnsafeMutableBytes(of: &buffer) { $0[index] = byte }
            bufferCount += 1
            totalLength &+= 1
            if bufferCount == Self.blockSize {
                withUnsafeBytes(of: buffer) { Self.compress(&state, blocks: $0) }
                bufferCount = 0
            }
        }
    }

    /// Feeds the UTF-8 encoding of a string.
    /// - Parameter string: The next characters of the message.
    package mutating func update(_ string: String) {
        var text = string
        // withUTF8 makes the string native and contiguous if it was bridged, so this is always
        // the fast path.
        text.withUTF8 { update(raw: UnsafeRawBufferPointer($0)) }
    }

    /// Returns the digest of everything fed so far, leaving this hash untouched so it can be fed
    /// more input afterwards.
    /// - Returns: The 32-byte digest.
    package func finalize() -> [UInt8] {
        finalize { [UInt8]($0) }
    }

    /// Hands the digest of everything fed so far to `body`, from the stack: for a caller that
    /// only reads it (encodes or compares it), with no array made. Leaves this hash untouched.
    /// - Parameter body: Reads the 32-byte digest; the bytes are valid only during the call.
    /// - Returns: What `body` returns.
    package func finalize<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        LockProfiler.noteHeavyWork(.hash)
        var copy = self
        let bitLength = totalLength &* 8
        // Padding: one 1-bit, zeros up to 56 mod 64, then the 64-bit big-endian bit length.
        let zeroCount = (bufferCount < 56 ? 55 - bufferCount : 119 - bufferCount)
        withUnsafeTemporaryAllocation(byteCount: 1 + zeroCount + 8, alignment: 1) { padding in
            padding.initializeMemory(as: UInt8.self, repeating: 0)
            padding[0] = 0x80
            for index in 0..<8 {
                padding[1 + zeroCount + index] = UInt8(truncatingIfNeeded: bitLength >> (56 - 8 * UInt64(index)))
            }
            copy.update(raw: UnsafeRawBufferPointer(padding))
        }
        let state = copy.state
        // A homogeneous tuple is laid out in order: the eight words, each stored big-endian.
        let digest = (state.h0.bigEndian, state.h1.bigEndian, state.h2.bigEndian, state.h3.bigEndian,
                      state.h4.bigEndian, state.h5.bigEndian, state.h6.bigEndian, state.h7.bigEndian)
        return withUnsafeBytes(of: digest) { body($0) }
    }

    /// Hashes a complete message in one call.
    /// - Parameter bytes: The message.
    /// - Returns: The 32-byte digest.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finalize()
    }

    /// Hashes the UTF-8 encoding of a string in one call.
    /// - Parameter string: The message.
    /// - Returns: The 32-byte digest.
    package static func hash(_ string: String) -> [UInt8] {
        var hash = SHA256()
        hash.update(string)
        return hash.finalize()
    }

    private mutating func update(raw input: UnsafeRawBufferPointer) {
        guard !input.isEmpty else { return }
        totalLength &+= UInt64(input.count)
        var offset = 0
        if bufferCount > 0 {
            let take = min(Self.blockSize - bufferCount, input.count)
            let start = bufferCount
            withUnsafeMutableBytes(of: &buffer) { target in
                UnsafeMutableRawBufferPointer(rebasing: target[start..<(start + take)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: input[0..<take]))
            }
            bufferCount += take
            offset = take
            guard bufferCount == Self.blockSize else { return }
            withUnsafeBytes(of: buffer) { Self.compress(&state, blocks: $0) }
            bufferCount = 0
        }
        let wholeBlocks = (input.count - offset) / Self.blockSize * Self.blockSize
        if wholeBlocks > 0 {
            Self.compress(&state, blocks: UnsafeRawBufferPointer(rebasing: input[offset..<(offset + wholeBlocks)]))
            offset += wholeBlocks
        }
        let rest = input.count - offset
        if rest > 0 {
            withUnsafeMutableBytes(of: &buffer) { target in
                UnsafeMutableRawBufferPointer(rebasing: target[0..<rest])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: input[offset...]))
            }
            bufferCount = rest
        }
    }

    /// Runs the compression function over every whole 64-byte block in `blocks`.
    private static func compress(_ state: inout State, blocks: UnsafeRawBufferPointer) {
        let blockCount = blocks.count / blockSize
        guard blockCount > 0 else { return }
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            roundConstants.withUnsafeBufferPointer { k in
                for block in 0..<blockCount {
                    let base = block * blockSize
                    for t in 0..<16 {
                        schedule[t] = UInt32(bigEndian: blocks.loadUnaligned(fromByteOffset: base + 4 * t, as: UInt32.self))
                    }
                    for t in 16..<64 {
                        let w15 = schedule[t - 15]
                        let w2 = schedule[t - 2]
                        let s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >> 3)
                        let s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >> 10)
                        schedule[t] = schedule[t - 16] &+ s0 &+ schedule[t - 7] &+ s1
                    }
                    var a = state.h0, b = state.h1, c = state.h2, d = state.h3
                    var e = state.h4, f = state.h5, g = state.h6, h = state.h7
                    for t in 0..<64 {
                        let sigma1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                        let choose = (e & f) ^ (~e & g)
                        let t1 = h &+ sigma1 &+ choose &+ k[t] &+ schedule[t]
                        let sigma0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = sigma0 &+ majority
                        h = g
                        g = f
                        f = e
                        e = d &+ t1
                        d = c
                        c = b
                        b = a
                        a = t1 &+ t2
                    }
                    state.h0 &+= a
                    state.h1 &+= b
                    state.h2 &+= c
                    state.h3 &+= d
                    state.h4 &+= e
                    state.h5 &+= f
                    state.h6 &+= g
                    state.h7 &+= h
                }
            }
        }
    }

    @inline(__always)
    private static func rotr(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value >> count) | (value << (32 - count))
    }

    /// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the
    /// first 64 primes.
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}
