import Foundation
import IdpPrimitives
import IdpWireFormats
import Synchronization
import Testing
import TestSupport

/// A transport told apart by its tag; never sent anything in these tests.
private struct TaggedTransport: Transport {
    let tag: String
    func send(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        completion(.success(HTTPResponse(status: 200)))
    }
}

extension IdpNetwork {
    /// The tag of the transport at `url`, or `nil` when nothing answers there.
    fileprivate func tag(at url: String) -> String? {
        (try? connect(to: url, certificateChain: nil).get()).flatMap { ($0 as? TaggedTransport)?.tag }
    }
}

@Suite("IdpNetwork's per-thread endpoint copies")
struct IdpNetworkCacheTests {
    @Test("a register that returned on one OS thread is seen by a connect on another that connected before it")
    func registerIsSeenOnAnotherThread() async {
        await OSThreads.run {
            // Given a thread that already looked the URL up (and found nothing)
            let network = IdpNetwork()
            let reader = StepThread()
            defer { reader.stop() }
            #expect(reader.run { network.tag(at: "https://idp.test") } == nil)

            // When this thread registers a transport there
            network.register(TaggedTransport(tag: "first"), at: "https://idp.test")

            // Then the reader's next connect finds it, and a replacement after that
            #expect(reader.run { network.tag(at: "https://idp.test") } == "first")
            network.register(TaggedTransport(tag: "second"), at: "https://idp.test")
            #expect(reader.run { network.tag(at: "https://idp.test") } == "second")
        }
    }

    @Test("an unregister that returned on one OS thread is seen by a connect on another that found the endpoint before")
    func unregisterIsSeenOnAnotherThread() async {
        await OSThreads.run {
            // Given a thread that found the endpoint
            let network = IdpNetwork()
            network.register(TaggedTransport(tag: "one"), at: "https://idp.test")
            network.register(TaggedTransport(tag: "other"), at: "https://other.test")
            let reader = StepThread()
            defer { reader.stop() }
            #expect(reader.run { network.tag(at: "https://idp.test") } == "one")

            // When this thread unregisters it
            network.unregister("https://idp.test")

            // Then the reader no longer finds it, and still finds the other
            #expect(reader.run { network.tag(at: "https://idp.test") } == nil)
            #expect(reader.run { network.tag(at: "https://other.test") } == "other")
        }
    }

    @Test("two networks never see each other's endpoints, also when a new network takes a dropped one's address")
    func networksAreApart() async {
        await OSThreads.run {
            // Given two networks with the same URL registered to different transports
            let left = IdpNetwork(), right = IdpNetwork()
            #expect(right.tag(at: "https://idp.test") == nil)
            left.register(TaggedTransport(tag: "left"), at: "https://idp.test")
            #expect(right.tag(at: "https://idp.test") == nil)
            right.register(TaggedTransport(tag: "right"), at: "https://idp.test")

            // Then each finds its own, on one thread, in turns
            for _ in 0..<3 {
                #expect(left.tag(at: "https://idp.test") == "left")
                #expect(right.tag(at: "https://idp.test") == "right")
            }

            // And networks made and dropped one after another (an address freed is often
            // reused at once) each find only what was registered on them
            for index in 0..<200 {
                // (Each registers before its first connect, so it is at the generation the
                // dropped one was at when this thread last read it.)
                let network = IdpNetwork()
                network.register(TaggedTransport(tag: "\(index)"), at: "https://idp-\(index).test")
                #expect(network.tag(at: "https://idp-\(index).test") == "\(index)")
                #expect(network.tag(at: "https://idp-\(index - 1).test") == nil)
            }
        }
    }

    @Test("connects on eight OS threads while another registers and unregisters find exactly what a returned register or unregister left")
    func concurrentConnectsDuringChanges() async {
        // Given a network with one fixed endpoint and one that a ninth thread adds and removes,
        // publishing each phase's start and end
        let network = IdpNetwork()
        network.register(TaggedTransport(tag: "fixed"), at: "https://fixed.test")
        let registering = Atomic<Int>(0), registered = Atomic<Int>(0), unregistering = Atomic<Int>(0), unregistered = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let mistakes = Atomic<Int>(0)
        let phases = 2_000

        // When eight threads connect to both while the ninth changes the network
        await onOSThreads(9) { thread in
            if thread == 8 {
                for phase in 1...phases {
                    registering.store(phase, ordering: .releasing)
                    network.register(TaggedTransport(tag: "toggled"), at: "https://toggled.test")
                    registered.store(phase, ordering: .releasing)
                    unregistering.store(phase, ordering: .releasing)
                    network.unregister("https://toggled.test")
                    unregistered.store(phase, ordering: .releasing)
                }
                stop.store(true, ordering: .releasing)
                return
            }
            while !stop.load(ordering: .acquiring) {
                let wasRegistered = registered.load(ordering: .acquiring), wasUnregistered = unregistered.load(ordering: .acquiring)
                let found = network.tag(at: "https://toggled.test")
                let removalStarted = unregistering.load(ordering: .acquiring), additionStarted = registering.load(ordering: .acquiring)
                // Then a phase whose register returned and whose unregister had not begun is
                // seen, and an unregister that returned with no register begun since is seen
                if wasRegistered > removalStarted, found != "toggled" { mistakes.add(1, ordering: .relaxed) }
                if additionStarted == wasUnregistered, found != nil { mistakes.add(1, ordering: .relaxed) }
                if network.tag(at: "https://fixed.test") != "fixed" { mistakes.add(1, ordering: .relaxed) }
            }
        }
        #expect(mistakes.load(ordering: .relaxed) == 0)

        // And afterwards every thread sees the final state
        await onOSThreads(8) { _ in
            if network.tag(at: "https://toggled.test") != nil || network.tag(at: "https://fixed.test") != "fixed" {
                mistakes.add(1, ordering: .relaxed)
            }
        }
        #expect(mistakes.load(ordering: .relaxed) == 0)
    }
}

