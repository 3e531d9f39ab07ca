@testable import CredentialProviders
import IdpPrimitives
import IdpWireFormats
import IdpSdk
import Testing

/// A step asking `fields` of `userId` in `tenant`.
private func step(_ fields: [String], userId: String?, tenant: String = "demo", traceParent: String? = nil) -> IdpSdkInteractionData {
    IdpSdkInteractionData(inputFields: fields.map { IdpSdkInputField(id: $0, label: nil, isSecret: false) }, flowId: IdpSdkFlowID(rawValue: 1),
                          step: 1, attempt: 1, tenantId: tenant, clientId: "KssIdpLogin", userId: userId, traceParent: traceParent, previousError: nil)
}

private func entry(_ userId: String, tenant: String = "demo", _ values: [String: String]? = nil) -> CredentialStoreTable.Entry {
    CredentialStoreTable.Entry(tenantId: tenant, userId: userId, values: values ?? ["username": userId, "password": "pw-\(userId)"])
}

@Suite("CredentialStoreTable")
struct CredentialStoreTableTests {
    private static let asked = ["username", "password"]

    private func password(_ table: CredentialStoreTable, hash: UInt64, _ userId: String, tenant: String = "demo") -> String? {
        table.values(hash: hash, tenantId: tenant, userId: userId, asking: Self.asked)?.values["password"]
    }

    @Test("finds every user whose hash collides with others, and keeps them reachable as users in the middle of the run are removed")
    func collisions() {
        // Given: 40 users, all with the same hash, so they form one probe run that wraps around the table.
        var table = CredentialStoreTable()
        let hash: UInt64 = 0xFFFF_FFFF_FFFF_FFFF   // home slot: the last one
        let users = (0..<40).map { "user-\($0)" }
        for user in users { table.set(entry(user), hash: hash) }
        #expect(table.count == 40)
        for user in users { #expect(password(table, hash: hash, user) == "pw-\(user)") }
        #expect(password(table, hash: hash, "user-40") == nil)

        // When: every third user is removed, from the front, the middle and the end of the run.
        for user in users.enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
            let removed = table.remove(hash: hash, tenantId: "demo", userId: user)
            #expect(removed)
        }

        // Then: the others are still found, the removed ones are not, and removing twice does nothing.
        for (index, user) in users.enumerated() {
            #expect(password(table, hash: hash, user) == (index % 3 == 0 ? nil : "pw-\(user)"))
        }
        let removedTwice = table.remove(hash: hash, tenantId: "demo", userId: "user-0")
        #expect(!removedTwice)
        #expect(table.count == 26)
    }

    @Test("matches what a Dictionary holds after 20,000 random sets and removals over few hashes")
    func randomOperations() {
        // Given: 300 users spread over 7 hashes (long collision runs) with homes all over the table.
        var random = SeededRandom(seed: 12)
        var table = CredentialStoreTable()
        var model: [String: (hash: UInt64, password: String)] = [:]
        let hashes: [UInt64] = (0..<7).map { _ in random.next() | 1 }
        for round in 0..<20_000 {
            let index = Int(random.next() % 300)
            let user = "u\(index)", hash = hashes[index % hashes.count]
            if random.next() % 3 == 0 {
                let removed = table.remove(hash: hash, tenantId: "demo", userId: user)
                #expect(removed == (model.removeValue(forKey: user) != nil))
            } else {
                table.set(entry(user, ["username": user, "password": "p\(round)"]), hash: hash)
                model[user] = (hash, "p\(round)")
            }
        }
        // Then: the table agrees with the model on every user, stored or not.
        #expect(table.count == model.count)
        for index in 0..<300 {
            let user = "u\(index)"
            #expect(password(table, hash: hashes[index % hashes.count], user) == model[user]?.password)
        }
    }

    @Test("tells apart the same user id in two tenants, and the same hash for two user ids")
    func tenantAndUserMatter() {
        var table = CredentialStoreTable()
        table.set(entry("alice", tenant: "a", ["username": "alice", "password": "in-a"]), hash: 5)
        table.set(entry("alice", tenant: "b", ["username": "alice", "password": "in-b"]), hash: 5)
        table.set(entry("bob", tenant: "a", ["username": "bob", "password": "bob-a"]), hash: 5)
        #expect(password(table, hash: 5, "alice", tenant: "a") == "in-a")
        #expect(password(table, hash: 5, "alice", tenant: "b") == "in-b")
        #expect(password(table, hash: 5, "bob", tenant: "b") == nil)
        table.remove(hash: 5, tenantId: "a", userId: "alice")
        #expect(password(table, hash: 5, "alice", tenant: "a") == nil)
        #expect(password(table, hash: 5, "alice", tenant: "b") == "in-b")
        #expect(password(table, hash: 5, "bob", tenant: "a") == "bob-a")
    }

    @Test("says the values answer a step as they are only when they are exactly the asked fields, in any order")
    func exactAnswers() {
        let two = entry("alice", ["password": "pw", "username": "alice"])
        #expect(two.fieldIds.first == "username")   // the order forms ask in
        #expect(two.answersExactly(["username", "password"]))
        #expect(two.answersExactly(["password", "username"]))
        #expect(!two.answersExactly(["username"]))
        #expect(!two.answersExactly(["username", "password", "otp"]))
        #expect(!two.answersExactly(["username", "username"]))
        #expect(!two.answersExactly(["username", "otp"]))
        let three = entry("carl", ["a": "1", "b": "2", "c": "3"])
        #expect(three.answersExactly(["c", "a", "b"]))
        #expect(!three.answersExactly(["c", "a", "a"]))
        #expect(entry("nobody", [:]).answersExactly([]))
    }

