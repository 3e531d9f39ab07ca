@testable import IdpSdk
import IdpPrimitives
import Testing
import TestSupport

@Suite("A cancellation link cancels what the operation publishes exactly once, whichever side comes first")
struct CancellationLinkTests {
    @Test("a cancel before the publish leaves the cancelling to the publisher")
    func cancelFirst() {
        let link = CancellationLink<Int>()
        #expect(link.cancel() == nil)
        #expect(link.publish(7))
    }

    @Test("a cancel after the publish hands the payload to the handler")
    func publishFirst() {
        let link = CancellationLink<Int>()
        #expect(!link.publish(7))
        #expect(link.cancel() == 7)
    }

    @Test("a publish that is never cancelled is never cancelled")
    func publishOnly() {
        let link = CancellationLink<Int>()
        #expect(!link.publish(7))
    }

    @Test("publish and cancel racing on two OS threads: each payload is cancelled exactly once, by one side")
    func racing() async throws {
        // Given many links, each published by one thread and cancelled by another, both at once
        let links = (0..<20_000).map { _ in CancellationLink<Int>() }
        let results = try #require(await onOSThreads(2) { side -> [Int?] in
            links.indices.map { index in
                if side == 0 { return links[index].publish(index) ? index : nil }
                return links[index].cancel()
            }
        })
        // Then for every link exactly one side cancels, and it is the published payload
        for index in links.indices {
            let byPublisher = results[0][index], byHandler = results[1][index]
            #expect((byPublisher == nil) != (byHandler == nil), "link \(index): publisher \(String(describing: byPublisher)), handler \(String(describing: byHandler))")
            #expect((byPublisher ?? byHandler) == index)
        }
    }
}
