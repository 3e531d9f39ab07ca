import IdpPrimitives
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
