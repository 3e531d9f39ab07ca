import Foundation
import IdpWireFormats

/// The JSON object of a token-endpoint answer, read for the string and integer members the MC
/// looks at (RFC 6749 §5.1 / §5.2 answers are flat objects of strings and numbers).
///
/// ```swift
/// let body = TokenResponseBody(response.body)
/// let token = body.string("access_token"), lifetime = body.int("expires_in")
/// ```
///
/// A flat object of strings and integers — what the IDP sends — is read by a single pass over the
/// bytes: no `Data`, no `NSNumber`, no `[String: Any]`, and a member's text is made only when it
/// is asked for. Anything else (nested values, fractions, exponents, `true`/`false`/`null`, `\u`
/// escapes, escaped keys, repeated keys, huge integers, malformed text) goes to
/// `JSONSerialization` as before, so every body reads exactly as it did: `string` is
/// what `as? String` gave and `int` what `as? Int` gave, and an unreadable body is empty.
struct TokenResponseBody {
    private enum Storage {
        case flat(bytes: [UInt8], members: [Member])
        case foundation([String: Any])
    }

    /// One member of a flat object, as places in the body's bytes: its text is made only when the
    /// member is asked for.
    private struct Member {
        /// The key's bytes, between the quotes: never escaped (a key with an escape is not flat).
        var key: Range<Int>
        var keyIsASCII: Bool
        var value: Value
    }

    private enum Value {
        /// The string's bytes, between the quotes; `escaped`: with two-character escapes to decode.
        case string(Range<Int>, escaped: Bool)
        case integer(Int)
    }

    private let storage: Storage

    init(_ bytes: [UInt8]) {
        if let members = bytes.withUnsafeBufferPointer({ Self.parseFlat($0) }) {
            storage = .flat(bytes: bytes, members: members)
        } else {
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
            storage = .foundation(object ?? [:])
        }
    }

    /// The member `key` if it is a string; `known` itself when the member's bytes are `known`'s,
    /// so that a text the caller holds already is not made again.
    func string(_ key: String, reusing known: String? = nil) -> String? {
        switch storage {
        case .flat(let bytes, let members):
            return bytes.withUnsafeBufferPointer { buffer -> String? in
                guard case .string(let range, let escaped)? = Self.member(key, of: members, in: buffer)?.value else { return nil }
                if !escaped, var known, known.withUTF8({ Self.same($0, UnsafeBufferPointer(rebasing: buffer[range])) }) { return known }
                return Self.text(range, escaped: escaped, in: buffer)
            }
        case .foundation(let object):
            return object[key] as? String
        }
    }

    /// The member `key` if it is a number that is a whole `Int`.
    func int(_ key: String) -> Int? {
        switch storage {
        case .flat(let bytes, let members):
            return bytes.withUnsafeBufferPointer { buffer -> Int? in
                guard case .integer(let value)? = Self.member(key, of: members, in: buffer)?.value else { return nil }
                return value
            }
        case .foundation(let object):
            return object[key] as? Int
        }
    }

    /// Whether the fast reader took the body (for tests: the fallback must agree with it).
    var isFlat: Bool {
        if case .flat = storage { return true }
        return false
    }

    // MARK: - The flat reader

    /// The member whose key equals `key` (see ``sameText(_:_:bothASCII:)``).
    private static func member(_ key: String, of members: [Member], in bytes: UnsafeBufferPointer<UInt8>) -> Member? {
        var key = key
        return key.withUTF8 { wanted in
            let wantedIsASCII = ByteScan.isASCII(wanted)
            return members.first { sameText(UnsafeBufferPointer(rebasing: bytes[$0.key]), wanted, bothASCII: $0.keyIsASCII && wantedIsASCII) }
        }
    }

    /// Whether two members' keys are the same key (see ``sameText(_:_:bothASCII:)``).
    private static func sameKey(_ first: Member, _ second: Member, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        sameText(UnsafeBufferPointer(rebasing: bytes[first.key]), UnsafeBufferPointer(rebasing: bytes[second.key]),
                 bothASCII: first.keyIsASCII && second.keyIsASCII)
    }

