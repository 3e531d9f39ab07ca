import Foundation
import Testing
import TestSupport

/// The article *Products and modules* keeps, per module, the count of public types and of public
/// declarations: this test counts them from the sources and holds the article to them.
@Suite("The products article's counts are the sources' own")
struct ProductsArticleTests {
    static var packageRoot: URL { PackageFiles.root }

    /// A declaration line: attributes, then `public`.
    static var declaration: Regex<(Substring, Substring?, Substring?)> { #/^\s*(@[A-Za-z_]+(\([^)]*\))?\s+)*public\s/# }
    /// A type's declaration line.
    static var type: Regex<(Substring, Substring?, Substring?, Substring?, Substring?, Substring)> { #/^\s*(@[A-Za-z_]+(\([^)]*\))?\s+)*public\s+((final|indirect)\s+)*(class|struct|enum|protocol|actor|typealias)\s/# }

    /// Public types and public declarations in `source`.
    static func counts(in source: String) -> (types: Int, declarations: Int) {
        var types = 0, declarations = 0
        let type = Self.type, declaration = Self.declaration
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) where line.contains("public ") {
            if line.firstMatch(of: type) != nil { types += 1 }
            if line.firstMatch(of: declaration) != nil { declarations += 1 }
        }
        return (types, declarations)
    }

    /// The counts of every Swift file under `Sources/<module>`.
    static func counts(ofModule module: String) throws -> (types: Int, declarations: Int) {
        let directory = packageRoot.appendingPathComponent("Sources/\(module)")
        guard let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return (0, 0) }
        var total = (types: 0, declarations: 0)
        for case let file as URL in files where file.pathExtension == "swift" {
            let counted = counts(in: try String(contentsOf: file, encoding: .utf8))
            total.types += counted.types
            total.declarations += counted.declarations
        }
        return total
    }

    /// The article's rows: module (or "all") → (types, declarations).
    static func articleRows() throws -> [String: (types: Int, declarations: Int)] {
        let article = try String(contentsOf: packageRoot.appendingPathComponent("Sources/IdpHarness/IdpHarness.docc/ProductsAndModules.md"),
                                 encoding: .utf8)
        var rows: [String: (Int, Int)] = [:]
        for line in article.split(separator: "\n") {
            guard let match = line.firstMatch(of: #/^\| (`([A-Za-z]+)`|all) \| ([0-9,]+) \| ([0-9,]+) \|/#),
                  let types = Int(match.3.replacing(",", with: "")), let declarations = Int(match.4.replacing(",", with: "")) else { continue }
            rows[String(match.2 ?? "all")] = (types, declarations)
        }
        return rows
    }

    @Test("each module's row, and the total, match the sources")
    func rowsMatchTheSources() throws {
        let rows = try Self.articleRows()
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.packageRoot.appendingPathComponent("Sources").path)
            .filter { $0 != "ThreadSanitizerHook" && !$0.hasPrefix(".") }.sorted()
        var total = (types: 0, declarations: 0)
        for module in modules {
            let counted = try Self.counts(ofModule: module)
            total.types += counted.types
            total.declarations += counted.declarations
            let row = try #require(rows[module], "the article has no row for \(module)")
            #expect(row.types == counted.types && row.declarations == counted.declarations,
                    "\(module): the article says \(row.types) types and \(row.declarations) declarations, the sources have \(counted.types) and \(counted.declarations)")
        }
        let all = try #require(rows["all"])
        #expect(all.types == total.types && all.declarations == total.declarations, "all: \(all) against \(total)")
    }

    @Test("the count sees a new public type and declaration, and ignores internal ones")
    func countCanFail() {
        let source = """
            public struct A {
                public init() {}
                @inlinable public func f() {}
                func g() {}
            }
            public final class B {}
            struct C {}
            package enum D {}
            """
        #expect(Self.counts(in: source) == (2, 4))
    }
}
