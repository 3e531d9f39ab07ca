import IdpWireFormats
import Testing

@Suite("IdpWire")
struct IdpWireTests {
    @Test("an AST client id is assigned when it holds anything but zeros and dashes")
    func assignedAstClientIds() {
        for id in [IdpWire.unassignedAstClientId, "", "0", "-", "0-0"] { #expect(!IdpWire.isAssigned(astClientId: id), "\(id)") }
        for id in ["1", "00000000-0000-0000-0000-000000000001", "0\u{301}", "é", "0 0"] { #expect(IdpWire.isAssigned(astClientId: id), "\(id)") }
    }
}
