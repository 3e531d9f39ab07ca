import Foundation

/// The in-process "network": which IDP answers at which base URL.
///
/// `IdpSdkService(tenantId:idpUrl:certificateChain:shouldHashPin:)` and the `MasterController` look
/// their IDP up here by URL, so the documents' initialisation code runs unchanged.
///
/// It lives below both the server and the client modules: it holds any ``Transport``, and the
/// `IdpServer` module adds `register(_:at:latency:certificate:)` for an in-process IDP, so the
/// clients never import the server.
///
/// ```swift
/// IdpNetwork.shared.register(idp, at: "https://idp.example.test", latency: .milliseconds(20))
/// ```
public final class IdpNetwork: Sendable {
    /// The process-wide network.
    public static let shared = IdpNetwork()

    struct Endpoint: Sendable {
        var transport: any Transport
        var certificate: Data?
    }

    private let endpoints = LockedValue<[String: Endpoint]>([:], label: "IdpNetwork.endpoints")

    /// An empty network of its own; most code uses ``shared``.
    public init() {}

    /// Makes `transport` answer at `url`.
    /// - Parameters:
    ///   - transport: What answers the requests sent to `url`.
    ///   - url: The IDP's base URL, as clients are given it.
    ///   - certificate: If set, clients must present a certificate chain that contains these
    ///     bytes (certificate pinning); others fail with ``TransportError/Kind/certificatePinning``.
    public func register(_ transport: any Transport, at url: String, certificate: Data? = nil) {
        endpoints.withLock { $0[Self.normalize(url)] = Endpoint(transport: transport, certificate: certificate) }
    }

    /// Removes whatever answers at `url`.
    public func unregister(_ url: String) {
        _ = endpoints.withLock { $0.removeValue(forKey: Self.normalize(url)) }
    }

    /// The transport at `url`, checked against the client's pinned certificate chain.
    public func connect(to url: String, certificateChain: Data?) -> Result<any Transport, TransportError> {
        guard let endpoint = endpoints.withLock({ $0[Self.normalize(url)] }) else {
            return .failure(TransportError(.unreachable, "no IDP answers at \(url)"))
        }
        if let expected = endpoint.certificate {
            guard let chain = certificateChain, chain.range(of: expected) != nil else {
                return .failure(TransportError(.certificatePinning, "the certificate chain does not contain the certificate of \(url)"))
            }
        }
        return .success(endpoint.transport)
    }

    static func normalize(_ url: String) -> String {
        // Already normal, the common case (a URL as registered): no lowercased copy.
        if url.utf8.last != UInt8(ascii: "/"), !url.utf8.contains(where: { (0x41...0x5A).contains($0) || $0 >= 0x80 }) {
            return url
        }
        var text = url.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
