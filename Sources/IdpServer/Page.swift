import Foundation
import IdpPrimitives
import IdpWireFormats

/// The IDP's responses: XHTML login forms and error pages, redirects, JSON.
enum Page {
    static let xhtmlContentType = "application/xhtml+xml; charset=utf-8"

    /// A form for one step of a client's flow, with the rejection of the previous answer if any:
    /// the step's prepared template with the session code (and rejection) filled in.
    static func form(_ template: FormTemplate, sessionCode: String, rejection: Rejection?) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.set("Content-Type", xhtmlContentType)
        return HTTPResponse(status: 200, headers: headers, body: template.render(sessionCode: sessionCode, rejection: rejection))
    }

    /// An XHTML error page without a form, as the IDP shows when it cannot go on.
    static func errorResponse(status: Int, code: String, _ message: String) -> HTTPResponse {
        let html = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE html>
        <html xmlns="http://www.w3.org/1999/xhtml">
        <head><title>Error</title></head>
        <body><div id="kc-error-message" class="alert alert-error" data-error="\(XMLEscaping.escape(code))"><span class="kc-feedback-text">\(XMLEscaping.escape(message))</span></div></body>
        </html>

        """
        var headers = HTTPHeaders()
        headers.set("Content-Type", xhtmlContentType)
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    /// A 302 to the client's redirect URI with the parameters in the fragment or the query.
    static func redirect(to uri: String, responseMode: String, _ parameters: [(String, String)]) -> HTTPResponse {
        let separator = responseMode == "query" ? (uri.contains("?") ? UInt8(ascii: "&") : UInt8(ascii: "?")) : UInt8(ascii: "#")
        var headers = HTTPHeaders()
        headers.set("Location", FormURLEncoding.encode(parameters, after: uri, separator: separator))
        return HTTPResponse(status: 302, headers: headers)
    }

    /// A JSON response (token endpoint): a flat object of strings, integers and booleans, keys in
    /// code-point order.
    ///
    /// Written by hand, straight into the body's bytes: `JSONSerialization` with `.sortedKeys`
    /// sorts with ICU collation, far slower than a byte-wise sort of a few keys.
    static func json(status: Int, _ object: [String: any Sendable]) -> HTTPResponse {
        LockProfiler.noteHeavyWork(.render)
        var body: [UInt8] = []
        body.reserveCapacity(64 + object.count * 64)
        body.append(UInt8(ascii: "{"))
        let sorted = object.sorted(by: { $0.key < $1.key })
        for index in 0..<sorted.count {
            let member = sorted[index]
            if index > 0 { body.append(UInt8(ascii: ",")) }
            appendJSONString(member.key, to: &body)
            body.append(UInt8(ascii: ":"))
            switch member.value {
            case let value as String: appendJSONString(value, to: &body)
            case let value as Int: body.append(contentsOf: String(value).utf8)
            case let value as Bool: body.append(contentsOf: value ? "true".utf8 : "false".utf8)
            case let value: appendJSONString("\(value)", to: &body)
            }
        }
        body.append(UInt8(ascii: "}"))
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/json")
        headers.set("Cache-Control", "no-store")
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// A member value of ``json(status:members:)``.
    enum JSONValue {
        case string(String)
        case int(Int)
        /// A grant's text (``GrantHandle/text``), written from the handle's bytes: no string made.
        case grant(GrantHandle)
    }

    /// The same JSON as ``json(status:_:)`` for members given as typed pairs: no dictionary, no
    /// casts, and no sort when the caller lists the keys in code-point order already (the token
    /// endpoint's answer to a code, once per login). Keys must be distinct.
    static func json(status: Int, members: [(key: String, value: JSONValue)]) -> HTTPResponse {
        LockProfiler.noteHeavyWork(.render)
        var members = members
        for index in 1..<max(1, members.count) where members[index - 1].key >= members[index].key {
            members.sort { $0.key < $1.key }
            break
        }
        var body: [UInt8] = []
        body.reserveCapacity(64 + members.count * 64)
        body.append(UInt8(ascii: "{"))
        for index in 0..<members.count {
            let member = members[index]
            if index > 0 { body.append(UInt8(ascii: ",")) }
            appendJSONString(member.key, to: &body)
            body.append(UInt8(ascii: ":"))
            switch member.value {
            case .string(let value): appendJSONString(value, to: &body)
            case .int(let value): body.append(contentsOf: String(value).utf8)
            case .grant(let handle):
                // URL-safe Base 64 has nothing JSON escapes.
                body.append(UInt8(ascii: "\""))
                handle.appendText(to: &body)
                body.append(UInt8(ascii: "\""))
            }
        }
        body.append(UInt8(ascii: "}"))
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/json")
        headers.set("Cache-Control", "no-store")
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// Appends `text` as a JSON string (RFC 8259 §7): quotes, backslashes and control characters
    /// escaped, every other UTF-8 byte copied as it is (runs without an escape in one copy).
    static func appendJSONString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if index > runStart { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): output.append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): output.append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): output.append(contentsOf: #"\t"#.utf8)
                default:
                    // \u00XX, lower-case hex.
                    output.append(contentsOf: #"\u00"#.utf8)
                    output.append(Hex.digit(byte >> 4))
                    output.append(Hex.digit(byte & 0x0F))
                }
            }
            if utf8.count > runStart { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count])) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// An RFC 6749 §5.2 error response.
    static func tokenError(status: Int = 400, _ error: String, _ description: String) -> HTTPResponse {
        json(status: status, ["error": error, "error_description": description])
    }
}

/// Why the IDP re-serves a step: an `data-error` code and the message shown to the user.
struct Rejection: Equatable {
    var code: String
    var message: String
    /// Whether the answer counts against the user (a wrong secret) or not (a missing field).
    var countsAgainstUser: Bool
}

/// A client of a tenant with the forms of its steps rendered once, when the client is added.
struct PreparedClient: Sendable {
    let configuration: IdpClientConfiguration
    /// One per step.
    let forms: [FormTemplate]

    init(_ configuration: IdpClientConfiguration, tenant: String) {
        self.configuration = configuration
        forms = configuration.steps.indices.map { FormTemplate(tenant: tenant, client: configuration, step: $0) }
    }
}

/// The XHTML of one step's form, prepared once per client: everything but the session code and
/// the rejection is fixed bytes, so serving a step is a few appends.
struct FormTemplate: Sendable {
    /// Declaration, head and the opening of the body, up to where a rejection goes.
    private let head: [UInt8]
    /// The form's opening tag up to the session code in its action.
    private let actionPrefix: [UInt8]
    /// The rest of the opening tag, the fields and the hidden session-code input up to its value.
    private let fields: [UInt8]
    /// The submit button and the end of the page.
    private let tail: [UInt8]

    init(tenant: String, client: IdpClientConfiguration, step: Int) {
        head = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE html>
        <html xmlns="http://www.w3.org/1999/xhtml">
        <head><title>\(XMLEscaping.escape(client.clientId)) – step \(step + 1) of \(client.steps.count)</title></head>
        <body>

        """.utf8)
        let action = "/auth/realms/\(FormURLEncoding.percentEncode(tenant))/login-actions/authenticate?session_code="
        actionPrefix = Array("<form id=\"kc-form\" action=\"\(XMLEscaping.escape(action))".utf8)
        var fields = XMLEscaping.escape("&execution=\(step + 1)") + "\" method=\"post\">\n"
        for field in client.steps[step] {
            let id = XMLEscaping.escape(field.id)
            fields += "<label for=\"\(id)\">\(XMLEscaping.escape(field.label))</label>"
            fields += "<input id=\"\(id)\" name=\"\(id)\" type=\"\(field.isSecret ? "password" : "text")\" autocomplete=\"off\"/>\n"
        }
        fields += "<input type=\"hidden\" name=\"session_code\" value=\""
        self.fields = Array(fields.utf8)
        tail = Array("\"/>\n<input id=\"kc-submit\" name=\"submit\" type=\"submit\" value=\"Continue\"/>\n</form>\n</body>\n</html>\n".utf8)
    }

    /// The page for a flow. `sessionCode` is one of this server's URL-safe Base 64 session codes
    /// (found in its session table), so it needs no escaping.
    func render(sessionCode: String, rejection: Rejection?) -> [UInt8] {
        LockProfiler.noteHeavyWork(.render)
        var rejectionHTML: String?
        if let rejection {
            rejectionHTML = "<div id=\"kc-error-message\" class=\"alert alert-error\" data-error=\"\(XMLEscaping.escape(rejection.code))\"><span class=\"kc-feedback-text\">\(XMLEscaping.escape(rejection.message))</span></div>\n"
        }
        let code = sessionCode.utf8
        var page: [UInt8] = []
        page.reserveCapacity(head.count + (rejectionHTML?.utf8.count ?? 0) + actionPrefix.count + fields.count + tail.count + 2 * code.count)
        page.append(contentsOf: head)
        if let rejectionHTML { page.append(contentsOf: rejectionHTML.utf8) }
        page.append(contentsOf: actionPrefix)
        page.append(contentsOf: code)
        page.append(contentsOf: fields)
        page.append(contentsOf: code)
        page.append(contentsOf: tail)
        return page
    }
}
