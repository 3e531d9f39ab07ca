import CredentialProviders
import Foundation
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

private let fields = ["username", "password"]

/// The values of `user` at `generation`; the password is longer than a small string, so it has
/// storage of its own.
private func values(_ user: String, _ generation: Int) -> [String: String] {
    ["username": user, "password": "password-of-\(user)-generation-\(generation)"]
}

/// Runs `readers` OS threads that take turns with a writer `rounds` times over a store of 40
/// users: every reader answers every user three times (the second answer is kept, the third comes
/// from a copy of its own), then the writer changes the store and says what a call must now
/// answer, then every reader asks once more and records what it got if it is not that. Every wait
/// has a deadline; a missed one is recorded too.
private func takeTurns(readers: Int, rounds: Int,
                       write: @escaping @Sendable (_ store: CredentialStore, _ users: [String], _ round: Int) -> [String: [String: String]?]) async -> [String] {
    let store = CredentialStore()
    let users = (0..<40).map { "user-\($0)" }
    for user in users { store.set(values(user, 0), userId: user, tenantId: "demo") }
    // Each phase (the readers warm up, the writer writes, the readers check) begins and ends at
    // the barrier.
    let barrier = Barrier(parties: readers + 1)
    let expected = LockedValue<[String: [String: String]?]>([:])
    let wrong = LockedValue<[String]>([])
    @Sendable func meetOrRecord(_ what: String) -> Bool {
        if barrier.arriveAndWait() { return true }
        wrong.withLock { $0.append("timed out waiting for \(what)") }
        return false
    }
    await onOSThreads(readers + 1) { thread in
        if thread == readers {
            for round in 1...rounds {
                guard meetOrRecord("readers to start"), meetOrRecord("readers to warm up") else { return }
                // When: the writer changes the store, then lets the readers ask again.
                let now = write(store, users, round)
                expected.withLock { $0 = now }
                guard meetOrRecord("readers to start"), meetOrRecord("readers to check") else { return }
            }
            return
        }
        for round in 1...rounds {
            guard meetOrRecord("the writer") else { return }
            for user in users { for _ in 0..<3 { _ = store.provideCredentials(interaction(fields, userId: user)) } }
            guard meetOrRecord("the other readers"), meetOrRecord("the writer") else { return }
            // Then: each call that starts after the write returned answers what it wrote.
            for (user, want) in expected.withLock({ $0 }) {
                let answer = store.provideCredentials(interaction(fields, userId: user))
                if answer.credentials != want {
                    wrong.withLock { $0.append("round \(round), thread \(thread), \(user): \(answer) for \(want.map { "\($0)" } ?? "noCredentials")") }
                }
            }
            guard meetOrRecord("the other readers") else { return }
        }
    }
    return wrong.withLock { $0 }
}

@Suite("CredentialStore: each thread's answers follow every write")
struct PerThreadAnswerTests {
    @Test("after set returns, the next call on every OS thread answers the new values, though each answered the old ones from its own copy")
    func setIsSeenByEveryThread() async {
        let wrong = await takeTurns(readers: 4, rounds: 60) { store, users, round in
            let user = users[round % users.count]
            store.set(values(user, round), userId: user, tenantId: "demo")
            return [user: values(user, round)]
        }
        #expect(wrong == [])
    }

    @Test("after remove returns, the next call on every OS thread ends with noCredentials; a user set again is answered with the new values")
    func removeIsSeenByEveryThread() async {
        let wrong = await takeTurns(readers: 4, rounds: 60) { store, users, round in
            let user = users[round % users.count]
            if round % 2 == 1 {
                store.remove(userId: user, tenantId: "demo")
                return [user: nil]
            }
            // Back with other values, and a neighbour set again with the same ones it had.
            let neighbour = users[(round + 1) % users.count]
            store.set(values(user, round), userId: user, tenantId: "demo")
            store.set(values(neighbour, 0), userId: neighbour, tenantId: "demo")
            return [user: values(user, round), neighbour: values(neighbour, 0)]
        }
        #expect(wrong == [])
    }

    @Test("one thread answering from many stores and more users than it keeps answers each call from its own store and user")
    func manyStoresAndUsers() async {
        // More stores than a thread keeps answers for, the same user ids in each with other values,
        // and more users than a thread's table holds.
        let stores = (0..<(ThreadConfined<AnyObject>.capacity + 3)).map { _ in CredentialStore() }
        let users = (0..<2_000).map { "user-\($0)" }
        for (index, store) in stores.enumerated() {
            for user in users.prefix(index == 0 ? users.count : 20) { store.set(values(user, index), userId: user, tenantId: "demo") }
        }
        let wrong = await OSThreads.run {
            var wrong: [String] = []
            for pass in 0..<3 {
                for user in users where stores[0].provideCredentials(interaction(fields, userId: user)).credentials != values(user, 0) {
                    wrong.append("pass \(pass), store 0, \(user)")
                }
                for (index, store) in stores.enumerated() {
                    for user in users.prefix(20) where store.provideCredentials(interaction(fields, userId: user)).credentials != values(user, index) {
                        wrong.append("pass \(pass), store \(index), \(user)")
                    }
                }
            }
            return wrong
        }
        #expect(wrong == [])
    }

    @Test("a thread keeps the answers to different fields of one user apart")
    func fieldSetsApart() {
        let store = CredentialStore()
        store.set(["username": "alice", "password": "a-password-longer-than-fifteen", "pin": "1234"], userId: "alice", tenantId: "demo")
        for _ in 0..<3 {
            #expect(store.provideCredentials(interaction(["password"], userId: "alice")).credentials == ["password": "a-password-longer-than-fifteen"])
            #expect(store.provideCredentials(interaction(["username", "pin"], userId: "alice")).credentials == ["username": "alice", "pin": "1234"])
            #expect(store.provideCredentials(interaction(["username", "password", "pin"], userId: "alice")).credentials?.count == 3)
        }
    }
}

@Suite("StaticCredentials: each thread's copy")
struct StaticCopyTests {
    @Test("instances made one per call on one thread, more than it keeps copies of, each answer their own values")
    func instancePerCall() async {
        let wrong = await OSThreads.run {
            var wrong = 0
            for round in 0..<(4 * ThreadConfined<AnyObject>.capacity) {
                let provider = StaticCredentials(values("user-\(round)", round))
                for _ in 0..<3 where provider.provideCredentials(interaction(fields, userId: "x")).credentials != values("user-\(round)", round) { wrong += 1 }
            }
            return wrong
        }
        #expect(wrong == 0)
    }
}
