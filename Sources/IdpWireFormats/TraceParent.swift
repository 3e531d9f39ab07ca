/// A W3C Trace Context Level 1 `traceparent` header value: which trace a request belongs to and
/// which span caused it.
///
/// ```swift
/// let parent = try TraceParent(parsing: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
/// parent.isSampled // true
/// ```
package struct TraceParent: Sendable, Hashable, CustomStringConvertible {
    /// The format version that was parsed; 0 for values this type creates.
    package let version: UInt8
    /// The trace-id: 32 lower-case hex digits, not all zeros.
    package let traceId: String
    /// The parent-id (span id): 16 lower-case hex digits, not all zeros.
    package let parentId: String
    /// The trace flags; bit 0 is `sampled`, the other bits are kept as received.
    package let flags: UInt8

    // Byte offsets of the fields in a version-00 value: "vv-<32 hex>-<16 hex>-ff".
    private static let versionLength = 55
    /// Where the dashes are (a switch, not a set: this runs for every byte of every header).
    @inline(__always)
    private static func isDashPosition(_ position: Int) -> Bool {
        switch position {
        case 2, 35, 52: true
        default: false
        }
    }
    private static let traceIdRange = 3..<35
    private static let parentIdRange = 36..<52
    private static let flagsRange = 53..<55

    /// Parses a header value.
    ///
    /// A version above 00 is accepted as the specification asks: its first 55 bytes are read as
    /// version 00, and anything after them must start with `-`.
    /// - Parameter text: The header value, without surrounding whitespace.
    /// - Throws: ``TraceParentError`` naming the first broken rule.
    package init(parsing text: String) throws(TraceParentError) {
        let bytes = Array(text.utf8)
        func fail(_ reason: TraceParentError.Reason) -> TraceParentError {
            TraceParentError(reason, input: text)
        }
        guard !bytes.isEmpty else { throw fail(.empty) }
        guard bytes.count >= 2 else { throw fail(.wrongLength(bytes.count)) }
        guard let versionHigh = Self.lowerHexValue(bytes[0]), let versionLow = Self.lowerHexValue(bytes[1]) else {
            throw fail(.invalidVersion)
        }
        let version = versionHigh << 4 | versionLow
        guard version != 0xFF else { throw fail(.forbiddenVersion) }
        if version == 0 {
            guard bytes.count == Self.versionLength else { throw fail(.wrongLength(bytes.count)) }
        } else {
            guard bytes.count >= Self.versionLength else { throw fail(.wrongLength(bytes.count)) }
            if bytes.count > Self.versionLength, bytes[Self.versionLength] != UInt8(ascii: "-") {
                throw fail(.missingDash(position: Self.versionLength))
            }
        }
        // Report the first offending position, scanning left to right.
        for position in 2..<Self.versionLength {
            if Self.isDashPosition(position) {
                guard bytes[position] == UInt8(ascii: "-") else { throw fail(.missingDash(position: position)) }
            } else {
                guard Self.lowerHexValue(bytes[position]) != nil else {
                    throw fail(.invalidCharacter(position: position))
                }
            }
        }
        guard Self.hasNonZeroDigit(bytes, in: Self.traceIdRange) else { throw fail(.zeroTraceId) }
        guard Self.hasNonZeroDigit(bytes, in: Self.parentIdRange) else { throw fail(.zeroParentId) }
        let flagsHigh = Self.lowerHexValue(bytes[53]) ?? 0
        let flagsLow = Self.lowerHexValue(bytes[54]) ?? 0
        self.version = version
        self.traceId = String(decoding: bytes[Self.traceIdRange], as: UTF8.self)
        self.parentId = String(decoding: bytes[Self.parentIdRange], as: UTF8.self)
        self.flags = flagsHigh << 4 | flagsLow
    }

    /// Creates a version-00 value from its ids.
    ///
    /// The ids are validated by parsing the header this would produce, so error positions and
    /// lengths refer to that header (`00-<traceId>-<parentId>-01`), which is also the error's
    /// ``TraceParentError/input``.
    /// - Parameters:
    ///   - traceId: 32 lower-case hex digits, not all zeros.
    ///   - parentId: 16 lower-case hex digits, not all zeros.
    ///   - sampled: Whether the `sampled` flag is set.
    /// - Throws: ``TraceParentError`` when an id is malformed.
    package init(traceId: String, parentId: String, sampled: Bool = true) throws(TraceParentError) {
        self = try TraceParent(parsing: "00-\(traceId)-\(parentId)-\(sampled ? "01" : "00")")
    }

    private init(uncheckedTraceId traceId: String, parentId: String, flags: UInt8) {
        self.version = 0
        self.traceId = traceId
        self.parentId = parentId
        self.flags = flags
    }

    /// Starts a new trace with random ids from ``SecureRandom/fillUnique(_:)``: unique, not secret.
    /// - Parameter sampled: Whether the `sampled` flag is set.
    /// - Returns: A version-00 value with fresh, non-zero ids.
    package static func random(sampled: Bool = true) -> TraceParent {
        // The MC starts a trace per event: the ids are drawn and written out without an array.
        withUnsafeTemporaryAllocation(byteCount: 24, alignment: 8) { bytes in
            fillIds(bytes)
            let traceId = UnsafeMutableRawBufferPointer(rebasing: bytes[0..<16])
            let parentId = UnsafeMutableRawBufferPointer(rebasing: bytes[16..<24])
            return TraceParent(
                uncheckedTraceId: Hex.encode(raw: UnsafeRawBufferPointer(traceId)),
                parentId: Hex.encode(raw: UnsafeRawBufferPointer(parentId)),
                flags: sampled ? 1 : 0
            )
        }
    }

    /// `random(sampled:).description`, written straight into one string: what starting a trace
    /// for a header needs, without the two id strings a ``TraceParent`` holds.
    package static func randomHeader(sampled: Bool = true) -> String {
        withUnsafeTemporaryAllocation(byteCount: 24, alignment: 8) { bytes in
            fillIds(bytes)
            return String(unsafeUninitializedCapacity: versionLength) { output in
                var index = 0
                func append(_ byte: UInt8) {
                    output[index] = byte
                    index += 1
                }
                for byte in "00-".utf8 { append(byte) }
                for position in 0..<bytes.count {
                    let byte = bytes[position]
                    if position == 16 { append(UInt8(ascii: "-")) }
                    append(Hex.digit(byte >> 4))
                    append(Hex.digit(byte & 0x0F))
                }
                for byte in (sampled ? "-01" : "-00").utf8 { append(byte) }
                return index
            }
        }
    }

    /// Whether the caller recorded this trace (flag bit 0).
    package var isSampled: Bool { flags & 0x01 != 0 }

    /// The header value in version-00 form, `00-<traceId>-<parentId>-<flags>`.
    ///
    /// A parsed higher version is written as 00 on purpose: the specification asks a participant
    /// to propagate only the version it understands.
    package var description: String {
        let length = 3 + traceId.utf8.count + 1 + parentId.utf8.count + 3
        return String(unsafeUninitializedCapacity: length) { buffer in
            var index = 0
            func append(_ byte: UInt8) {
                buffer[index] = byte
                index += 1
            }
            append(UInt8(ascii: "0"))
            append(UInt8(ascii: "0"))
            append(UInt8(ascii: "-"))
            for byte in traceId.utf8 { append(byte) }
            append(UInt8(ascii: "-"))
            for byte in parentId.utf8 { append(byte) }
            append(UInt8(ascii: "-"))
            append(Hex.digit(flags >> 4))
            append(Hex.digit(flags & 0x0F))
            return index
        }
    }

    /// Fills the 24 bytes of `ids` with a trace id (the first 16) and a parent id (the last 8)
    /// from ``SecureRandom/fillUnique(_:)``, in one draw: unique, not secret. An id that comes
    /// out all zeros, which is invalid, is drawn again; the chance is negligible, but retrying
    /// costs nothing.
    private static func fillIds(_ ids: UnsafeMutableRawBufferPointer) {
        SecureRandom.fillUnique(ids)
        redrawWhileZero(UnsafeMutableRawBufferPointer(rebasing: ids[0..<16]))
        redrawWhileZero(UnsafeMutableRawBufferPointer(rebasing: ids[16..<24]))
    }

    /// Draws `id` again for as long as its bytes are all zero.
    private static func redrawWhileZero(_ id: UnsafeMutableRawBufferPointer) {
        var allZero = true
        while allZero {
            for index in 0..<id.count where id[index] != 0 {
                allZero = false
                break
            }
            if allZero { SecureRandom.fillUnique(id) }
        }
    }

    /// Whether `bytes` has a digit other than `0` in `range`: an all-zero id is invalid.
    private static func hasNonZeroDigit(_ bytes: [UInt8], in range: Range<Int>) -> Bool {
        for position in range where bytes[position] != UInt8(ascii: "0") { return true }
        return false
    }

    /// The value of a lower-case hex digit; upper case is invalid in `traceparent`.
    private static func lowerHexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

extension TraceParent {
    /// The `tracestate` entry a client sends when it started a new trace because the caller's
    /// traceparent could not be parsed (W3C Trace Context, "restart the trace"); the IDP's audit
    /// log notes it.
    package static let restartedTraceState = "idpsdk=restarted"

    /// The trace id of a `traceparent` header value, or `nil` if the value is not a valid
    /// traceparent. What flows are correlated by across the SDK, the IDP's audit log and providers.
    package static func traceId(of header: String) -> String? {
        if isCanonicalVersion00(header) {
            var header = header
            return header.withUTF8 { String(decoding: UnsafeBufferPointer(rebasing: $0[traceIdRange]), as: UTF8.self) }
        }
        return (try? TraceParent(parsing: header))?.traceId
    }

    /// Whether the trace id of `header` is `traceId`: `traceId(of: header) == traceId`, with the
    /// bytes where every traceparent carries its trace id compared first, so that the header of
    /// another trace is not parsed (an audit log read by trace compares every entry's header).
    package static func traceId(of header: String, is traceId: String) -> Bool {
        var header = header, wanted = traceId
        let inPlace = header.withUTF8 { headerBytes in
            wanted.withUTF8 { idBytes in
                guard idBytes.count == traceIdRange.count, headerBytes.count >= traceIdRange.upperBound else { return false }
                var index = 0
                while index < idBytes.count, headerBytes[traceIdRange.lowerBound + index] == idBytes[index] { index += 1 }
                return index == idBytes.count
            }
        }
        return inPlace && Self.traceId(of: header) == traceId
    }

    /// `(try? TraceParent(parsing: header))?.description`, without parsing and printing the
    /// common case again: a valid version-00 value is its own canonical form (lower-case hex,
    /// nothing after the flags), so it is returned as it is. Anything else takes the long way.
    package static func canonical(_ header: String) -> String? {
        if isCanonicalVersion00(header) { return header }
        return (try? TraceParent(parsing: header))?.description
    }

    /// Whether `header` parses as a traceparent: the common case (a valid version-00 value)
    /// without the allocations of a parse.
    package static func isValid(_ header: String) -> Bool {
        isCanonicalVersion00(header) || (try? TraceParent(parsing: header)) != nil
    }

    /// Whether `header` is a valid version-00 value as ``description`` writes one, read in place.
    private static func isCanonicalVersion00(_ header: String) -> Bool {
        let verdict = header.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard bytes.count == versionLength, bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "0") else { return false }
            var traceIdNonZero = false, parentIdNonZero = false
            for position in 2..<versionLength {
                let byte = bytes[position]
                if isDashPosition(position) {
                    guard byte == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard lowerHexValue(byte) != nil else { return false }
                if byte != UInt8(ascii: "0") {
                    if traceIdRange.contains(position) { traceIdNonZero = true } else if parentIdRange.contains(position) { parentIdNonZero = true }
                }
            }
            return traceIdNonZero && parentIdNonZero
        }
        return verdict == true
    }
}
