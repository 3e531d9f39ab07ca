import Foundation
@testable import McSdk
import Testing
import TestSupport

@Suite("An event's trace context")
struct TraceContextSlotTests {
    static let made = TraceContext(traceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", traceState: "app=banking")

    static func context(_ number: Int) -> TraceContext {
        TraceContext(traceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-\(String(format: "%016x", number + 1))-01")
    }

    @Test("an event carries the context it was made with until one is set; a set replaces it, a later set replaces that, and setting nil leaves none")
    func setReplacesTheContextMadeWith() {
        // Given an event made with a context, and one made without
        let event = KSMGetAstClientDataEvent(tenantId: "demo", traceContext: Self.made)
        let plain = KSMGetAstClientDataEvent(tenantId: "demo")
        #expect(event.traceContext == Self.made && plain.traceContext == nil)
        // When contexts are set one after another, each read shows the last
        event.traceContext = Self.context(1)
        #expect(event.traceContext == Self.context(1))
        event.traceContext = Self.context(2)
        #expect(event.traceContext == Self.context(2))
        event.traceContext = nil
        #expect(event.traceContext == nil)
        plain.traceContext = Self.context(3)
        #expect(plain.traceContext == Self.context(3))
    }

    @Test("threads setting the contexts of the same fresh events at once each read back a context one of them set, and every event ends with one of them")
    func concurrentFirstSets() async throws {
        // Given fresh events, made with a context, that four threads set at the same time
        let threads = 4
        let events = (0..<SuiteSize.pick(200, full: 5_000)).map { _ in KSMSetAuthorisationCodeEvent(tenantId: "demo", authenticationMode: .no, authorisationCode: "c", clientId: "app", traceContext: Self.made) }
        let set = (0..<threads).map(Self.context)
        // When each thread sets its own context on every event and reads it back
        let misses = try #require(await onOSThreads(threads) { thread in
            var misses = 0
            for event in events {
                event.traceContext = set[thread]
                if let read = event.traceContext, set.contains(read) { continue }
                misses += 1
            }
            return misses
        })
        // Then no read showed the context the event was made with, or none
        #expect(misses == Array(repeating: 0, count: threads))
        #expect(events.allSatisfy { event in event.traceContext.map(set.contains) == true })
    }
}
