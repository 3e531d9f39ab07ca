import Foundation
import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("LockoutInformation's wire form")
struct LockoutInformationTests {
    @Test("round-trips a temporary and a permanent lock")
    func roundTrip() {
        let until = Date(timeIntervalSince1970: 1_767_225_660.5)
        for lock in [LockoutInformation.temporary(until: until), .permanent] {
            let parameters = Dictionary(uniqueKeysWithValues: lock.redirectParameters)
            #expect(LockoutInformation(error: parameters["error"]!, lockedUntil: parameters["locked_until"]) == lock)
        }
        #expect(LockoutInformation.permanent.redirectParameters.map(\.0) == ["error"])
    }

    @Test("other errors and a missing or malformed locked_until are not a lock")
    func badInput() {
        #expect(LockoutInformation(error: "invalid_grant", lockedUntil: "1") == nil)
        #expect(LockoutInformation(error: "account_temporarily_locked", lockedUntil: nil) == nil)
        #expect(LockoutInformation(error: "account_temporarily_locked", lockedUntil: "soon") == nil)
        #expect(LockoutInformation(error: "account_temporarily_locked", lockedUntil: "inf") == nil)
        #expect(LockoutInformation(error: "account_permanently_locked", lockedUntil: "garbage") == .permanent)
    }
}