    /// Whether two unescaped keys are equal as Swift compares strings: by bytes when both are
    /// ASCII (where that is the same), else as text (canonical equivalence, as `[String: Any]`
    /// matched).
    private static func sameText(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>, bothASCII: Bool) -> Bool {
        if bothASCII { return same(first, second) }
        return String(decoding: first, as: UTF8.self) == String(decoding: second, as: UTF8.self)
    }

    private static func same(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>) -> Bool {
        first.count == second.count && first.elementsEqual(second)
    }

    /// The text of a string's bytes, checked to be UTF-8 by the parse; `escaped`: with its
    /// two-character escapes decoded.
    private static func text(_ range: Range<Int>, escaped: Bool, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard escaped else { return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(range.count)
        var cursor = range.lowerBound
        while cursor < range.upperBound {
            let byte = bytes[cursor]
            cursor += 1
            guard byte == UInt8(ascii: "\\") else {
                decoded.append(byte)
                continue
            }
            // The parse let through only these escapes, each with its character.
            decoded.append(unescaped(bytes[cursor]) ?? bytes[cursor])
            cursor += 1
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    /// What a two-character escape `\\byte` stands for, or `nil` for one the fast reader leaves
    /// to the fallback (`\\u` among them).
    private static func unescaped(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    /// The members of `{ "key": "string" | integer, … }`, or `nil` for anything else.
    private static func parseFlat(_ bytes: UnsafeBufferPointer<UInt8>) -> [Member]? {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var members: [Member] = []
        members.reserveCapacity(12)
        reader.skipWhitespace()
        if !reader.take(UInt8(ascii: "}")) {
            while true {
                reader.skipWhitespace()
                guard let key = reader.string(), !key.escaped else { return nil }
                reader.skipWhitespace()
                guard reader.take(UInt8(ascii: ":")) else { return nil }
                reader.skipWhitespace()
                let value: Value
                if let text = reader.string() {
                    value = .string(text.range, escaped: text.escaped)
                } else if let number = reader.integer() {
                    value = .integer(number)
                } else {
                    return nil
                }
                let member = Member(key: key.range, keyIsASCII: key.ascii, value: value)
                // A repeated key: leave the choice of member to JSONSerialization.
                guard !members.contains(where: { sameKey($0, member, in: bytes) }) else { return nil }
                members.append(member)
                reader.skipWhitespace()
                if reader.take(UInt8(ascii: ",")) { continue }
                guard reader.take(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        reader.skipWhitespace()
        return reader.atEnd ? members : nil
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        var atEnd: Bool { position == bytes.count }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        /// A string with at most the two-character escapes, valid UTF-8: its bytes between the
        /// quotes; `nil` (position unchanged) for anything else, `\\u` escapes included.
        mutating func string() -> (range: Range<Int>, escaped: Bool, ascii: Bool)? {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
            let start = position + 1
            var index = start
            var escaped = false, ascii = true
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 { return nil }
                if byte >= 0x80 { ascii = false }
                if byte == UInt8(ascii: "\\") {
                    guard index + 1 < bytes.count, unescaped(bytes[index + 1]) != nil else { return nil }
                    escaped = true
                    index += 2
                } else {
                    index += 1
                }
            }
            guard index < bytes.count else { return nil }
            // ASCII is valid UTF-8 as it stands; escapes are ASCII, so they change nothing here.
            if !ascii, String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) == nil { return nil }
            position = index + 1
            return (start..<index, escaped, ascii)
        }

        /// `-?(0|[1-9][0-9]{0,17})` not followed by a fraction or an exponent; `nil` otherwise.
        mutating func integer() -> Int? {
            var index = position
            let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            let digitsStart = index
            var value = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
                // Eighteen digits cannot overflow; longer numbers go to the fallback.
                guard index - digitsStart <= 18 else { return nil }
            }
            let digitCount = index - digitsStart
            guard digitCount > 0, !(digitCount > 1 && bytes[digitsStart] == UInt8(ascii: "0")) else { return nil }
            // "-0" is a number JSONSerialization may hand over as a float: the fallback decides.
            guard !(negative && value == 0) else { return nil }
            if index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
                default: break
                }
            }
            position = index
            return negative ? -value : value
        }
    }
}
