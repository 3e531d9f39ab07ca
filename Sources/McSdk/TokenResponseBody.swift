import Foundation

/// The JSON object of a token-endpoint answer, read for the string and integer members the MC
/// looks at (RFC 6749 §5.1 / §5.2 answers are flat objects of strings and numbers).
///
/// ```swift
/// let body = TokenResponseBody(response.body)
/// let token = body.string("access_token"), lifetime = body.int("expires_in")
/// ```
///
/// A flat object of strings and integers — what the IDP sends — is read by a single pass over the
/// bytes: no `Data`, no `NSNumber`, no `[String: Any]`. Anything else (nested values, fractions,
/// exponents, `true`/`false`/`null`, `\u` escapes, repeated keys, huge integers, malformed text)
/// goes to `JSONSerialization` as before, so every body reads exactly as it did: `string` is
/// what `as? String` gave and `int` what `as? Int` gave, and an unreadable body is empty.
struct TokenResponseBody {
    enum Scalar: Equatable {
        case string(String)
        case integer(Int)
    }

    private enum Storage {
        case flat([(key: String, value: Scalar)])
        case foundation([String: Any])
    }

    private let storage: Storage

    init(_ bytes: [UInt8]) {
        if let members = bytes.withUnsafeBufferPointer({ Self.parseFlat($0) }) {
            storage = .flat(members)
        } else {
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
            storage = .foundation(object ?? [:])
        }
    }

    /// The member `key` if it is a string.
    func string(_ key: String) -> String? {
        switch storage {
        case .flat(let members):
            guard case .string(let value)? = members.first(where: { $0.key == key })?.value else { return nil }
            return value
        case .foundation(let object):
            return object[key] as? String
        }
    }

    /// The member `key` if it is a number that is a whole `Int`.
    func int(_ key: String) -> Int? {
        switch storage {
        case .flat(let members):
            guard case .integer(let value)? = members.first(where: { $0.key == key })?.value else { return nil }
            return value
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

    /// The members of `{ "key": "string" | integer, … }`, or `nil` for anything else.
    static func parseFlat(_ bytes: UnsafeBufferPointer<UInt8>) -> [(key: String, value: Scalar)]? {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var members: [(key: String, value: Scalar)] = []
        members.reserveCapacity(12)
        reader.skipWhitespace()
        if !reader.take(UInt8(ascii: "}")) {
            while true {
                reader.skipWhitespace()
                guard let key = reader.string() else { return nil }
                reader.skipWhitespace()
                guard reader.take(UInt8(ascii: ":")) else { return nil }
                reader.skipWhitespace()
                let value: Scalar
                if let text = reader.string() {
                    value = .string(text)
                } else if let number = reader.integer() {
                    value = .integer(number)
                } else {
                    return nil
                }
                // A repeated key: leave the choice of member to JSONSerialization.
                guard !members.contains(where: { $0.key == key }) else { return nil }
                members.append((key, value))
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

        /// A string with at most the two-character escapes; `nil` (position unchanged) for
        /// anything else, `\u` escapes included.
        mutating func string() -> String? {
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
                    escaped = true
                    index += 2
                } else {
                    index += 1
                }
            }
            guard index < bytes.count else { return nil }
            let end = index
            let text: String?
            if !escaped, ascii {
                // ASCII is valid UTF-8: no validation pass.
                text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            } else if !escaped {
                text = String(validating: Array(bytes[start..<end]), as: UTF8.self)
            } else {
                var decoded: [UInt8] = []
                decoded.reserveCapacity(end - start)
                var cursor = start
                while cursor < end {
                    let byte = bytes[cursor]
                    guard byte == UInt8(ascii: "\\") else {
                        decoded.append(byte)
                        cursor += 1
                        continue
                    }
                    guard cursor + 1 < end else { return nil }
                    switch bytes[cursor + 1] {
                    case UInt8(ascii: "\""): decoded.append(UInt8(ascii: "\""))
                    case UInt8(ascii: "\\"): decoded.append(UInt8(ascii: "\\"))
                    case UInt8(ascii: "/"): decoded.append(UInt8(ascii: "/"))
                    case UInt8(ascii: "b"): decoded.append(0x08)
                    case UInt8(ascii: "f"): decoded.append(0x0C)
                    case UInt8(ascii: "n"): decoded.append(0x0A)
                    case UInt8(ascii: "r"): decoded.append(0x0D)
                    case UInt8(ascii: "t"): decoded.append(0x09)
                    default: return nil
                    }
                    cursor += 2
                }
                text = String(validating: decoded, as: UTF8.self)
            }
            guard let text else { return nil }
            position = end + 1
            return text
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
