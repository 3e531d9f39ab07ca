import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("TraceParent")
struct TraceParentTests {
    static let example = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    /// Asserts that parsing `text` fails for exactly `reason`.
    func expectReason(_ text: String, _ reason: TraceParentError.Reason, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: TraceParentError(reason, input: text), sourceLocation: sourceLocation) {
            try TraceParent(parsing: text)
        }
    }

    @Test("parses the W3C specification's example")
    func example() throws {
        let parent = try TraceParent(parsing: Self.example)
        #expect(parent.version == 0)
        #expect(parent.traceId == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(parent.parentId == "00f067aa0ba902b7")
        #expect(parent.flags == 1)
        #expect(parent.isSampled)
        #expect(parent.description == Self.example)
    }

    @Test("an unsampled value keeps flag 00, and unknown flag bits are kept")
    func flags() throws {
        let unsampled = try TraceParent(parsing: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        #expect(unsampled.flags == 0)
        #expect(!unsampled.isSampled)
        let extra = try TraceParent(parsing: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-fe")
        #expect(extra.flags == 0xfe)
        #expect(!extra.isSampled)
        #expect(extra.description == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-fe")
    }

    @Test("the empty value is rejected as empty")
    func empty() {
        expectReason("", .empty)
    }

    @Test("version 00 must be exactly 55 characters")
    func lengthOfVersionZero() {
        expectReason(Self.example + "-", .wrongLength(56))
        expectReason(String(Self.example.dropLast()), .wrongLength(54))
        expectReason("0", .wrongLength(1))
        expectReason("00", .wrongLength(2))
    }

    @Test("the version must be two lower-case hex digits other than ff")
    func version() {
        expectReason("0g" + Self.example.dropFirst(2), .invalidVersion)
        expectReason("0A" + Self.example.dropFirst(2), .invalidVersion)
        expectReason("ff" + Self.example.dropFirst(2), .forbiddenVersion)
    }

    @Test("a higher version may carry more fields only after a dash")
    func higherVersion() throws {
        let plain = try TraceParent(parsing: "cc" + Self.example.dropFirst(2))
        #expect(plain.version == 0xcc)
        #expect(plain.traceId == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(plain.description == Self.example)
        let extended = try TraceParent(parsing: "01" + Self.example.dropFirst(2) + "-what-the-future-holds")
        #expect(extended.version == 1)
        #expect(extended.flags == 1)
        expectReason("01" + Self.example.dropFirst(2) + "x", .missingDash(position: 55))
        expectReason("01" + Self.example.dropFirst(2).dropLast(), .wrongLength(54))
    }

    @Test("dashes must sit at positions 2, 35 and 52")
    func dashes() {
        expectReason("00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", .missingDash(position: 2))
        expectReason("00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", .missingDash(position: 35))
        expectReason("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01", .missingDash(position: 52))
        expectReason("00-4bf92f3577b34da6a3ce929d0e0e47360-0f067aa0ba902b7-01", .missingDash(position: 35))
    }

    @Test("fields must be lower-case hex, reporting the first bad position")
    func characters() {
        expectReason("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", .invalidCharacter(position: 4))
        expectReason("00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", .invalidCharacter(position: 34))
        expectReason("00-4bf92f3577b34da6a3ce929d0e0e4736-00F067aa0ba902b7-01", .invalidCharacter(position: 38))
        expectReason("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x", .invalidCharacter(position: 54))
        expectReason("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-é", .invalidCharacter(position: 53))
    }

    @Test("all-zero ids are invalid")
    func zeroIds() {
        expectReason("00-00000000000000000000000000000000-00f067aa0ba902b7-01", .zeroTraceId)
        expectReason("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", .zeroParentId)
    }

    @Test("builds a value from ids and rejects bad ids with header positions")
    func fromIds() throws {
        let parent = try TraceParent(traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentId: "00f067aa0ba902b7")
        #expect(parent.description == Self.example)
        let unsampled = try TraceParent(traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentId: "00f067aa0ba902b7", sampled: false)
        #expect(unsampled.description == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        #expect(throws: TraceParentError(.zeroParentId, input: "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01")) {
            try TraceParent(traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentId: "0000000000000000")
        }
        #expect(throws: TraceParentError(.wrongLength(54), input: "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01")) {
            try TraceParent(traceId: "4bf92f3577b34da6a3ce929d0e0e473", parentId: "00f067aa0ba902b7")
        }
    }

    @Test("random values are valid, sampled as asked and distinct")
    func random() throws {
        let first = TraceParent.random()
        #expect(first.isSampled)
        #expect(first.traceId.utf8.count == 32)
        #expect(first.parentId.utf8.count == 16)
        #expect(try TraceParent(parsing: first.description) == first)
        #expect(!TraceParent.random(sampled: false).isSampled)
        #expect(TraceParent.random().traceId != first.traceId)
    }

    @Test("every flags byte is written back as the two lower-case digits it was parsed from")
    func everyFlagsByteRoundTrips() throws {
        let digits = Array("0123456789abcdef")
        for flags in 0...255 {
            let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-\(digits[flags >> 4])\(digits[flags & 15])"
            let parent = try TraceParent(parsing: text)
            #expect(parent.flags == UInt8(flags))
            #expect(parent.description == text)
        }
    }

    @Test("random values and random headers, written straight into their text, parse back, are canonical, use every hex digit and never repeat an id")
    func randomValuesRoundTrip() throws {
        var seen = Set<Character>()
        var traceIds = Set<String>(), parentIds = Set<String>()
        for index in 0..<500 {
            let parent = TraceParent.random(sampled: index % 2 == 0)
            let text = parent.description
            #expect(text.utf8.count == 55)
            #expect(try TraceParent(parsing: text) == parent)
            #expect(parent.isSampled == (index % 2 == 0))
            let header = TraceParent.randomHeader(sampled: index % 2 == 0)
            let parsed = try TraceParent(parsing: header)
            #expect(parsed.version == 0 && parsed.isSampled == (index % 2 == 0))
            #expect(parsed.description == header && TraceParent.canonical(header) == header)
            for value in [parent, parsed] {
                seen.formUnion(value.traceId + value.parentId)
                traceIds.insert(value.traceId)
                parentIds.insert(value.parentId)
            }
        }
        #expect(seen == Set("0123456789abcdef"))
        #expect(traceIds.count == 1_000)
        // 1,000 64-bit parent ids repeat by chance once in about 10^13 runs
        #expect(parentIds.count == 1_000)
    }

    @Test("the error names the value and the problem, cutting long input to 64 characters")
    func errorDescription() {
        let error = TraceParentError(.zeroTraceId, input: "00-00000000000000000000000000000000-00f067aa0ba902b7-01")
        #expect(error.description == "invalid traceparent '00-00000000000000000000000000000000-00f067aa0ba902b7-01': trace-id is all zeros")
        let long = String(repeating: "a", count: 100)
        let truncated = TraceParentError(.wrongLength(100), input: long)
        #expect(truncated.input == String(repeating: "a", count: 64))
        #expect(truncated.description == "invalid traceparent '\(String(repeating: "a", count: 64))': length is 100, expected 55")
        #expect(TraceParentError(.missingDash(position: 2), input: "x").description == "invalid traceparent 'x': expected '-' at position 2")
    }
}

@Suite("TraceParent.traceId(of:)")
struct TraceIdOfHeaderTests {
    @Test("gives the trace id of a valid header and nil for an invalid one")
    func traceIdOfHeader() {
        #expect(TraceParent.traceId(of: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(TraceParent.traceId(of: "00-00000000000000000000000000000000-00f067aa0ba902b7-01") == nil)
        #expect(TraceParent.traceId(of: "not a traceparent") == nil)
    }
}
