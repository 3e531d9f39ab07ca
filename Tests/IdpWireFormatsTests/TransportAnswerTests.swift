import Dispatch
import IdpWireFormats
import Testing

/// Answers on the calling thread before `send` returns, as the in-process IDP with no latency;
/// the status is the number in the request's target.
private struct AnsweringAtOnce: Transport {
    var twice = false
    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        completion(.success(HTTPResponse(status: status(of: request))))
        if twice { completion(.success(HTTPResponse(status: 599))) }
    }
}

/// Answers on a Dispatch thread, racing the caller that is about to wait; `twice`: from two
/// threads at once.
private struct AnsweringLater: Transport {
    var twice = false
    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        let status = status(of: request)
        DispatchQueue.global().async { completion(.success(HTTPResponse(status: status))) }
        if twice { DispatchQueue.global().async { completion(.success(HTTPResponse(status: status))) } }
    }
}

private func status(of request: HTTPRequest) -> Int { Int(request.target.dropFirst())! }

private func request(_ status: Int) -> HTTPRequest { HTTPRequest(method: "POST", target: "/\(status)") }

@Suite("Transport's async send: an answer given before send returned is taken at once, a later one awaited")
struct TransportAnswerTests {
    @Test("an answer delivered before the waiter looks is there at once; before it, nothing is")
    func answeredInline() throws {
        // Given a slot
        let slot = TransportAnswer()
        // Then nothing is there before the transport answers
        #expect(slot.takeIfAnswered() == nil)
        // When the transport answers
        slot.deliver(.success(HTTPResponse(status: 204)))
        // Then the waiter finds the answer without waiting
        #expect(try slot.takeIfAnswered()?.get().status == 204)
    }

    @Test("an answer that comes after the waiter looked but before it waits resumes it at once", .timeLimit(.minutes(1)))
    func answeredWhileGoingToWait() async throws {
        // Given a waiter that found no answer
        let slot = TransportAnswer()
        #expect(slot.takeIfAnswered() == nil)
        // When the answer comes before the waiter leaves its continuation
        slot.deliver(.success(HTTPResponse(status: 202)))
        // Then leaving it resumes the waiter with that answer
        let answer = await withUnsafeContinuation { slot.wait(with: $0) }
        #expect(try answer.get().status == 202)
    }

    @Test("an answer that comes after the waiter waits resumes it; a second answer is dropped", .timeLimit(.minutes(1)))
    func answeredAfterWaiting() async throws {
        let slot = TransportAnswer()
        let answer = await withUnsafeContinuation { continuation in
            slot.wait(with: continuation)
            slot.deliver(.success(HTTPResponse(status: 203)))
            slot.deliver(.success(HTTPResponse(status: 599)))
        }
        #expect(try answer.get().status == 203)
    }

    @Test("a transport that answers on the calling thread answers the request; a second answer is dropped")
    func inlineTransport() async throws {
        #expect(try await AnsweringAtOnce().send(request(200)).get().status == 200)
        #expect(try await AnsweringAtOnce(twice: true).send(request(201)).get().status == 201)
    }

    @Test("answers that race the waiter on other threads each reach their own request, once", .timeLimit(.minutes(1)))
    func answersFromOtherThreads() async {
        for twice in [false, true] {
            let statuses = await withTaskGroup(of: (Int, Int?).self) { group in
                for status in 200..<1_200 {
                    group.addTask { (status, try? await AnsweringLater(twice: twice).send(request(status)).get().status) }
                }
                var statuses: [(Int, Int?)] = []
                for await answer in group { statuses.append(answer) }
                return statuses
            }
            #expect(statuses.count == 1_000)
            #expect(statuses.allSatisfy { $0.0 == $0.1 }, "twice: \(twice)")
        }
    }
}
