import IdpPrimitives
import IdpWireFormats
import IdpSdk

/// Corrupts the first credential submission of chosen flows (by trace id) on its way to the IDP,
/// so the IDP rejects it and the provider is asked again.
final class CorruptingTransport: Transport {
    let inner: any Transport
    private let pending = LockedValue<Set<String>>([])

    init(inner: any Transport) { self.inner = inner }

    func corruptFirstSubmission(of traceId: String) { _ = pending.withLock { $0.insert(traceId) } }

    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        guard request.method == "POST", request.path.hasSuffix("/login-actions/authenticate"),
              let traceParent = request.headers["traceparent"],
              let body = String(validating: request.body, as: UTF8.self),
              let pairs = try? FormURLEncoding.decode(body),
              pairs.contains(where: { $0.name == "password" }) else {
            inner.send(request, completion: completion)
            return
        }
        guard let traceId = TraceParent.traceId(of: traceParent), pending.withLock({ $0.remove(traceId) != nil }) else {
            inner.send(request, completion: completion)
            return
        }
        var corrupted = request
        corrupted.body = FormURLEncoding.encodeBytes(pairs.map { ($0.name, $0.name == "password" ? "corrupted-in-transit" : $0.value) })
        inner.send(corrupted, completion: completion)
    }
}
