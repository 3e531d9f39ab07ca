import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("FormParameters")
struct FormParametersTests {
    @Test("looks values up by name and keeps the order the pairs came in")
    func lookup() throws {
        let parameters = try FormParameters(uniquelyNamed: FormURLEncoding.decode("code=abc&state=x+y&empty=&flag"))
        #expect(parameters["code"] == "abc")
        #expect(parameters["state"] == "x y")
        #expect(parameters["empty"] == "")
        #expect(parameters["flag"] == "")
        #expect(parameters["missing"] == nil)
        #expect(parameters["Code"] == nil, "names are compared exactly")
        #expect(parameters.pairs.map(\.name) == ["code", "state", "empty", "flag"])
        #expect(parameters.count == 4)
        #expect(FormParameters().isEmpty)
    }

    @Test("a repeated name is refused, named, at every size, before and after the set of names takes over")
    func repeatedNames() {
        for count in [2, 15, 16, 17, 100, 1_000] {
            let unique = (0..<count).map { (name: "p\($0)", value: "\($0)") }
            // Every name kept, every value found, with no false repeat.
            let parameters = try? FormParameters(uniquelyNamed: unique)
            #expect(parameters?.count == count)
            #expect(parameters?["p\(count - 1)"] == "\(count - 1)")
            #expect(parameters?["p0"] == "0")
            // A repeat of an early name and of the last one, wherever it falls.
            for repeated in ["p0", "p\(count - 1)"] {
                #expect(throws: FormParameters.RepeatedName(name: repeated)) {
                    try FormParameters(uniquelyNamed: unique + [(name: repeated, value: "again")])
                }
            }
        }
    }

    @Test("append refuses a present name and leaves the parameters as they were")
    func appendRefusesARepeat() {
        var parameters = FormParameters()
        for index in 0..<20 {
            let added = parameters.append(name: "n\(index)", value: "v\(index)")
            #expect(added)
        }
        for index in [0, 15, 19] {
            let added = parameters.append(name: "n\(index)", value: "other")
            #expect(!added)
            #expect(parameters["n\(index)"] == "v\(index)")
        }
        #expect(parameters.count == 20)
        #expect(FormParameters.RepeatedName(name: "state").description == "parameter 'state' is given more than once")
    }
}
