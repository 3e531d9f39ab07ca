import Foundation
import IdpPrimitives
@testable import McSdk
import Testing
import TestSupport

/// What an app keeps in a completion: a plain, non-Sendable object, as an Objective-C app's block
/// captures its view controller.
private final class Screen {
    var results: [String] = []
}

@Suite("The MC's completion forms")
struct McCompletionTests {
    static func configuration(_ index: Int) -> KSMConfigurationEvent {
        KSMConfigurationEvent(exporterUrl: "https://e\(index).example.test", userName: "u", password: "p", serverCertificate: Data())
    }

    @Test("events sent back to back from one thread begin in the order sent: the last configuration sent is the one kept, in every round")
    func eventsBeginInOrder() async {
        for _ in 0..<20 {
            let mc = MasterController(configuration: .init(idpUrl: "https://unused.invalid"))
            let done = LockedValue(0)
            await OSThreads.run {
                for index in 0..<50 {
                    mc.sendEvent2MasterController(Self.configuration(index)) { _ in done.withLock { $0 += 1 } }
                }
            }
            #expect(await eventually { done.withLock { $0 } == 50 })
            #expect(await mc.exporterUrl == "https://e49.example.test")
        }
    }

    @Test("a completion need not be Sendable: it may capture an app object, and runs once, on a thread that is not the sender's")
    func plainCompletion() async {
        let mc = MasterController(configuration: .init(idpUrl: "https://unused.invalid"))
        let results = await OSThreads.run { () -> [String] in
            let screen = Screen()
            let finished = Gate()
            let sender = UInt(bitPattern: Int(bitPattern: pthread_self()))
            mc.sendEvent2MasterController(Self.configuration(1)) { result in
                screen.results.append("\(type(of: result)) on \(UInt(bitPattern: Int(bitPattern: pthread_self())) == sender ? "sender" : "other")")
                finished.open()
            }
            guard finished.wait(timeout: .seconds(600)) else { return ["no completion within 600 s"] }
            // The gate orders the completion's write before this read.
            return screen.results
        }
        #expect(results == ["KSMStatusResultEvent on other"])
    }
}
