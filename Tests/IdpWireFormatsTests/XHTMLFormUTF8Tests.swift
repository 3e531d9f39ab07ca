import IdpWireFormats
import Testing
import TestSupport

/// `XHTMLForm.parse(body:)` reads a body in place once it has checked that it is UTF-8: the check
/// must judge every byte sequence as `String(validating:as:)` does, as ``XHTMLForm/parse(_:)``'s
/// callers would.
@Suite("XHTMLForm body: the UTF-8 check")
struct XHTMLFormUTF8Tests {
    /// Whether `parse(body:)` refuses `bytes`, set inside `padding` bytes of ASCII and a page, as
    /// not UTF-8.
    static func refused(_ bytes: [UInt8], padding: Int = 0) -> Bool {
        let page = Array(#"<form action="/a"><input id="x"#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: padding) + bytes
            + Array(#""/></form>"#.utf8)
        switch Result(catching: { () throws(XHTMLFormError) in try XHTMLForm.parse(body: page) }) {
        case .success(nil): return true
        case .success, .failure: return false
        }
    }

    /// The sequences of `bytes` that `parse(body:)` and `String(validating:as:)` judge differently.
    static func disagreements(_ sequences: [[UInt8]], padding: Int = 0) -> [[UInt8]] {
        var found: [[UInt8]] = []
        for bytes in sequences where refused(bytes, padding: padding) != (String(validating: bytes, as: UTF8.self) == nil) {
            found.append(bytes)
        }
        return found
    }

    /// Bytes around every boundary a second, third or fourth byte of a sequence can cross.
    static let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]

    @Test("every one- and two-byte sequence is judged as String(validating:) judges it")
    func shortSequences() {
        var sequences: [[UInt8]] = []
        for first in 0...255 {
            sequences.append([UInt8(first)])
            for second in 0...255 { sequences.append([UInt8(first), UInt8(second)]) }
        }
        let found = Self.disagreements(sequences)
        #expect(found.isEmpty, "\(found.prefix(5))")
    }

    @Test("every lead byte, with edge bytes after it, is judged as String(validating:) judges it")
    func longSequences() {
        var sequences: [[UInt8]] = []
        for lead in 0xC0...0xFF {
            for second in Self.edges {
                for third in Self.edges {
                    sequences.append([UInt8(lead), second, third])
                    // A fourth byte only after a third that can continue a sequence (after any in a full run).
                    guard (0x80...0xBF).contains(third) || SuiteSize.isFull else { continue }
                    for fourth in Self.edges { sequences.append([UInt8(lead), second, third, fourth]) }
                }
            }
        }
        let found = Self.disagreements(sequences)
        #expect(found.isEmpty, "\(found.prefix(5))")
    }

    @Test("a sequence is judged alike wherever it falls against the eight- and 32-byte reads")
    func positions() {
        let sequences: [[UInt8]] = [
            Array("é".utf8), Array("–".utf8), Array("😀".utf8), [0x80], [0xC3], [0xE2, 0x80], [0xF0, 0x9F, 0x98], [0xED, 0xA0, 0x80], [0xC0, 0xAF],
            [0xF4, 0x90, 0x80, 0x80], [0xFF], Array("é".utf8) + [0x80], Array(String(repeating: "ä", count: 20).utf8),
        ]
        for padding in 0..<70 {
            let found = Self.disagreements(sequences, padding: padding)
            #expect(found.isEmpty, "padding \(padding): \(found.prefix(5))")
        }
    }
}
