import Foundation
import Testing
import TestSupport

/// The rule of the article *Maintaining the package* on files and functions: each names what it
/// holds, and none grows past what a reader takes in at once.
@Suite("Files and functions of the package's own code stay short")
struct SourceShapeTests {
    /// The most lines a file of `Sources/` or `Benchmarks/` has.
    static let fileLimit = 600
    /// The most lines a function, initializer or subscript has, from its first line to its
    /// closing brace.
    static let functionLimit = 80

    /// The package's own Swift files, relative to its root.
    static func ownFiles() throws -> [String] {
        var files: [String] = []
        for folder in ["Sources", "Benchmarks"] {
            let root = PackageFiles.root.appendingPathComponent(folder)
            guard let found = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in found where file.pathExtension == "swift" {
                files.append(folder + "/" + file.path.dropFirst(root.path.count + 1))
            }
        }
        return files.sorted()
    }

    /// Whether `line` opens a function, an initializer, a deinitializer or a subscript.
    static func opensFunction(_ line: String) -> Bool {
        var words = line.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        while let first = words.first, first.hasPrefix("@") || modifiers.contains(first) { words.removeFirst() }
        guard let first = words.first else { return false }
        return first == "func" || first == "deinit" || first.hasPrefix("init(") || first.hasPrefix("init<") || first.hasPrefix("init?(")
            || first.hasPrefix("subscript(") || first.hasPrefix("subscript<")
    }

    static let modifiers: Set<String> = ["private", "fileprivate", "internal", "package", "public", "open", "static", "class", "final", "override",
                                         "mutating", "nonmutating", "convenience", "required", "nonisolated", "consuming", "borrowing",
                                         "private(set)", "fileprivate(set)", "package(set)", "internal(set)"]

    /// `line` without its string literals' contents and its `//` comment.
    static func code(_ line: String) -> String {
        var kept = ""
        var inString = false, escaped = false, previous: Character = " "
        for character in line {
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "/" && previous == "/" {
                kept.removeLast()
                break
            } else {
                kept.append(character)
            }
            previous = character
        }
        return kept
    }

    /// "first line: length" for each function of `source` longer than ``functionLimit`` lines.
    static func longFunctions(in source: String) -> [String] {
        let lines = source.components(separatedBy: "\n")
        var found: [String] = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            guard opensFunction(lines[index]) else { continue }
            var depth = 0, opened = false, end = index
            scan: while end < lines.count {
                for character in code(lines[end]) {
                    if character == "{" { depth += 1; opened = true } else if character == "}" { depth -= 1 }
                    if opened && depth == 0 { break scan }
                }
                // A requirement without a body (a protocol's) ends at its line.
                if !opened && (end > index && lines[end].trimmingCharacters(in: .whitespaces).isEmpty) { break }
                end += 1
            }
            if opened, end - index + 1 > functionLimit { found.append("\(index + 1): \(end - index + 1) lines") }
        }
        return found
    }

    @Test("no file of Sources/ or Benchmarks/ is over 600 lines, and no function over 80")
    func ownCodeIsShort() throws {
        let files = try Self.ownFiles()
        #expect(files.count > 100)
        for file in files {
            let source = try String(contentsOf: PackageFiles.root.appendingPathComponent(file), encoding: .utf8)
            let lines = source.components(separatedBy: "\n").count - (source.hasSuffix("\n") ? 1 : 0)
            #expect(lines <= Self.fileLimit, "\(file): \(lines) lines")
            let long = Self.longFunctions(in: source)
            #expect(long.isEmpty, "\(file): \(long.joined(separator: "; "))")
        }
    }

    @Test("the check finds a function one line too long, with braces in strings and comments not counted")
    func checkCanFail() {
        let body = (0..<(Self.functionLimit - 2)).map { _ in "    let text = \"}\" // }" }.joined(separator: "\n")
        let fits = "    private static func shortEnough() {\n" + body + "\n    }"
        let tooLong = "    @inline(__always) mutating func tooLong() {\n" + body + "\n    let one = 1\n    }"
        #expect(Self.longFunctions(in: fits).isEmpty)
        #expect(Self.longFunctions(in: tooLong) == ["1: 81 lines"])
        #expect(Self.longFunctions(in: "protocol P {\n    func requirement()\n\n    var x: Int { get }\n}").isEmpty)
    }
}
