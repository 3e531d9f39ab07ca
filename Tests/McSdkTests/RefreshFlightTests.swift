import Foundation
import IdpPrimitives
@testable import McSdk
import Testing

/// A controller that, when told a waiter suspends, ends the flight at that moment: what another
/// participant of a controlled run may do as soon as the waiter parks.
private final class EndsFlightWhenSuspending: ExecutionController, Sendable {
    let flight: RefreshFlight
    /// What happened, in order.
    let events = LockedValue<[String]>([])

    init(_ flight: RefreshFlight) { self.flight = flight }

    func post(_ seam: Seam, _ job: @escaping @Sendable () -> Void) { job() }
    func pause(at seam: Seam) {}

    func resumeHandOver(at seam: Seam) -> (@Sendable (@escaping @Sendable () -> Void) -> Void)? {
        events.withLock { $0.append("hand-over asked") }
        return { [events] resume in
            events.withLock { $0.append("resume handed over") }
            resume()
        }
    }

    func suspending(at seam: Seam) {
        events.withLock { $0.append("suspending") }
        flight.complete(.success("token"))
    }
}

@Suite("RefreshFlight under a controlled run")
struct RefreshFlightTests {
    @Test("a waiter is told to the controller as suspending only once its resume is arranged: a flight that ends then resumes it through the hand-over")
    func parksAfterRegistering() async throws {
        // Given a flight and a controller that ends it the moment the waiter suspends
        let flight = RefreshFlight()
        let controller = EndsFlightWhenSuspending(flight)
        // When a task waits on it
        let token = try await flight.wait(controller: controller, seam: Seam("mc.refresh.join", trace: nil))
        // Then the waiter was registered before it suspended, so the ending resumed it, once,
        // through the controller's hand-over
        #expect(token == "token")
        #expect(controller.events.withLock { $0 } == ["hand-over asked", "suspending", "resume handed over"])
    }

    @Test("a flight that ended before the waiter registered resumes it at once, through the hand-over, before it suspends")
    func endedBeforeRegistering() async throws {
        let flight = RefreshFlight()
        let controller = EndsFlightWhenSuspending(flight)
        flight.complete(.success("early"))
        let token = try await flight.wait(controller: controller, seam: Seam("mc.refresh.join", trace: nil))
        #expect(token == "early")
        #expect(controller.events.withLock { $0 } == ["hand-over asked", "resume handed over", "suspending"])
    }
}
