@testable import CredentialProviders
import Foundation
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import Synchronization
import Testing
import TestSupport

/// A step asking `fields` of `userId` (or, with `userId` nil, of the user bound to `traceParent`).
private func ask(_ fields: [String], userId: String?, traceParent: String? = nil) -> IdpSdkInteractionData {
    IdpSdkInteractionData(inputFields: fields.map { IdpSdkInputField(id: $0, label: nil, isSecret: false) }, flowId: IdpSdkFlowID(rawValue: 1),
                          step: 1, attempt: 1, tenantId: "demo", clientId: "KssIdpLogin", userId: userId, traceParent: traceParent, previousError: nil)
}

/// The values of `user` at `generation`: every value names both, and the password is longer than
/// a small string, so that it has storage of its own.
private func values(_ user: String, _ generation: Int) -> [String: String] {
    ["username": user, "password": "password-of-\(user)-generation-\(generation)", "pin": "pin-\(user)-\(generation)"]
}

private let asked = ["username", "password", "pin"]

/// Whether `answer` is one whole value set of `user` (any generation): no mix of generations,
/// nothing of another user.
private func isWhole(_ answer: [String: String], of user: String) -> Bool {
    guard answer.count == 3, answer["username"] == user, let pin = answer["pin"], pin.hasPrefix("pin-\(user)-"),
          let generation = Int(pin.dropFirst("pin-\(user)-".count)) else { return false }
    return answer == values(user, generation)
}

@Suite("CredentialStore and StaticCredentials under concurrent reads and writes", .heavy)
struct StripedProviderTests {
    @Test("8 OS threads reading while another sets, removes and rebinds get only whole value sets of the asked user")
    func wholeAnswersUnderWrites() async {
        // Given: 12 users (a small table, so removals shift probe runs), each with generation 0,
        // and a trace bound to user-0.
        let store = CredentialStore()
        let users = (0..<12).map { "user-\($0)" }
        for user in users { store.set(values(user, 0), userId: user, tenantId: "demo") }
        let trace = TraceParent.random()
        store.bind(traceId: trace.traceId, toUser: "user-0", tenantId: "demo")
        let readersLeft = Atomic<Int>(8)
        let wrong = LockedValue<[String]>([])

        // When: one thread writes until 8 readers are done, each reading every user and the trace.
        await onOSThreads(9) { thread in
            if thread == 8 {
                var generation = 0
                while readersLeft.load(ordering: .acquiring) > 0 {
                    generation += 1
                    let user = users[generation % users.count]
                    if generation % 5 == 0 {
                        store.remove(userId: user, tenantId: "demo")
                    } else {
                        store.set(values(user, generation), userId: user, tenantId: "demo")
                    }
                    store.bind(traceId: trace.traceId, toUser: generation % 2 == 0 ? "user-0" : "user-1", tenantId: "demo")
                }
                return
            }
            for round in 0..<3_000 {
                let user = users[(round &* 7 &+ thread) % users.count]
                let answer = store.provideCredentials(ask(asked, userId: user))
                if let credentials = answer.credentials {
                    if !isWhole(credentials, of: user) { wrong.withLock { $0.append("\(user): \(credentials)") } }
                } else if answer.error?.credentialProviderCode != .noCredentials {
                    wrong.withLock { $0.append("\(user): \(answer)") }
                }
                let activation = store.provideCredentials(ask(asked, userId: nil, traceParent: trace.description))
                if let credentials = activation.credentials {
                    if !isWhole(credentials, of: "user-0") && !isWhole(credentials, of: "user-1") {
                        wrong.withLock { $0.append("activation: \(credentials)") }
                    }
                } else if activation.error?.credentialProviderCode != .noCredentials {
                    wrong.withLock { $0.append("activation: \(activation)") }
                }
            }
            readersLeft.wrappingSubtract(1, ordering: .releasing)
        }

        // Then: no answer mixed generations or users.
        #expect(wrong.withLock { $0 } == [])
    }

