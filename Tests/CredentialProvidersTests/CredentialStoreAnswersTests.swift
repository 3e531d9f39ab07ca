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
        // Admitted once: the next miss of the same answer starts over.
        #expect(!answers.admits(hash: 7, asking: ["password"]))
        #expect(answers.admits(hash: 7, asking: ["password"]))
        #expect(!answers.admits(hash: 7, asking: ["password"]))
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
