#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import IdpPrimitives

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

    // Register and unregister change `endpoints` and bump `generation` under the lock; `connect`
    // reads `generation` and, while it has not moved, the calling thread's copy of the table, so
    // a connect writes nothing shared and takes no lock.
    private let endpoints = LockedValue<[String: Endpoint]>([:], label: "IdpNetwork.endpoints")
    private let generation = Atomic<UInt64>(0)
    /// This network's name in the threads' caches: unique for the life of the process (an
    /// object's address may be reused by a later network).
    private let id: UInt64

    private static let nextId = Atomic<UInt64>(1)

    /// An empty network of its own; most code uses ``shared``.
    public init() {
        id = Self.nextId.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Makes `transport` answer at `url`; every `connect` that begins after this returns, on any
    /// thread, finds it.
    /// - Parameters:
    ///   - transport: What answers the requests sent to `url`.
    ///   - url: The IDP's base URL, as clients are given it.
    ///   - certificate: If set, clients must present a certificate chain that contains these
    ///     bytes (certificate pinning); others fail with ``TransportError/Kind/certificatePinning``.
    public func register(_ transport: any Transport, at url: String, certificate: Data? = nil) {
        endpoints.withLock {
            $0[Self.normalize(url)] = Endpoint(transport: transport, certificate: certificate)
            generation.add(1, ordering: .releasing)
        }
    }

    /// Removes whatever answers at `url`; every `connect` that begins after this returns, on any
    /// thread, finds nothing there.
    /// - Parameter url: The base URL to remove, as it was registered.
    public func unregister(_ url: String) {
        endpoints.withLock {
            $0.removeValue(forKey: Self.normalize(url))
            generation.add(1, ordering: .releasing)
        }
    }

    /// The transport at `url`, checked against the client's pinned certificate chain.
    ///
    /// Takes no lock and writes nothing shared while the network is unchanged: it reads the
    /// network's generation and the calling thread's copy of the table, which it refreshes
    /// (under the lock) only after a `register` or `unregister`. Each thread keeps the copies of
    /// the few networks it connected to last, with the transports in them.
    /// - Parameters:
    ///   - url: The IDP's base URL.
    ///   - certificateChain: The client's pinned chain; must contain the certificate `url` was
    ///     registered with, if any.
    /// - Returns: The transport, or ``TransportError/Kind/unreachable`` when nothing answers at
    ///   `url`, or ``TransportError/Kind/certificatePinning`` when the chain does not match.
    package func connect(to url: String, certificateChain: Data?) -> Result<any Transport, TransportError> {
        guard let endpoint = endpoint(at: Self.normalize(url)) else {
            return .failure(TransportError(.unreachable, "no IDP answers at \(url)"))
        }
        if let expected = endpoint.certificate {
            guard let chain = certificateChain, chain.range(of: expected) != nil else {
                return .failure(TransportError(.certificatePinning, "the certificate chain does not contain the certificate of \(url)"))
            }
        }
        return .success(endpoint.transport)
    }

    /// What answers at `key` as of the current generation, from the calling thread's cache.
    private func endpoint(at key: String) -> Endpoint? {
        let cache = EndpointCache.current
        let latest = generation.load(ordering: .acquiring)
        if case .some(let found) = cache.endpoint(at: key, network: id, generation: latest) { return found }
        // The generation is read again under the lock, where every bump happens, so the copy and
        // its generation belong together.
        let (current, table) = endpoints.withLock { (generation.load(ordering: .relaxed), $0) }
        // A table of this thread's own (new storage, not the shared one): reading it later
        // retains and releases only memory no other thread touches.
        var own = [String: Endpoint](minimumCapacity: table.count)
        for (url, endpoint) in table { own[url] = endpoint }
        cache.store(own, generation: current, network: id)
        return own[key]
    }

    static func normalize(_ url: String) -> String {
        // Already normal, the common case (a URL as registered): no lowercased copy. Read in the
        // string's own UTF-8 storage, byte by byte.
        var bytesOfURL = url
        let normal = bytesOfURL.withUTF8 { bytes in
            guard bytes.last != UInt8(ascii: "/") else { return false }
            for index in 0..<bytes.count where (0x41...0x5A).contains(bytes[index]) || bytes[index] >= 0x80 { return false }
            return true
        }
        if normal { return url }
        var text = url.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}

/// One thread's copies of the endpoint tables of the networks it connected to last, kept in
/// thread-specific storage: only its own thread ever reaches it.
final class EndpointCache {
    typealias Copy = (generation: UInt64, endpoints: [String: IdpNetwork.Endpoint])

    /// Networks remembered per thread; the oldest is forgotten for a new one. A thread of an app
    /// talks to one or two; tests make many networks, and a forgotten one's transports are let go.
    static let capacity = 4

    private var copies: [(network: UInt64, copy: Copy)] = []

    /// What answers at `key` in the copy of `network`'s table, if the copy is of `generation`;
    /// `.none` when there is no such copy (`.some(nil)`: the copy has nothing at `key`).
    func endpoint(at key: String, network: UInt64, generation: UInt64) -> IdpNetwork.Endpoint?? {
        // The network used last is first: one comparison in the common case.
        if let first = copies.first, first.network == network {
            return first.copy.generation == generation ? .some(first.copy.endpoints[key]) : .none
        }
        guard let index = copies.firstIndex(where: { $0.network == network }) else { return .none }
        let found = copies.remove(at: index)
        copies.insert(found, at: 0)
        return found.copy.generation == generation ? .some(found.copy.endpoints[key]) : .none
    }

    /// Keeps `endpoints` as the copy of `network`'s table at `generation`.
    func store(_ endpoints: [String: IdpNetwork.Endpoint], generation: UInt64, network: UInt64) {
        copies.removeAll { $0.network == network }
        copies.insert((network, (generation, endpoints)), at: 0)
        if copies.count > Self.capacity { copies.removeLast() }
    }

    private static let caches = ThreadSpecific<EndpointCache>()

    /// The calling thread's cache, made at its first use.
    static var current: EndpointCache { caches.value { EndpointCache() } }
}

@available(*, unavailable, message: "a thread's endpoint cache belongs to its thread")
extension EndpointCache: Sendable {}
