/// An HTTP-shaped request, as the SDK sends it to the IDP.
///
/// The in-process IDP never opens a socket; this value is what a real HTTP transport would put on
/// the wire, so a transport over URLSession or sockets can be added without touching the SDK.
public struct HTTPRequest: Sendable, Equatable {
    /// The request method, upper case (`GET`, `POST`).
    public var method: String
    /// The path and query, for example `/auth/realms/demo/protocol/openid-connect/auth?client_id=x`.
    public var target: String
    /// Header fields. Names are compared case-insensitively by ``HTTPHeaders``.
    public var headers: HTTPHeaders
    /// The body bytes (UTF-8 text for every request this package sends).
    public var body: [UInt8]

    /// A request.
    /// - Parameters:
    ///   - method: The HTTP method, such as `GET` or `POST`.
    ///   - target: The path and query.
    ///   - headers: The header fields.
    ///   - body: The body's bytes.
    public init(method: String, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The part of ``target`` before `?`.
    public var path: Substring {
        target[..<(queryMark ?? target.endIndex)]
    }

    /// The part of ``target`` after the first `?`, or an empty string.
    public var query: Substring {
        guard let mark = queryMark else { return "" }
        return target[target.utf8.index(after: mark)...]
    }

    /// Where the first `?` of ``target`` is: searched eight bytes at a time where the target's
    /// bytes lie (a native or small string) and reached by offset, which costs less than stepping
    /// the UTF-8 view's index a byte at a time.
    private var queryMark: String.Index? {
        let utf8 = target.utf8
        let found = utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            let offset = ByteScan.firstIndex(of: UInt8(ascii: "?"), in: bytes, from: 0, to: bytes.count)
            return offset < bytes.count ? offset : nil
        }
        guard let found else { return utf8.firstIndex(of: UInt8(ascii: "?")) }
        return found.map { utf8.index(utf8.startIndex, offsetBy: $0) }
    }
}

/// An HTTP-shaped response from the IDP.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code (200, 302, 400, …).
    public var status: Int
    /// Header fields.
    public var headers: HTTPHeaders
    /// The body bytes.
    public var body: [UInt8]

    /// A response.
    /// - Parameters:
    ///   - status: The HTTP status code.
    ///   - headers: The header fields.
    ///   - body: The body's bytes.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body decoded as UTF-8, or `nil` when it is not valid UTF-8.
    public var bodyText: String? { String(validating: body, as: UTF8.self) }
}

/// Header fields in the order they were added; names compare case-insensitively (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// The fields in the order they were added; a name may repeat.
    public private(set) var fields: [(name: String, value: String)] = []

    /// No header fields.
    public init() {}

    /// Header fields from a literal, in the literal's order; a repeated name adds a field.
    ///
    /// - Parameter elements: The names and values.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields.reserveCapacity(max(elements.count, Self.initialCapacity))
        for (name, value) in elements { add(name, value) }
    }

    /// Room made at the first field: most requests and answers of this harness carry two to four
    /// (growing from one field at a time reallocated once more). Not more: a request waiting on
    /// the IDP keeps its headers, and the authorize request carries two; eight slots made each
    /// parked flow 200 bytes larger, four 70.
    static let initialCapacity = 2

    /// No fields, with room for `capacity` without growing: for a request whose fields are known,
    /// each added once with ``add(_:_:)``. The room is kept as long as the request is.
    package init(minimumCapacity capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(_ name: String, _ value: String) {
        if fields.capacity == 0 { fields.reserveCapacity(Self.initialCapacity) }
        fields.append((name, value))
    }

    /// Replaces every field of this name with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field of this name.
    public mutating func remove(_ name: String) {
        var kept = 0
        for index in 0..<fields.count where !Self.namesMatch(fields[index].name, name) {
            if kept != index { fields.swapAt(kept, index) }
            kept += 1
        }
        if kept < fields.count { fields.removeLast(fields.count - kept) }
    }

    /// The first value of the field, or `nil`.
    public subscript(_ name: String) -> String? {
        for index in 0..<fields.count where Self.namesMatch(fields[index].name, name) { return fields[index].value }
        return nil
    }

    /// Every value of the field, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    /// Whether both have the same fields in the same order, names compared case-insensitively and
    /// values exactly.
    ///
    /// - Parameters:
    ///   - lhs: Some header fields.
    ///   - rhs: Other header fields.
    /// - Returns: `true` when the fields match one by one.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { namesMatch($0.name, $1.name) && $0.value == $1.value }
    }

    /// Whether two field names are the same, case-insensitively: byte by byte with ASCII letters
    /// folded (field names are ASCII tokens, RFC 9110 §5.1), without making lowercased copies; a
    /// name with other bytes is compared by `lowercased()`.
    package static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        // Read where the names lie (native and small strings are contiguous), with no copy of
        // either to call the mutating `withUTF8` on.
        let ascii: Bool? = lhs.utf8.withContiguousStorageIfAvailable { a in
            rhs.utf8.withContiguousStorageIfAvailable { b -> Bool? in
                guard a.count == b.count else { return ByteScan.isASCII(a) && ByteScan.isASCII(b) ? false : nil }
                var same = true
                for index in 0..<a.count {
                    let x = a[index], y = b[index]
                    guard x < 0x80, y < 0x80 else { return nil }
                    if x != y && x.asciiLowercased != y.asciiLowercased { same = false }
                }
                return same
            } ?? nil
        } ?? nil
        return ascii ?? (lhs.lowercased() == rhs.lowercased())
    }
}

/// Why a request got no response.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it was.
    public enum Kind: String, Sendable {
        /// Nothing listens at the address (no IDP registered at that URL).
        case unreachable
        /// The peer's certificate did not match the pinned chain.
        case certificatePinning
        /// The connection dropped before a response arrived (fault injection).
        case connectionLost
        /// The response did not arrive in time.
        case timedOut
    }

    /// What went wrong.
    public var kind: Kind
    /// A description for people; never holds secrets.
    public var message: String

    /// A transport error.
    /// - Parameters:
    ///   - kind: What went wrong.
    ///   - message: A description for people.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// `<kind>: <message>`.
    public var description: String { "\(kind.rawValue): \(message)" }
}

/// Carries HTTP-shaped requests to an IDP and delivers the response exactly once.
///
/// Implementations must call `completion` exactly once per `send`, on any thread, and never while
/// holding a lock of their own. They must not block the calling thread while the (simulated)
/// network is slow: a request in flight is state, not a thread.
public protocol Transport: Sendable {
    /// Sends `request`; `completion` receives the response or the reason there is none.
    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void)
}

extension Transport {
    /// Sends `request` and returns the first answer. Never blocks a thread.
    ///
    /// A transport that answers before its `send` returns (the in-process IDP with no latency
    /// answers on the calling thread) is answered at once, without a continuation; one that answers
    /// later (a latency, a real network, a held request) is awaited. Takes the first answer only:
    /// a faulty transport that answers twice (a duplicated response) resumes the caller once.
    public func send(_ request: HTTPRequest) async -> Result<HTTPResponse, TransportError> {
        let slot = TransportAnswer()
        send(request) { slot.deliver($0) }
        if let answer = slot.takeIfAnswered() { return answer }
        return await withUnsafeContinuation { slot.wait(with: $0) }
    }
}
