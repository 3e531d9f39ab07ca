/// A fast, deterministic random number generator (xoshiro256**) for tests and benchmarks.
///
/// Never use it for secrets: the whole sequence follows from the seed. Use `SecureRandom` (module IdpWireFormats).
/// The 256-bit state is expanded from the 64-bit seed with SplitMix64, as the xoshiro authors
/// recommend, so nearby seeds still give unrelated streams and the state is never all zeros.
package struct SeededRandom: RandomNumberGenerator, Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// Creates a generator whose output is fully determined by `seed`.
    /// - Parameter seed: Any value, zero included.
    package init(seed: UInt64) {
        var splitMix = seed
        func nextSplitMix() -> UInt64 {
            splitMix &+= 0x9e37_79b9_7f4a_7c15
            var z = splitMix
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        s0 = nextSplitMix()
        s1 = nextSplitMix()
        s2 = nextSplitMix()
        s3 = nextSplitMix()
    }

    /// Creates a generator whose 256-bit state is the four given words: for a stream that must
    /// not repeat another's (seeded from a secure source), which a 64-bit seed cannot promise
    /// across many generators. An all-zero state, the one xoshiro never leaves, is replaced by
    /// `init(seed: 0)`'s.
    package init(state s0: UInt64, _ s1: UInt64, _ s2: UInt64, _ s3: UInt64) {
        self.init(seed: 0)
        if s0 | s1 | s2 | s3 != 0 {
            self.s0 = s0
            self.s1 = s1
            self.s2 = s2
            self.s3 = s3
        }
    }

    /// Returns the next 64 random bits and advances the state.
    /// - Returns: A uniformly distributed `UInt64`.
    package mutating func next() -> UInt64 {
        let result = rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        return result
    }

    /// A number in `0..<bound`, by Lemire's multiply-and-shift (a bias below 2⁻³² for any bound
    /// a test uses).
    /// - Parameter bound: Above 0.
    /// - Returns: A number below `bound`.
    package mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "SeededRandom.below(\(bound)): the bound must be above 0")
        return Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// A `Double` in `0..<1`, from the top 53 bits of the next number.
    package mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    @inline(__always)
    private func rotl(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}
