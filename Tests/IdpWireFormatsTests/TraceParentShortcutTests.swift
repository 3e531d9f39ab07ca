import IdpPrimitives
import IdpWireFormats
import Testing

/// The shortcuts for a `traceparent` header (``TraceParent/canonical(_:)``, ``TraceParent/isValid(_:)``,
/// ``TraceParent/traceId(of:)``, ``TraceParent/traceId(of:is:)``) must give what parsing (and
/// printing) gave.
@Suite("TraceParent's shortcuts for a header")
struct TraceParentShortcutTests {
    static func expectSame(_ header: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let parsed = try? TraceParent(parsing: header)
        #expect(TraceParent.canonical(header) == parsed?.description, "\(header.debugDescription)", sourceLocation: sourceLocation)
        #expect(TraceParent.isValid(header) == (parsed != nil), "\(header.debugDescription)", sourceLocation: sourceLocation)
        #expect(TraceParent.traceId(of: header) == parsed?.traceId, "\(header.debugDescription)", sourceLocation: sourceLocation)
        for id in [parsed?.traceId, "4bf92f3577b34da6a3ce929d0e0e4736", "4BF92F3577B34DA6A3CE929D0E0E4736", "4bf92f"].compactMap({ $0 }) {
            #expect(TraceParent.traceId(of: header, is: id) == (parsed?.traceId == id), "\(header.debugDescription), \(id)", sourceLocation: sourceLocation)
        }
    }

    @Test("valid, invalid and other-version headers")
    func cases() {
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        for header in [
            valid, TraceParent.random().description, TraceParent.random(sampled: false).description,
            valid.uppercased(), "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            valid + "-", String(valid.dropLast()), "", "00", "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", "00-4bf92f3577b34da6a3ce929d0e0e473é-00f067aa0ba902b7-01",
        ] {
            Self.expectSame(header)
        }
        var generator = SeededRandom(seed: 55)
        let alphabet = Array("0123456789abcdefABF-x".utf8)
        for _ in 0..<3_000 {
            var bytes = Array(valid.utf8)
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
            Self.expectSame(String(decoding: bytes, as: UTF8.self))
        }
    }
}
