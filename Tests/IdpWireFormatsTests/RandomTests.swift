import Foundation
import IdpPrimitives
import IdpWireFormats
import Testing
import TestSupport

@Suite("SecureRandom and SeededRandom")
struct RandomTests {
    @Test("secure bytes have the requested count and differ between calls")
    func secureBytes() {
        #expect(SecureRandom.bytes(0) == [])
        #expect(SecureRandom.bytes(-5) == [])
        #expect(SecureRandom.bytes(1).count == 1)
        #expect(SecureRandom.bytes(33).count == 33)
        // Two 256-bit draws colliding would mean the generator is broken (chance 2^-256).
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
    }

    @Test("secure bytes are not obviously biased")
    func secureBytesSpread() {
        let bytes = SecureRandom.bytes(65536)
        var counts = [Int](repeating: 0, count: 256)
        for byte in bytes { counts[Int(byte)] += 1 }
        // Each value expects 256 hits (sd 16); 100...412 is ten standard deviations wide.
        #expect(counts.allSatisfy { (100...412).contains($0) })
    }

    @Test("a token is 43 URL-safe characters by default and carries its byte count")
    func token() {
        let token = SecureRandom.token()
        #expect(token.utf8.count == 43)
        #expect(Base64URL.decode(token)?.count == 32)
        #expect(SecureRandom.token(byteCount: 16).utf8.count == 22)
        #expect(SecureRandom.token(byteCount: 0) == "")
        #expect(SecureRandom.token() != SecureRandom.token())
    }

    @Test("a shaped token carries the bytes its shape set, and fresh randomness in the rest")
    func shapedToken() throws {
        let shape: (UnsafeMutableRawBufferPointer) -> Void = { bytes in
            bytes[0] = 0x00
            bytes[bytes.count - 1] = 0xFF
        }
        let first = try #require(Base64URL.decode(SecureRandom.token(byteCount: 24, shaping: shape)))
        let second = try #require(Base64URL.decode(SecureRandom.token(byteCount: 24, shaping: shape)))
        #expect(first.count == 24 && second.count == 24)
        #expect(first.first == 0x00 && first.last == 0xFF && second.first == 0x00 && second.last == 0xFF)
        #expect(first[1..<23] != second[1..<23])
        #expect(SecureRandom.token(byteCount: 0, shaping: shape) == "")
        // Past the size that stays on the stack, the same.
        let large = try #require(Base64URL.decode(SecureRandom.token(byteCount: 4_096, shaping: shape)))
        #expect(large.count == 4_096 && large.first == 0x00 && large.last == 0xFF)
    }

    @Test("digits are decimal, of the asked length, and every digit turns up about as often")
    func digits() {
        #expect(SecureRandom.digits(0) == "")
        #expect(SecureRandom.digits(-1) == "")
        let code = SecureRandom.digits(12)
        #expect(code.utf8.count == 12 && code.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        var counts = [Int](repeating: 0, count: 10)
        for byte in SecureRandom.digits(100_000).utf8 { counts[Int(byte - UInt8(ascii: "0"))] += 1 }
        // Each digit expects 10,000 hits (sd 95); 9,000...11,000 is about ten standard deviations wide.
        #expect(counts.allSatisfy { (9_000...11_000).contains($0) }, "\(counts)")
    }

    @Test("the generator draws fresh 64-bit values and uniform choices")
    func generator() {
        var generator = SecureRandom.Generator()
        let draws = (0..<1_000).map { _ in generator.next() }
        #expect(Set(draws).count == 1_000)
        var hits = [Int](repeating: 0, count: 3)
        for _ in 0..<30_000 { hits[Int.random(in: 0..<3, using: &generator)] += 1 }
        #expect(hits.allSatisfy { (9_000...11_000).contains($0) }, "\(hits)")
    }

    @Test("secure random is safe to call from many tasks at once")
    func concurrent() async {
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 { group.addTask { SecureRandom.bytes(1000).count } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts == [Int](repeating: 1000, count: 16))
    }

    @Test("seed 0 yields the reference xoshiro256** outputs")
    func seedZero() {
        var generator = SeededRandom(seed: 0)
        let outputs = (0..<5).map { _ in generator.next() }
        // Computed with a Python transcription of splitmix64 + xoshiro256** (Blackman & Vigna).
        #expect(outputs == [0x99ec_5f36_cb75_f2b4, 0xbf6e_1f78_4956_452a, 0x1a5f_849d_4933_e6e0, 0x6aa5_94f1_262d_2d2c, 0xbba5_ad4a_1f84_2e59])
    }