    @Test("after set returns, the next call on every thread answers the new values, though each had just answered the old ones")
    func setIsSeenAtOnce() async {
        // Given: one user, and 8 threads that take turns with a writer: all 8 answer, then the
        // writer sets the next generation, then all 8 answer again.
        let store = CredentialStore()
        store.set(values("alice", 0), userId: "alice", tenantId: "demo")
        let rounds = 300
        let readers = 8
        // Each phase (the readers answer, or the writer sets) begins and ends at the barrier.
        let barrier = Barrier(parties: readers + 1)
        let generation = LockedValue(0)
        let stale = LockedValue<[String]>([])

        await onOSThreads(readers + 1) { thread in
            if thread == readers {
                for round in 1...rounds {
                    // The readers cache generation round - 1 ...
                    guard barrier.arriveAndWait(), barrier.arriveAndWait() else { return }
                    // When: the writer sets generation `round` ...
                    store.set(values("alice", round), userId: "alice", tenantId: "demo")
                    generation.withLock { $0 = round }
                    // Then: every reader's next answer is it.
                    guard barrier.arriveAndWait(), barrier.arriveAndWait() else { return }
                }
                return
            }
            for _ in 0..<(2 * rounds) {
                guard barrier.arriveAndWait() else {
                    stale.withLock { $0.append("thread \(thread): timed out waiting for the writer") }
                    return
                }
                let expected = values("alice", generation.withLock { $0 })
                let answer = store.provideCredentials(ask(asked, userId: "alice")).credentials
                if answer != expected { stale.withLock { $0.append("thread \(thread): \(answer ?? [:]) for \(expected)") } }
                guard barrier.arriveAndWait() else {
                    stale.withLock { $0.append("thread \(thread): timed out waiting for the other readers") }
                    return
                }
            }
        }
        #expect(stale.withLock { $0 } == [])
    }

    @Test("a removal that moves users to other slots never answers a user with another user's values")
    func removalMovesUsers() {
        // Given: 100 users, each answered once, so every stripe used has their answers cached.
        let store = CredentialStore()
        let users = (0..<100).map { "user-\($0)" }
        for user in users { store.set(values(user, 1), userId: user, tenantId: "demo") }
        for user in users { _ = store.provideCredentials(ask(asked, userId: user)) }

        // When: every third user is removed (removals shift the users after them in a probe run).
        for user in users.enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) { store.remove(userId: user, tenantId: "demo") }

        // Then: each remaining user gets their own values, each removed one noCredentials.
        for (index, user) in users.enumerated() {
            let answer = store.provideCredentials(ask(asked, userId: user))
            if index % 3 == 0 {
                #expect(answer.error?.credentialProviderCode == .noCredentials)
            } else {
                #expect(answer.credentials == values(user, 1), "\(user)")
            }
        }
    }

    @Test("answers an asked subset and a missing field, on a first and a repeated call")
    func subsetsAndMissingFields() {
        let store = CredentialStore()
        store.set(["username": "alice", "password": "a-password-longer-than-fifteen"], userId: "alice", tenantId: "demo")
        for _ in 0..<2 {
            #expect(store.provideCredentials(ask(["password"], userId: "alice")).credentials == ["password": "a-password-longer-than-fifteen"])
            #expect(store.provideCredentials(ask(["password", "username"], userId: "alice")).credentials
                == ["username": "alice", "password": "a-password-longer-than-fifteen"])
            #expect(store.provideCredentials(ask(["username", "otp"], userId: "alice")).error
                == CredentialProviderError.make(.missingValue, "no value for field 'otp' of user 'alice' of tenant 'demo'"))
        }
    }

    @Test("StaticCredentials answers 8 threads at once with its values, exactly the asked fields")
    func staticCopies() async {
        let provider = StaticCredentials(values("alice", 3))
        let wrong = LockedValue(0)
        await onOSThreads(8) { _ in
            let all = ask(asked, userId: "alice"), pin = ask(["pin"], userId: "alice")
            let allExpected = values("alice", 3), pinExpected = ["pin": "pin-alice-3"]
            for _ in 0..<1_000 {
                if provider.provideCredentials(all).credentials != allExpected { wrong.withLock { $0 += 1 } }
                if provider.provideCredentials(pin).credentials != pinExpected { wrong.withLock { $0 += 1 } }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
    }

}
