import IdpPrimitives
import IdpWireFormats

/// A scripted web view for the web-view (TWV) flow of `000_*.txt`: it loads an authorization
/// request, fills every form the IDP shows, submits, and stops at the redirect back to the app,
/// whose `Location` the app then parses for the code.
///
/// ```swift
/// let webView = WebViewSimulator(transport: InProcessTransport(server: idp))
/// let location = try await webView.load(request.url, headers: request.headers, until: redirectURI) { form in
///     ["username": "alice", "password": "s3cret"]      // by input id; nil gives up
/// }
/// let code = try request.parseRedirect(location, redirectURI: redirectURI).code
/// ```
public struct WebViewSimulator: Sendable {
    /// Where requests go; the URL's scheme and host are dropped, the transport knows its server.
    public let transport: any Transport
    /// The most pages one load may go through before it gives up.
    public var maximumPages: Int

    /// A web view that loads pages through `transport`.
    /// - Parameters:
    ///   - transport: Where requests go.
    ///   - maximumPages: The most pages one load may go through before it gives up.
    public init(transport: any Transport, maximumPages: Int = 16) {
        self.transport = transport
        self.maximumPages = maximumPages
    }

    /// Loads `url` with `headers`, answers each form with `fill(form)` (values by input id; `nil`
    /// stops with ``WebViewSimulatorError``), and returns the `Location` of the redirect to
    /// `redirectURI` — with a code or with the IDP's error.
    /// - Throws: ``WebViewSimulatorError`` for an unusable URL, a transport failure, an IDP error
    ///   page, a form the script does not answer, or too many pages.
    public func load(
        _ url: String, headers: HTTPHeaders, until redirectURI: String,
        fill: @Sendable (XHTMLForm) -> [String: String]?
    ) async throws(WebViewSimulatorError) -> String {
        var request = HTTPRequest(method: "GET", target: try Self.target(of: url), headers: headers)
        for _ in 0..<maximumPages {
            let response: HTTPResponse
            switch await transport.send(request) {
            case .success(let answer): response = answer
            case .failure(let error): throw WebViewSimulatorError("the page could not be loaded: \(error)")
            }
            if (300..<400).contains(response.status) {
                guard let location = response.headers["Location"] else { throw WebViewSimulatorError("a redirect without Location") }
                if location.hasPrefix(redirectURI) { return location }
                request = HTTPRequest(method: "GET", target: try Self.target(of: location), headers: headers)
                continue
            }
            guard let text = response.bodyText else { throw WebViewSimulatorError("page with status \(response.status) is not UTF-8") }
            let form: XHTMLForm
            do {
                form = try XHTMLForm.parse(text)
            } catch {
                let notice = XHTMLForm.errorNotice(in: text)
                throw WebViewSimulatorError("the IDP showed an error page (status \(response.status)): \(notice.map { "\($0.code ?? "error"): \($0.message)" } ?? "\(error)")")
            }
            guard let values = fill(form) else { throw WebViewSimulatorError("the script gave no answer to the form '\(form.title ?? form.action)'") }
            var body: [(String, String)] = []
            for input in form.visibleInputs { body.append((input.name, values[input.id] ?? "")) }
            for hidden in form.hiddenInputs { body.append((hidden.name, hidden.value ?? "")) }
            var postHeaders = headers
            postHeaders.set("Content-Type", "application/x-www-form-urlencoded")
            request = HTTPRequest(method: "POST", target: try Self.target(of: form.action), headers: postHeaders,
                                  body: FormURLEncoding.encodeBytes(body))
        }
        throw WebViewSimulatorError("no redirect to \(redirectURI) after \(maximumPages) pages")
    }

    /// The path and query of an absolute URL, or the target itself if it is one already.
    static func target(of url: String) throws(WebViewSimulatorError) -> String {
        if url.hasPrefix("/") { return url }
        guard let scheme = url.firstRange(of: "://") else { throw WebViewSimulatorError("'\(url)' is neither an absolute URL nor a path") }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return "/" }
        return String(rest[slash...])
    }
}

/// Why the simulated web view stopped without reaching the app's redirect.
public struct WebViewSimulatorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the web view stopped, as a sentence.
    public let description: String
    /// An error that says why the web view stopped.
    /// - Parameter description: Why it stopped.
    public init(_ description: String) { self.description = description }
}
