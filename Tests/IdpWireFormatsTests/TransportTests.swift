import IdpPrimitives
import IdpWireFormats
import Testing

/// A faulty transport that answers every request twice, differently.
private struct TwiceAnsweringTransport: Transport {
    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        completion(.success(HTTPResponse(status: 200)))
        completion(.success(HTTPResponse(status: 500)))
    }
}

@Suite("Transport's async send")
struct TransportTests {
    @Test("a transport that answers twice resumes the caller once, with the first answer")
    func firstAnswerOnly() async {
        let answer = await TwiceAnsweringTransport().send(HTTPRequest(method: "GET", target: "/"))
        #expect((try? answer.get())?.status == 200)
    }
}

@Suite("IdpNetwork's addresses")
struct IdpNetworkTests {
    @Test("a URL is found whatever the case of its letters and however many slashes end it; another is not")
    func normalizedLookup() {
        let network = IdpNetwork()
        network.register(TwiceAnsweringTransport(), at: "https://Idp.Example.test/")
        for url in ["https://idp.example.test", "https://IDP.EXAMPLE.TEST", "https://idp.example.test//", "HTTPS://Idp.Example.test/"] {
            #expect((try? network.connect(to: url, certificateChain: nil).get()) != nil, "\(url)")
        }
        for url in ["https://idp.example.tes", "https://idp.example.test/x", "https://idp.example.tëst"] {
            #expect((try? network.connect(to: url, certificateChain: nil).get()) == nil, "\(url)")
        }
        network.unregister("https://idp.example.TEST")
        #expect((try? network.connect(to: "https://idp.example.test", certificateChain: nil).get()) == nil)
    }
}
