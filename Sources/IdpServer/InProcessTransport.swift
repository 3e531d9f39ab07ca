import Dispatch
import Foundation
import IdpPrimitives
import IdpWireFormats

/// A `Transport` that hands requests to an in-process ``IdpServer`` after a simulated network
/// latency.
///
/// With a latency the request is parked as a timer on a Dispatch queue (state, not a thread) and
/// handled when the timer fires; the completion then runs on a Dispatch worker thread. With zero
/// latency the request is handled and the completion called on the sending thread.
public final class InProcessTransport: Transport {
    /// The server every request is handed to.
    public let server: IdpServer
    /// The simulated round-trip time of every request.
    public let latency: Duration
    private let queue = DispatchQueue(label: "IdpServer.InProcessTransport", attributes: .concurrent)

    /// A transport to `server`.
    ///
    /// - Parameters:
    ///   - server: The server every request is handed to.
    ///   - latency: The simulated round-trip time of every request; zero by default (handled on the
    ///     sending thread).
    public init(server: IdpServer, latency: Duration = .zero) {
        self.server = server
        self.latency = latency
    }

    /// Hands `request` to the server, after ``latency`` when it is not zero.
    ///
    /// With zero latency the completion runs on the sending thread before `send` returns; otherwise
    /// on a Dispatch worker thread.
    ///
    /// - Parameters:
    ///   - request: The HTTP request.
    ///   - completion: Receives the server's response; it is never a transport failure.
    public func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        guard latency > .zero else {
            completion(.success(server.handle(request)))
            return
        }
        let server = self.server
        queue.asyncAfter(deadline: .now(plus: latency)) {
            completion(.success(server.handle(request)))
        }
    }
}

extension IdpNetwork {
    /// Makes `server` answer at `url` through an ``InProcessTransport`` with `latency`.
    ///
    /// ```swift
    /// IdpNetwork.shared.register(idp, at: "https://idp.example.test", latency: .milliseconds(20))
    /// ```
    /// - Parameters:
    ///   - server: The IDP that answers the requests sent to `url`.
    ///   - url: The IDP's base URL, as clients are given it.
    ///   - latency: The simulated round-trip time of every request (`.zero`: handled on the sending thread).
    ///   - certificate: If set, clients must present a certificate chain that contains these
    ///     bytes (certificate pinning).
    public func register(_ server: IdpServer, at url: String, latency: Duration = .zero, certificate: Data? = nil) {
        register(InProcessTransport(server: server, latency: latency), at: url, certificate: certificate)
    }
}
