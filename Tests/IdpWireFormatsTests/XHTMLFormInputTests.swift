import IdpWireFormats
import Testing

@Suite("XHTMLForm.Input.isVisible")
struct XHTMLFormInputTests {
    static let notFilledIn: Set<String> = ["hidden", "submit", "button", "reset", "image"]

    @Test("an input is visible exactly when its type is none of hidden, submit, button, reset and image")
    func visibleByType() {
        // Given the five types, the usual visible ones, near misses of the same lengths and case,
        // every one- and two-letter string over the five types' letters, and each prefix of the
        // five with every one of those letters added
        var types = ["text", "password", "email", "tel", "number", "", "HIDDEN", "Reset", "hidde", "hiddenx", "rését", "imagé", "image ", "butto\u{0}"]
        types += Array(Self.notFilledIn)
        let letters = Array(Set("hiddensubmitbuttonresetimage")).map(String.init)
        var level = [""]
        for _ in 0..<6 {
            level = level.flatMap { prefix in letters.map { prefix + $0 } }.filter { candidate in
                Self.notFilledIn.contains { $0.hasPrefix(candidate) } || candidate.count < 3
            }
            types += level
        }

        // Then each is visible exactly when it is none of the five
        for type in types {
            #expect(XHTMLForm.Input(id: "f", name: "f", type: type).isVisible == !Self.notFilledIn.contains(type), "type \(type.debugDescription)")
        }
    }
}
