#if DEBUG
import Foundation
import IdpPrimitives
import Testing
import TestSupport

/// One mechanism for every planted bug: each is a case of `PlantedBug`, says what catches it, and
/// a mutation test of the suite plants it by name.
@Suite("Every planted bug is planted by a mutation test")
struct PlantedBugCatalogueTests {
    static var testsDirectory: URL { PackageFiles.root.appendingPathComponent("Tests") }

    /// Each test file's text, except this one's.
    static func testSources() throws -> [String] {
        guard let files = FileManager.default.enumerator(at: testsDirectory, includingPropertiesForKeys: nil) else { return [] }
        var sources: [String] = []
        for case let file as URL in files where file.pathExtension == "swift" && file.lastPathComponent != "PlantedBugCatalogueTests.swift" {
            sources.append(try String(contentsOf: file, encoding: .utf8))
        }
        return sources
    }

    /// The bugs no test source names (as `.case` or `PlantedBug.case`), or that a stress test
    /// reaches only through `PlantedBug.inTheSystem`.
    static func unplanted(in sources: [String]) -> [PlantedBug] {
        PlantedBug.allCases.filter { bug in
            if bug.caughtBy == .systemStress { return !sources.contains { $0.contains("PlantedBug.inTheSystem") } }
            let name = "\(bug)"
            return !sources.contains { $0.contains(".\(name)") }
        }
    }

    @Test("each bug the stress does not catch is named by a test; the stress's are iterated")
    func everyBugIsPlanted() throws {
        let sources = try Self.testSources()
        #expect(Self.unplanted(in: sources) == [])
        #expect(!PlantedBug.inTheSystem.isEmpty)
        #expect(PlantedBug.allCases.filter { $0.caughtBy == .ownTest }.count == 17)
    }

    @Test("the check finds a bug no test names")
    func checkCanFail() {
        let withoutOne = ["PlantedBug.inTheSystem"] + PlantedBug.allCases.filter { $0 != .idpTableRetiresBeforeDrained }.map { ".\($0)" }
        #expect(Self.unplanted(in: withoutOne) == [.idpTableRetiresBeforeDrained])
    }
}
#endif