    @Test("answers users with the same fields, listed in different dictionary orders, with their values as they are")
    func sharedFieldIds() {
        var table = CredentialStoreTable()
        for index in 0..<50 { table.set(entry("user-\(index)", ["username": "u", "password": "p", "otp-\(index % 2)": "o"]), hash: UInt64(index + 1)) }
        let found = (0..<50).compactMap { index in
            table.values(hash: UInt64(index + 1), tenantId: "demo", userId: "user-\(index)", asking: ["username", "password", "otp-\(index % 2)"])
        }
        #expect(found.count == 50)
        #expect(found.allSatisfy { $0.exact })
    }

    @Test("hashes every byte of an id, from the seed, and never returns 0")
    func hash() {
        let id = String(repeating: "user-0123456789@corp.example.com/", count: 2)
        let base = CredentialStoreTable.hash(id, seed: 1)
        var bytes = Array(id.utf8)
        for index in bytes.indices {
            bytes[index] ^= 0x01
            #expect(CredentialStoreTable.hash(String(decoding: bytes, as: UTF8.self), seed: 1) != base, "byte \(index) is not hashed")
            bytes[index] ^= 0x01
        }
        #expect(CredentialStoreTable.hash(id, seed: 2) != base)
        for length in 0..<20 { #expect(CredentialStoreTable.hash(String(repeating: "x", count: length), seed: 0) != 0) }
        #expect(CredentialStoreTable.hash("ab", seed: 1) != CredentialStoreTable.hash("ba", seed: 1))
    }
}

@Suite("CredentialStore lookups")
struct CredentialStoreLookupTests {
    @Test("answers the same user id of two tenants with each tenant's values")
    func tenants() {
        let store = CredentialStore()
        store.set(["username": "alice", "password": "pw-a"], userId: "alice", tenantId: "a")
        store.set(["username": "alice", "password": "pw-b"], userId: "alice", tenantId: "b")
        #expect(store.provideCredentials(step(["username", "password"], userId: "alice", tenant: "a")).credentials?["password"] == "pw-a")
        #expect(store.provideCredentials(step(["username", "password"], userId: "alice", tenant: "b")).credentials?["password"] == "pw-b")
        store.remove(userId: "alice", tenantId: "a")
        #expect(store.provideCredentials(step(["username"], userId: "alice", tenant: "a")).error
            == CredentialProviderError.make(.noCredentials, "no credentials for user 'alice' of tenant 'a'"))
        #expect(store.provideCredentials(step(["password"], userId: "alice", tenant: "b")).credentials == ["password": "pw-b"])
        #expect(store.count == 1)
    }

    @Test("answers only the asked fields of a user with more values, and names the first asked field it lacks")
    func otherFields() {
        let store = CredentialStore()
        store.set(["username": "alice", "password": "pw", "otp": "123"], userId: "alice", tenantId: "demo")
        #expect(store.provideCredentials(step(["password", "username"], userId: "alice")).credentials == ["username": "alice", "password": "pw"])
        #expect(store.provideCredentials(step(["otp", "password", "username"], userId: "alice")).credentials == ["username": "alice", "password": "pw", "otp": "123"])
        #expect(store.provideCredentials(step(["username", "pin"], userId: "alice")).error
            == CredentialProviderError.make(.missingValue, "no value for field 'pin' of user 'alice' of tenant 'demo'"))
        // Replaced by fewer values: the new entry's fields decide.
        store.set(["username": "alice"], userId: "alice", tenantId: "demo")
        #expect(store.provideCredentials(step(["username"], userId: "alice")).credentials == ["username": "alice"])
        #expect(store.provideCredentials(step(["username", "password"], userId: "alice")).error?.credentialProviderCode == .missingValue)
        #expect(store.count == 1)
    }

    @Test("answers an activation from the user its trace is bound to now, and not after unbinding")
    func rebinding() {
        let store = CredentialStore()
        store.set(["username": "alice"], userId: "alice", tenantId: "demo")
        store.set(["username": "bob"], userId: "bob", tenantId: "demo")
        let trace = TraceParent.random()
        let activation = step(["username"], userId: nil, traceParent: trace.description)
        store.bind(traceId: trace.traceId, toUser: "alice", tenantId: "demo")
        #expect(store.provideCredentials(activation).credentials == ["username": "alice"])
        store.bind(traceId: trace.traceId, toUser: "bob", tenantId: "demo")
        #expect(store.provideCredentials(activation).credentials == ["username": "bob"])
        // Bound to a user of another tenant: that tenant's entry, which does not exist.
        store.bind(traceId: trace.traceId, toUser: "bob", tenantId: "other")
        #expect(store.provideCredentials(activation).error?.credentialProviderCode == .noCredentials)
        store.unbind(traceId: trace.traceId)
        #expect(store.provideCredentials(activation).error
            == CredentialProviderError.make(.noCredentials, "no credentials for user '(activation)' of tenant 'demo'"))
        #expect(store.description == "CredentialStore(users: 2, trace bindings: 0)")
    }

    @Test("keeps 5,000 users with long ids that differ only in the middle, and forgets exactly the removed ones")
    func manyUsers() {
        let store = CredentialStore()
        let ids = (0..<5_000).map { "employee-\($0)-of-the-example-corporation@example.com" }
        for id in ids { store.set(["username": id, "password": "pw-\(id)"], userId: id, tenantId: "demo") }
        #expect(store.count == 5_000)
        for id in ids.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) { store.remove(userId: id, tenantId: "demo") }
        #expect(store.count == 2_500)
        for (index, id) in ids.enumerated() {
            let answer = store.provideCredentials(step(["username", "password"], userId: id))
            if index % 2 == 0 {
                #expect(answer.error?.credentialProviderCode == .noCredentials)
            } else {
                #expect(answer.credentials == ["username": id, "password": "pw-\(id)"])
            }
        }
    }
}
