// README.md's Swift blocks are held, verbatim, by the other files of this target, which compile and
// run them; these tests check that the copies and the README agree, in both directions.
import Foundation
import Testing

@Suite("README: every Swift block is compiled and run here")
struct ReadmeBlockTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// The README's fenced Swift blocks, in order.
    static func readmeBlocks() throws -> [[String]] {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [[String]] = []
        var current: [String]?
        for line in text.components(separatedBy: "\n") {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!)
                current = nil
            } else if current != nil {
                current!.append(line)
            }
        }
        return blocks
    }

    /// A copy between `// README block begin` and `// README block end` in one of this target's files.
    struct Copy {
        let file: String
        let imports: Set<String>
        let lines: [String]
    }

    static func copies() throws -> [Copy] {
        let files = try FileManager.default.contentsOfDirectory(atPath: testsDirectory.path).filter { $0.hasSuffix(".swift") }.sorted()
        var copies: [Copy] = []
        for file in files {
            let lines = try String(contentsOf: testsDirectory.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n")
            let imports = Set(lines.filter { $0.hasPrefix("import ") })
            var copy: [String]?
            for line in lines {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed == "// README block begin" {
                    copy = []
                } else if trimmed == "// README block end", let finished = copy {
                    copies.append(Copy(file: file, imports: imports, lines: dedented(finished)))
                    copy = nil
                } else {
                    copy?.append(line)
                }
            }
        }
        return copies
    }

    /// The lines without the indentation they all share (empty lines do not count).
    static func dedented(_ lines: [String]) -> [String] {
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indent)) }
    }

    /// A block without its import lines and the empty lines that followed them.
    static func body(_ block: [String]) -> [String] {
        Array(block.filter { !$0.hasPrefix("import ") }.drop { $0.isEmpty })
    }

    static func isManifestSnippet(_ block: [String]) -> Bool { block.contains { $0.hasPrefix("// Package.swift") } }

    @Test("each Swift block of the README is held verbatim by a test file that imports what the block imports")
    func everyBlockHasACopy() throws {
        let blocks = try Self.readmeBlocks().filter { !Self.isManifestSnippet($0) }
        let copies = try Self.copies()
        #expect(blocks.count >= 4, "the README's Swift blocks were not found")
        for block in blocks {
            let matching = copies.filter { $0.lines == Self.body(block) }
            #expect(matching.count == 1, "README block starting '\(Self.body(block).first ?? "")' has \(matching.count) verbatim copies in Tests/ReadmeTests")
            for copy in matching {
                let imports = Set(block.filter { $0.hasPrefix("import ") })
                #expect(imports.isSubset(of: copy.imports), "\(copy.file) lacks \(imports.subtracting(copy.imports).sorted())")
            }
        }
    }

    @Test("every copy in Tests/ReadmeTests is still a block of the README")
    func everyCopyIsInTheReadme() throws {
        let bodies = try Self.readmeBlocks().map(Self.body)
        for copy in try Self.copies() {
            #expect(bodies.contains(copy.lines), "\(copy.file) holds a block the README no longer has")
        }
    }

    @Test("the README's Package.swift snippet names only library products this package declares")
    func manifestSnippetNamesRealProducts() throws {
        let snippet = try #require(try Self.readmeBlocks().first(where: Self.isManifestSnippet), "no Package.swift snippet in the README")
        let manifest = try String(contentsOf: Self.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let products = Self.names(after: ".library(name: \"", in: manifest.components(separatedBy: "\n"))
        let named = Self.names(after: ".product(name: \"", in: snippet)
        #expect(!named.isEmpty)
        for name in named {
            #expect(products.contains(name), "the README names the product \(name), which Package.swift does not declare")
        }
        #expect(snippet.allSatisfy { !$0.contains(".product(") || $0.contains("package: \"IdpHarness\"") })
    }

    /// The library products Package.swift declares, which are also the names of their modules.
    static func libraryProducts() throws -> Set<String> {
        let manifest = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        return Set(names(after: ".library(name: \"", in: manifest.components(separatedBy: "\n")))
    }

    /// The modules of this package that a block imports.
    static func packageImports(_ block: [String], products: Set<String>) -> Set<String> {
        Set(block.filter { $0.hasPrefix("import ") }.map { String($0.dropFirst("import ".count)) }.filter(products.contains))
    }

    @Test("each Swift example of the README imports at most three of this package's modules, and its copy here no others")
    func examplesImportAtMostThreeModules() throws {
        let products = try Self.libraryProducts()
        let blocks = try Self.readmeBlocks().filter { !Self.isManifestSnippet($0) }
        let copies = try Self.copies()
        for block in blocks {
            let imported = Self.packageImports(block, products: products)
            #expect(imported.count <= 3, "README block starting '\(Self.body(block).first ?? "")' imports \(imported.sorted())")
            for copy in copies where copy.lines == Self.body(block) {
                let copyImports = Self.packageImports(Array(copy.imports), products: products)
                #expect(copyImports == imported, "\(copy.file) imports \(copyImports.sorted()), the README block \(imported.sorted())")
            }
        }
    }

    @Test("the README's Package.swift snippet names every product its examples import")
    func manifestSnippetNamesImportedProducts() throws {
        let products = try Self.libraryProducts()
        let blocks = try Self.readmeBlocks()
        let snippet = try #require(blocks.first(where: Self.isManifestSnippet), "no Package.swift snippet in the README")
        let named = Set(Self.names(after: ".product(name: \"", in: snippet))
        let imported = blocks.filter { !Self.isManifestSnippet($0) }.reduce(into: Set<String>()) { $0.formUnion(Self.packageImports($1, products: products)) }
        #expect(imported.isSubset(of: named), "the examples import \(imported.subtracting(named).sorted()), which the snippet does not name")
    }

    /// The quoted names that follow `prefix` on the lines.
    static func names(after prefix: String, in lines: [String]) -> [String] {
        lines.compactMap { line in
            guard let start = line.range(of: prefix) else { return nil }
            return String(line[start.upperBound...].prefix { $0 != "\"" })
        }
    }
}
