@testable import CredentialProviders
import IdpPrimitives
import IdpSdk
import Testing
import TestSupport

@Suite("CredentialStore: which answers a thread keeps")
struct CredentialStoreAnswersTests {
    @Test("an answer is admitted at its second miss, and the fingerprint is of the user and the asked fields")
    func admission() {
        let answers = CredentialStoreAnswers()
        let hash: UInt64 = 0x1234_5678_9ABC_DEF0
        #expect(!answers.admits(hash: hash, asking: ["username"]))
        #expect(!answers.admits(hash: hash, asking: ["activation-code"]))
        #expect(!answers.admits(hash: hash &+ 1, asking: ["username"]))
        #expect(answers.admits(hash: hash, asking: ["username"]))
        #expect(!answers.admits(hash: 7, asking: ["password"]))
        #expect(answers.admits(hash: 7, asking: ["password"]))
    }

    @Test("the filter forgets after its window: an answer given once per window is never admitted")
    func window() {
        let answers = CredentialStoreAnswers()
        #expect(!answers.admits(hash: 7, asking: ["password"]))
        // Other answers, each given once, until the filter has taken in a window's worth and
        // started again (some of them it admits at once: its false positives).
        var other: UInt64 = 0
        repeat {
            other += 1
            _ = answers.admits(hash: other &* 0x9E37_79B9_7F4A_7C15 &+ 1_000, asking: ["password"])
        } while answers.givenOnceTaken != 0 && other < 10 * UInt64(CredentialStoreAnswers.givenOnceWindow)
        #expect(answers.givenOnceTaken == 0)
        #expect(other >= UInt64(CredentialStoreAnswers.givenOnceWindow - 1))
        #expect(!answers.admits(hash: 7, asking: ["password"]))
    }

    @Test("users answered in a fixed rotation on one thread, more than a slot-per-fingerprint table of the same size would hold apart, are all kept from their second time")
    func rotation() async {
        let store = CredentialStore()
        let users = (0..<1_024).map { "user-\($0)" }
        for user in users { store.set(["username": user, "password": "password-of-\(user)"], userId: user, tenantId: "demo") }
        let (keptAfterFirst, keptAfterSecond, wrong) = await OSThreads.run {
            var wrong = 0, kept: [Int] = []
            for _ in 0..<3 {
                for user in users where store.provideCredentials(interaction(["username", "password"], userId: user)).credentials?["username"] != user { wrong += 1 }
                kept.append(store.answersKeptOnThisThread)
            }
            return (kept[0], kept[1], wrong)
        }
        #expect(wrong == 0)
        // The filter's false positives may keep a few at their first time.
        #expect(keptAfterFirst < users.count / 10)
        #expect(keptAfterSecond == users.count)
    }

    @Test("a user answered once per step, each step asking other fields (an activation), takes no slot; a step answered twice takes one")
    func onceTakesNoSlot() async {
        let store = CredentialStore()
        store.set(["username": "new-user", "activation-code": "123456", "password": "a-password-longer-than-fifteen"], userId: "new-user", tenantId: "demo")
        let (kept, again, answered) = await OSThreads.run {
            var answered: [[String: String]?] = []
            for field in ["username", "activation-code", "password"] {
                answered.append(store.provideCredentials(interaction([field], userId: "new-user")).credentials)
            }
            let kept = store.answersKeptOnThisThread
            answered.append(store.provideCredentials(interaction(["password"], userId: "new-user")).credentials)
            answered.append(store.provideCredentials(interaction(["password"], userId: "new-user")).credentials)
            return (kept, store.answersKeptOnThisThread, answered)
        }
        #expect(answered == [["username": "new-user"], ["activation-code": "123456"], ["password": "a-password-longer-than-fifteen"],
                             ["password": "a-password-longer-than-fifteen"], ["password": "a-password-longer-than-fifteen"]])
        #expect(kept == 0)
        #expect(again == 1)
    }
}
