import Foundation
@testable import IdpHarness
import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("The stress transport's record of an MC that gave a request up")
struct StressTransportTests {
    /// Answers every request with 200 at once.
    private struct Answering: Transport {
        func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
            completion(.success(HTTPResponse(status: 200)))
        }
    }

    private static let traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    /// A transport that loses the connection of every request of the run's one flow but those
    /// whose steps are in `through`.
    private static func transport(through: Set<Int>) -> StressTransport {
        let lost = SystemStress.Fault.transportConnectionLost.rawValue
        let plan = FaultPlan(seed: 1, rates: [lost: 1], suppressed: Set(through.map { FaultPlan.Site(fault: lost, flow: 0, step: $0) }))
        let faults = StressFaults(plan: plan, flowOfTrace: { _ in 0 }, fired: LockedValue([]))
        return StressTransport(inner: Answering(), scheduler: nil, faults: faults, monitor: nil, judgeTwins: { _, _ in { _, _ in } })
    }

    /// Sends `count` token requests with one body, one after another, and returns their results.
    private static func sendTokenRequests(_ count: Int, on transport: StressTransport) -> [Bool] {
        var headers = HTTPHeaders()
        headers.set("traceparent", traceParent)
        let request = HTTPRequest(method: "POST", target: "/auth/realms/stress/protocol/openid-connect/token", headers: headers,
                                  body: Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=a".utf8))
        return (0..<count).map { _ in
            let answer = LockedValue<Bool?>(nil)
            transport.send(request) { result in answer.withLock { $0 = (try? result.get()) != nil } }
            return answer.withLock { $0 } ?? false
        }
    }

    @Test("a resend lost again counts, though another event's request with the same body went through between the two")
    func resendAfterAnotherEventsRequest() throws {
        // A storm's token exchanges share one body: the first is lost, another event's goes
        // through, the first one's resend is lost too (the MC gives it up and restarts).
        let transport = Self.transport(through: [2])
        #expect(Self.sendTokenRequests(3, on: transport) == [false, true, false])
        #expect(transport.mcGaveUp(trace: try #require(TraceParent.seamTrace(Self.traceParent))) == 1)
    }

    @Test("one lost connection, resent and through, is no give-up")
    func resentThrough() throws {
        let transport = Self.transport(through: [2, 3])
        #expect(Self.sendTokenRequests(3, on: transport) == [false, true, true])
        #expect(transport.mcGaveUp(trace: try #require(TraceParent.seamTrace(Self.traceParent))) == 0)
    }
}
