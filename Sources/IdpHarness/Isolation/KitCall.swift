import Foundation
import IdpWireFormats

/// One call of a kit entry point, as the parent and its child process both see it: the call's
/// site, the entry point, the provider's name and the configuration.
///
/// The child is the same program started again, so it makes the same calls; the key (site,
/// entry point, name and a digest of the configuration) picks out, among the kit calls the child
/// makes, the one the parent asked it to run.
struct KitCall: Sendable {
    /// The kit's public entry points.
    enum Entry: String, Sendable {
        case runPerUser = "run(makeProvider:)"
        case runShared = "run(sharedProvider:)"
        case hammerPerUser = "hammer(makeProvider:)"
        case hammerShared = "hammer(sharedProvider:)"

        /// Whether the engine's battery runs after the race hammer.
        var battery: Bool { self == .runPerUser || self == .runShared }
    }

    let entry: Entry
    let name: String
    let configuration: ProviderConformanceKit.Configuration
    /// `#fileID` of the call: "Module/File.swift".
    let fileID: String
    /// `#function` of the call: the calling function's name with its argument labels.
    let function: String
    let line: Int

    /// "Module/File.swift:42 <digest>": what the child compares with its own calls.
    var key: String {
        let digest = SHA256.hash("\(entry.rawValue)\n\(fileID):\(line)\n\(name)\n\(String(reflecting: configuration))")
        return "\(fileID):\(line) \(Hex.encode(digest.prefix(12)))"
    }

    /// The Swift Testing filter that selects the test whose body made this call: a regular
    /// expression matched against a test's id, "Module.Suite/function()/File.swift:line:column"
    /// (or "Module.function()/File.swift:line:column" for a test outside a suite).
    var testFilter: String {
        let module = fileID.split(separator: "/").first.map(String.init) ?? fileID
        let file = fileID.split(separator: "/").last.map(String.init) ?? fileID
        return "^" + Self.escaped(module) + "\\.(.*/)?" + Self.escaped(function) + "/" + Self.escaped(file) + ":"
    }

    /// `text` with every character a regular expression treats specially escaped.
    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