    @Test("seeds 42 and UInt64.max yield their reference outputs")
    func otherSeeds() {
        var fortyTwo = SeededRandom(seed: 42)
        #expect((0..<5).map { _ in fortyTwo.next() } == [0x1578_0b2e_0c2e_c716, 0x6104_d986_6d11_3a7e, 0xae17_5332_39e4_99a1, 0xecb8_ad47_03b3_60a1, 0xfde6_dc7f_e2ec_5e64])
        var maximum = SeededRandom(seed: .max)
        #expect((0..<3).map { _ in maximum.next() } == [0x8f55_20d5_2a7e_ad08, 0xc476_a018_caa1_802d, 0x81de_31c0_d260_469e])
    }

    @Test("a generator made from a full state yields xoshiro256**'s reference outputs, and the all-zero state is seed 0's")
    func fullState() {
        var counting = SeededRandom(state: 1, 2, 3, 4)
        // The published first outputs of xoshiro256** from the state {1, 2, 3, 4}.
        #expect((0..<4).map { _ in counting.next() } == [11_520, 0, 1_509_978_240, 1_215_971_899_390_074_240])
        var zero = SeededRandom(state: 0, 0, 0, 0), seedZero = SeededRandom(seed: 0)
        #expect((0..<5).map { _ in zero.next() } == (0..<5).map { _ in seedZero.next() })
    }

    @Test("copies of a generator continue identically")
    func deterministicCopies() {
        var first = SeededRandom(seed: 7)
        _ = first.next()
        var second = first
        #expect((0..<10).map { _ in first.next() } == (0..<10).map { _ in second.next() })
    }
}

@Suite("SecureRandom's per-thread pools")
struct SecureRandomPoolTests {
    @Test("small draws on 8 OS threads at once never repeat, across threads and pool refills, and are not obviously biased")
    func poolsNeverShareBytes() async {
        // Given 8 OS threads each drawing 2,048 16-byte values (8 pool refills per thread),
        // then no value repeats (two equal 128-bit draws would mean shared or reused pool bytes)
        await expectDistinctAndEven { SecureRandom.bytes(16) }
    }
}

/// Has 8 OS threads at once each make 2,048 16-byte values with `draw`, then expects all 16,384
/// distinct, and each byte value about 1,024 times (sd 32; 700...1,350 is ten sd wide).
private func expectDistinctAndEven(_ draw: @escaping @Sendable () -> [UInt8]) async {
    let draws = LockedValue<[[UInt8]]>([])
    await onOSThreads(8) { _ in
        var mine: [[UInt8]] = []
        for _ in 0..<2_048 { mine.append(draw()) }
        draws.withLock { $0 += mine }
    }
    let all = draws.withLock { $0 }
    #expect(all.count == 16_384)
    #expect(Set(all).count == all.count)
    var counts = [Int](repeating: 0, count: 256)
    for value in all { for byte in value { counts[Int(byte)] += 1 } }
    #expect(counts.allSatisfy { (700...1_350).contains($0) })
}

@Suite("SecureRandom.fillUnique")
struct SecureRandomUniqueTests {
    @Test("ids drawn on 8 OS threads at once never repeat, across threads, and are not obviously biased")
    func idsNeverRepeat() async {
        // Given 8 OS threads each drawing 2,048 16-byte ids, as trace ids are drawn, then no id
        // repeats (two threads on one stream, or a stream restarted, would repeat them)
        await expectDistinctAndEven {
            [UInt8](unsafeUninitializedCapacity: 16) { buffer, count in
                SecureRandom.fillUnique(UnsafeMutableRawBufferPointer(buffer))
                count = 16
            }
        }
    }

    @Test("a draw of any length up to 24 bytes fills every byte, the last word's too")
    func everyLengthFilled() {
        for length in 1...24 {
            // Given many draws of this length over a buffer that starts all zero
            var seenNonZero = [Bool](repeating: false, count: length)
            for _ in 0..<64 {
                var bytes = [UInt8](repeating: 0, count: length)
                bytes.withUnsafeMutableBytes { SecureRandom.fillUnique($0) }
                for index in 0..<length where bytes[index] != 0 { seenNonZero[index] = true }
            }
            // Then every place was written at least once (a byte left 0 in 64 draws: chance 2^-512)
            #expect(!seenNonZero.contains(false), "length \(length): \(seenNonZero)")
        }
        var none: [UInt8] = []
        none.withUnsafeMutableBytes { SecureRandom.fillUnique($0) }
        #expect(none.isEmpty)
    }
}
