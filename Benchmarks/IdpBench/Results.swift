import BenchSupport
import Foundation

/// `idp-bench results --from REPORT.json [--output FILE]`: writes RESULTS.md (the run's figures for
/// people: machine, toolchain, date, tables, targets) from a saved JSON report, to FILE or stdout.
/// Returns 0, or 1 on a usage mistake or unreadable input.
func runResults(_ arguments: [String]) -> Int32 {
    let usage = "usage: idp-bench results --from REPORT.json [--output FILE]"
    var source: String?
    var output: String?
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--from": source = iterator.next()
        case "--output": output = iterator.next()
        case "--help", "-h":
            print(usage)
            return 0
        default: fail("unknown argument '\(argument)'\n\(usage)", status: 1)
        }
    }
    guard let source, let data = FileManager.default.contents(atPath: source) else { fail("\(usage) (and the report must be readable)", status: 1) }
    let report: BenchReport
    do {
        report = try BenchReport.decode(from: data)
    } catch {
        fail("\(source): \(error)", status: 1)
    }
    let document = renderResults(report)
    guard let output else {
        print(document, terminator: "")
        return 0
    }
    do {
        try document.write(toFile: output, atomically: true, encoding: .utf8)
    } catch {
        fail("cannot write \(output): \(error)", status: 1)
    }
    return 0
}
