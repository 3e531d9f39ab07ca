// Lists the public symbols of the given symbol graphs that have no documentation, and exits 1 when
// there is any. Scripts/build-docs runs it on the graphs it hands to docc:
//
//   swift Scripts/DocCoverage.swift .build/…/symbolgraph/McSdk.symbols.json McSdk@IdpSdk.symbols.json …
//
// A symbol is public when its `accessLevel` is `public` or `open`. It counts as documented when
// its `docComment` has a non-blank line and that comment belongs to the symbol's own module. This
// follows what docc shows with this toolchain, run as build-docs runs it (no
// `--enable-inherited-docs`):
//
// - The compiler copies a requirement's comment into an implementation that has none, and marks
//   it with the requirement's module (`docComment.module`). When that is the symbol's own module
//   (`KSMStartResultEvent.errorCode` from `KSMResultEvent.errorCode`), docc shows the comment, so
//   the symbol counts as documented.
// - When the comment comes from another module (`description` from the standard library's
//   `CustomStringConvertible`, `provideCredentials(_:)` in CredentialProviders from IdpSdk), docc
//   drops it and the page says only "Inherited from …". Such a symbol needs its own comment.
// - A member the compiler writes itself (an enum's `init(rawValue:)`, a synthesised
//   `init(from:)`) has no `location`: there is no line to put a comment on, so it is not counted.
// - Extension blocks (`swift.extension`) are not pages of their own and are not counted.
//
// Prints one line per module (public, undocumented) and up to 40 undocumented symbols as
// `path:line: kind Type.member`.
import Foundation

struct Graph: Decodable {
    struct Module: Decodable { let name: String }
    struct Symbol: Decodable {
        struct Kind: Decodable { let identifier: String }
        struct DocComment: Decodable {
            struct Line: Decodable { let text: String }
            let module: String?
            let lines: [Line]
        }
        struct Location: Decodable {
            struct Position: Decodable { let line: Int }
            let uri: String
            let position: Position
        }
        let kind: Kind
        let pathComponents: [String]
        let accessLevel: String
        let docComment: DocComment?
        let location: Location?
    }
    let module: Module
    let symbols: [Symbol]
}

let paths = CommandLine.arguments.dropFirst()
if paths.isEmpty {
    FileHandle.standardError.write(Data("usage: swift Scripts/DocCoverage.swift <Module.symbols.json>…\n".utf8))
    exit(2)
}

let root = FileManager.default.currentDirectoryPath + "/"
var moduleOrder: [String] = []
var publicCount: [String: Int] = [:]
var undocumented: [String: [String]] = [:]
for path in paths {
    let graph: Graph
    do {
        graph = try JSONDecoder().decode(Graph.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    } catch {
        FileHandle.standardError.write(Data("DocCoverage: cannot read \(path): \(error)\n".utf8))
        exit(2)
    }
    let module = graph.module.name
    if publicCount[module] == nil { moduleOrder.append(module) }
    for symbol in graph.symbols where ["public", "open"].contains(symbol.accessLevel) {
        guard symbol.kind.identifier != "swift.extension", let location = symbol.location else { continue }
        publicCount[module, default: 0] += 1
        if let comment = symbol.docComment, (comment.module ?? module) == module,
           comment.lines.contains(where: { !$0.text.allSatisfy(\.isWhitespace) }) {
            continue
        }
        var file = location.uri.hasPrefix("file://") ? String(location.uri.dropFirst(7)) : location.uri
        if file.hasPrefix(root) { file = String(file.dropFirst(root.count)) }
        let kind = symbol.kind.identifier.hasPrefix("swift.") ? String(symbol.kind.identifier.dropFirst(6)) : symbol.kind.identifier
        undocumented[module, default: []].append(
            "\(file):\(location.position.line + 1): \(kind) \(symbol.pathComponents.joined(separator: "."))")
    }
}

var total = 0
for module in moduleOrder {
    let missing = undocumented[module, default: []].count
    total += missing
    print("\(module): \(publicCount[module, default: 0]) public symbols, \(missing) undocumented")
}
if total > 0 {
    let all = moduleOrder.flatMap { undocumented[$0, default: []] }
    for line in all.prefix(40) { print("  " + line) }
    if all.count > 40 { print("  … and \(all.count - 40) more") }
    print("DocCoverage: \(total) public symbols have no doc comment")
    exit(1)
}
